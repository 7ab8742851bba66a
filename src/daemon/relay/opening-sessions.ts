/**
 * Sessions whose `session/new` is in flight: each holds a child but is not in the relay's `sessions`
 * until the child names it. They count against `--max-sessions`, or a burst of concurrent
 * `session/new`s would all pass the check and start a child each. One withdrawn by its client, or
 * whose session/new failed, is given up: its child is stopped, it would serve nothing.
 */
import type { Logger } from '../../core/ports.js';
import type { SessionIndex } from '../../store/index.js';
import type { RelayConnection } from './relay-connection.js';
import type { RelaySession } from './relay-session.js';

export class OpeningSessions {
  private readonly opening = new Set<RelaySession>();

  constructor(
    private readonly index: SessionIndex,
    private readonly logger: Logger,
  ) {}

  get size(): number {
    return this.opening.size;
  }

  all(): Iterable<RelaySession> {
    return this.opening;
  }

  add(session: RelaySession): void {
    this.opening.add(session);
  }

  /** Whether `session` was opening: it is not any more. */
  delete(session: RelaySession): boolean {
    return this.opening.delete(session);
  }

  /**
   * `$/cancel_request` of `conn` for its session/new in flight, whose session has no id yet (nor `conn`
   * attached): withdrawn as any request (RelaySession.withdraw). One not sent yet (its process starts)
   * is answered -32800 here, and its process is stopped: it would serve nothing. `on`: a cancel sent
   * with a session's header withdraws only a session/new sent with that header.
   */
  withdraw(conn: RelayConnection, requestId: unknown, on?: string): void {
    for (const s of this.opening) this.withdrawFrom(s, conn, requestId, on);
  }

  /** The session/new of `conn` under `requestId` in flight on `session`, withdrawn (above). */
  withdrawFrom(session: RelaySession, conn: RelayConnection, requestId: unknown, on?: string): void {
    const waited = session.awaitsAnswers;
    session.withdraw(conn, requestId, on);
    if (waited && !session.awaitsAnswers) this.giveUp(session);
  }

  /** The sessions whose session/new of `conn` under `requestId` is in flight, each with the stream it was sent on. */
  holding(conn: RelayConnection, requestId: unknown): { session: RelaySession; on: string | undefined }[] {
    const found: { session: RelaySession; on: string | undefined }[] = [];
    for (const session of this.opening) {
      const pending = session.pendingFrom(conn, requestId);
      if (pending) found.push({ session, ...pending });
    }
    return found;
  }

  /** The session/new failed (or was withdrawn): the child serves nothing and is stopped. */
  giveUp(session: RelaySession): void {
    this.opening.delete(session);
    session.abandon();
    void session.child.stop('deleted');
  }

  /** The session/new was answered with `sessionId`: the index has an entry for it. */
  adopt(session: RelaySession, sessionId: string, result: Record<string, unknown>): void {
    // The child reports session_created once durable; a child killed before that must not leave the
    // session unknown to the index (it would then never be listed, failed or deleted).
    if (!this.index.get(sessionId)) {
      const current = (id: string) => (result.configOptions as { id: string; currentValue?: unknown }[] | undefined)?.find((o) => o.id === id)?.currentValue;
      void this.index
        .adopt({ id: sessionId, cwd: session.cwd, model: String(current('model') ?? ''), mode: String(current('mode') ?? ''), createdAt: Date.now() })
        .catch((err) => this.logger.debug('index entry for a new session', { sessionId, error: String(err) }));
    }
  }
}
