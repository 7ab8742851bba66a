/**
 * Forks just made, until their source's process has unloaded them and the index has their entry. A
 * fork is a session of its own, with a process of its own from its next message (Relay.toSession),
 * but its source's process made it and still holds it open: it unloads it there (a session/close
 * unloads without writing), so that one process writes its log. Until then the fork's messages wait:
 * a process of its own could not take its log (session_locked), nor could a delete, and the index
 * learns of the fork from the source's control channel, which may lag its answer: a prompt sent at
 * once was answered session_not_found, and a delete succeeded without deleting it. Once unloaded, the
 * fork's entry is read from its log if the index has none yet.
 */
import type { Logger } from '../../core/ports.js';
import type { SessionIndex } from '../../store/index.js';
import type { RelaySession } from './relay-session.js';

export class ForkUnloads {
  private readonly unloading = new Map<string, Promise<void>>();

  constructor(
    private readonly index: SessionIndex,
    private readonly logger: Logger,
  ) {}

  /** `source`'s process made the fork `sessionId` (called before the fork's answer goes, so that no message for it comes earlier). */
  unload(source: RelaySession, sessionId: string): void {
    const settled = source
      .request('session/close', { sessionId })
      .catch((err) => this.logger.debug('unloading a fork from its source child', { sessionId, error: String(err) }))
      .then(() => this.index.adoptLog(sessionId))
      .catch((err) => this.logger.warn('reading a fork into the session index', { sessionId, error: String(err) }))
      .finally(() => this.unloading.delete(sessionId));
    this.unloading.set(sessionId, settled);
  }

  /** While `sessionId` is a fork being unloaded: settles once it is (never rejects). */
  pending(sessionId: string): Promise<void> | undefined {
    return this.unloading.get(sessionId);
  }
}
