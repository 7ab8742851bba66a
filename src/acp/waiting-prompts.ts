/**
 * Prompts received and not yet handed to their session's engine (waiting for the session to open,
 * its MCP servers to start, or an MCP command to expand), by session. A `session/cancel` ends them
 * `cancelled` without running, as it does the ones the engine has: they were sent before it.
 */
export class WaitingPrompts {
  private readonly bySession = new Map<string, Set<{ cancelled: boolean }>>();

  /** A prompt of `sessionId` starts waiting: its flag, and `done` once it is handed on (or answered). */
  add(sessionId: string): { waiting: { cancelled: boolean }; done: () => void } {
    const waiting = { cancelled: false };
    let set = this.bySession.get(sessionId);
    if (!set) this.bySession.set(sessionId, (set = new Set()));
    set.add(waiting);
    const done = () => {
      set.delete(waiting);
      if (set.size === 0 && this.bySession.get(sessionId) === set) this.bySession.delete(sessionId);
    };
    return { waiting, done };
  }

  cancel(sessionId: string): void {
    for (const waiting of this.bySession.get(sessionId) ?? []) waiting.cancelled = true;
  }
}
