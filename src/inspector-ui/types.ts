/**
 * The shapes the inspector page reads from the management API. Declared here (not imported from
 * src/machines or src/core) because the page is its own program: it runs in a browser and talks to
 * the daemon over HTTP only.
 */
export interface TransitionDescription {
  event: string;
  targets: string[];
  guard?: string;
}

export interface StateDescription {
  path: string;
  key: string;
  type: 'atomic' | 'compound' | 'parallel' | 'final' | 'history';
  initial?: string;
  invokes: string[];
  transitions: TransitionDescription[];
  states: StateDescription[];
}

export interface MachineDescription {
  id: string;
  root: StateDescription;
}

export type MachineName = 'session' | 'turn' | 'child';

/** An AgentEvent as the log feed sends it (spec/events.md); the page reads a few fields. */
export interface LogEvent {
  seq: number;
  ts: number;
  type: string;
  sessionId: string;
  turnId?: string;
  [field: string]: unknown;
}

/** A live transition from the daemon's machine hub. */
export interface LiveTransition {
  n?: number;
  sessionId?: string;
  machine: MachineName;
  state: string;
  event: string;
  at: number;
}

/** A transition rebuilt from the log, with the event that caused it. */
export interface ReplayedTransition {
  machine: 'session' | 'turn';
  state: string;
  event: string;
  at: number;
  seq: number;
  cause: LogEvent;
}

export interface SessionRow {
  id: string;
  cwd: string;
  title?: string;
  model: string;
  mode: string;
  createdAt: number;
  updatedAt: number;
  status: string;
  lastSeq: number;
  child: { state: string; pid: number | null; restarts: number } | null;
  connections: number;
}

export type States = Partial<Record<MachineName, string>>;
