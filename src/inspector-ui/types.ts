/**
 * The shapes the inspector page reads from the management API. The page is its own program (it runs
 * in a browser and talks to the daemon over HTTP only), so it takes troupe's types with `import type`
 * only: they vanish from the compiled page.
 */
import type { SessionEntry } from '../store/session-summary.js';

export type { MachineDescription, StateDescription, TransitionDescription } from '../machines/serialize.js';

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
  /** The daemon's number of the transition (MachineHub), increasing in the order it saw them. */
  n: number;
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

/** An answer of GET /v1/sessions/:id/replay (docs/inspector.md). */
export interface ReplayAnswer {
  replayId: string;
  after: number;
  lastSeq: number;
  transitions: ReplayedTransition[];
  live: LiveTransition[];
}

/** A session as GET /v1/sessions lists it: the index entry, its child and its connections. */
export interface SessionRow extends SessionEntry {
  child: { state: string; pid: number | null; restarts: number } | null;
  connections: number;
  /** The daemon's current states of the session's machines (MachineHub.states), once it has seen them. */
  machines?: Partial<Record<MachineName, string>>;
}

export type States = Partial<Record<MachineName, string>>;
