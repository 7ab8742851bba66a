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

const KEEP = 500;

export class MachineHub {
  private readonly current = new Map<string, Partial<Record<Transition['machine'], string>>>();
  private readonly history = new Map<string, Transition[]>();
  private readonly listeners = new Set<(sessionId: string, t: Transition) => void>();

  record(sessionId: string, t: Transition): void {
    const cur = this.current.get(sessionId) ?? {};
    cur[t.machine] = t.state;
    this.current.set(sessionId, cur);
    const list = this.history.get(sessionId) ?? [];
    list.push(t);
    if (list.length > KEEP) list.splice(0, list.length - KEEP);
    this.history.set(sessionId, list);
    for (const l of this.listeners) l(sessionId, t);
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
}
