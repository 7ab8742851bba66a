/**
 * The unload of sessions nothing has used for a while (HostOptions.idleUnloadMs), as `session/close`
 * does: the next request for one opens it again from its log. For a long-lived `troupe acp` (an
 * editor's), whose sessions would otherwise stay in memory until it exits.
 */
import type { Logger } from '../core/ports.js';

/** What the sweep needs of its host (SessionHost). */
export interface IdleSessions {
  /** The sessions open now, and whether each is idle (no turn runs or waits). */
  live(): Iterable<[string, { engine: { idle: boolean } }]>;
  /** Whether a request is opening the session or its MCP servers start. */
  inUse(sessionId: string): boolean;
  unload(sessionId: string): Promise<void>;
}

export class IdleUnload {
  /** When each live session was last asked for, or ended a turn (ms since epoch). */
  private readonly lastUsed = new Map<string, number>();
  private readonly sweep: NodeJS.Timeout;

  constructor(
    private readonly idleMs: number,
    private readonly sessions: IdleSessions,
    private readonly logger: Logger,
  ) {
    // A sweep a few times per idle period: a session goes at most a quarter of it late.
    this.sweep = setInterval(() => this.unloadIdle(), Math.max(50, Math.min(idleMs / 4, 60_000)));
    this.sweep.unref();
  }

  /** The session was used now. */
  touch(sessionId: string): void {
    this.lastUsed.set(sessionId, Date.now());
  }

  /** The session is no longer live here. */
  forget(sessionId: string): void {
    this.lastUsed.delete(sessionId);
  }

  /** No sweep from now on (the host's shutdown). */
  stop(): void {
    clearInterval(this.sweep);
  }

  private unloadIdle(): void {
    const { idleMs } = this;
    const now = Date.now();
    for (const [sessionId, live] of this.sessions.live()) {
      // Not while a request is opening it or its MCP servers start (slow servers can take longer than
      // the idle time): the request that asked for them uses the session next.
      if (now - (this.lastUsed.get(sessionId) ?? now) < idleMs || !live.engine.idle || this.sessions.inUse(sessionId)) continue;
      this.logger.info('unloading a session idle for a while; a request opens it again from its log', { sessionId, idleMs });
      void this.sessions.unload(sessionId).catch((err) => this.logger.error('idle unload failed', { sessionId, error: String(err) }));
    }
  }
}
