/**
 * What the daemon knows of each session's machines: the current state of the session, turn and
 * supervised-child machines, and the latest transitions (bounded), for the management API and the
 * inspector's live feed.
 */
export interface Transition {
  machine: 'session' | 'turn' | 'child';
  state: string;
  event: string;
  at: number;
}

/** Transitions kept per session. */
const KEEP = 500;
/**
 * Sessions whose history is kept, the most recently active ones: the daemon outlives its sessions,
 * and histories of sessions long gone must not pile up (10,000 sessions × 500 would be ~0.5 GB).
 */
const KEEP_SESSIONS = 2000;
/** State and event names are few; each arrives as a fresh string from the control channel. */
const MAX_NAMES = 10_000;

export class MachineHub {
  private readonly current = new Map<string, Partial<Record<Transition['machine'], string>>>();
  /** Least recently active first. */
  private readonly history = new Map<string, Transition[]>();
  private readonly listeners = new Set<(sessionId: string, t: Transition) => void>();
  private readonly names = new Map<string, string>();

  constructor(private readonly limits = { perSession: KEEP, sessions: KEEP_SESSIONS }) {}

  record(sessionId: string, t: Transition): void {
    const state = this.name(t.state);
    const cur = this.current.get(sessionId) ?? {};
    cur[t.machine] = state;
    this.current.set(sessionId, cur);
    const compact: Transition = { machine: t.machine, state, event: this.name(t.event), at: t.at };
    const list = this.history.get(sessionId) ?? [];
    this.history.delete(sessionId);
    list.push(compact);
    if (list.length > this.limits.perSession) list.splice(0, list.length - this.limits.perSession);
    this.history.set(sessionId, list);
    if (this.history.size > this.limits.sessions) this.history.delete(this.history.keys().next().value!);
    for (const l of this.listeners) l(sessionId, compact);
  }

  states(sessionId: string): Partial<Record<Transition['machine'], string>> {
    return { ...(this.current.get(sessionId) ?? {}) };
  }

  transitions(sessionId: string): Transition[] {
    return [...(this.history.get(sessionId) ?? [])];
  }

  listen(listener: (sessionId: string, t: Transition) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private name(s: string): string {
    const known = this.names.get(s);
    if (known !== undefined) return known;
    if (this.names.size < MAX_NAMES) this.names.set(s, s);
    return s;
  }
}
