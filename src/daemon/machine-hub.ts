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

/**
 * A transition as the hub recorded it: numbered daemon-wide from 1, in the order the daemon saw
 * them. The live feed uses the number as its SSE id, and the inspector to tell a transition it has
 * from one it has not (two can share machine, state, event and millisecond).
 */
export interface RecordedTransition extends Transition {
  n: number;
}

/** Transitions kept per session. */
const KEEP = 500;
/**
 * Sessions whose history is kept, the most recently active ones: the daemon outlives its sessions,
 * and histories of sessions long gone must not pile up (10,000 sessions × 500 would be ~0.5 GB).
 * Current states are kept for every session until it is deleted (a few strings each, as the index).
 */
const KEEP_SESSIONS = 2000;
/** State and event names are few; each arrives as a fresh string from the control channel. */
const MAX_NAMES = 10_000;
/**
 * Child machine states in which no process runs the session. Its session and turn machines live in
 * that process and end with it: their last states are history then, not current states (kept as
 * current, a child killed mid-turn left its session `running` after its restart).
 */
export const NO_PROCESS_STATES: ReadonlySet<string> = new Set(['spawning', 'restarting', 'backoff', 'failed', 'idleStopped', 'exited']);

export class MachineHub {
  private readonly current = new Map<string, Partial<Record<Transition['machine'], string>>>();
  /** Least recently active first. */
  private readonly history = new Map<string, RecordedTransition[]>();
  private readonly listeners = new Set<(sessionId: string, t: RecordedTransition) => void>();
  private readonly forgetListeners = new Set<(sessionId: string) => void>();
  private next = 1;
  private readonly names = new Map<string, string>();

  constructor(private readonly limits = { perSession: KEEP, sessions: KEEP_SESSIONS }) {}

  record(sessionId: string, t: Transition): void {
    const state = this.name(t.state);
    const cur = this.current.get(sessionId) ?? {};
    cur[t.machine] = state;
    // A session machine starts (a process opened the session again): it has no turn until it starts one.
    if (t.machine === 'session' && t.event === 'init') delete cur.turn;
    if (t.machine === 'child' && NO_PROCESS_STATES.has(state)) {
      delete cur.session;
      delete cur.turn;
    }
    this.current.set(sessionId, cur);
    const compact: RecordedTransition = { n: this.next++, machine: t.machine, state, event: this.name(t.event), at: t.at };
    const list = this.history.get(sessionId) ?? [];
    this.history.delete(sessionId);
    list.push(compact);
    if (list.length > this.limits.perSession) list.splice(0, list.length - this.limits.perSession);
    this.history.set(sessionId, list);
    if (this.history.size > this.limits.sessions) this.history.delete(this.history.keys().next().value!);
    for (const l of this.listeners) l(sessionId, compact);
  }

  /** A session deleted: its states and history go, and those who follow its transitions are told (`onForget`). */
  forget(sessionId: string): void {
    this.history.delete(sessionId);
    this.current.delete(sessionId);
    for (const l of this.forgetListeners) l(sessionId);
  }

  /**
   * The current state of each machine of the session that exists: no `session` and `turn` while no
   * process runs the session (NO_PROCESS_STATES), and no `turn` after its session machine started
   * until it starts a turn. Empty for a session this daemon has seen no transition of.
   */
  states(sessionId: string): Partial<Record<Transition['machine'], string>> {
    return { ...(this.current.get(sessionId) ?? {}) };
  }

  /** The number of the latest transition recorded (0: none yet). */
  get lastN(): number {
    return this.next - 1;
  }

  transitions(sessionId: string): RecordedTransition[] {
    return [...(this.history.get(sessionId) ?? [])];
  }

  listen(listener: (sessionId: string, t: RecordedTransition) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Called with each session forgotten (deleted), after its last transition was recorded. */
  onForget(listener: (sessionId: string) => void): () => void {
    this.forgetListeners.add(listener);
    return () => this.forgetListeners.delete(listener);
  }

  private name(s: string): string {
    const known = this.names.get(s);
    if (known !== undefined) return known;
    if (this.names.size < MAX_NAMES) this.names.set(s, s);
    return s;
  }
}
