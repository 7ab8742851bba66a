/**
 * Sessions waiting to start (`session/new`, and a stored session's revival), one per turn of the
 * loop. A hundred clients that ask at once arrive in one turn, and starting them all in it (~0.3 ms
 * each, several ms while the code is cold) held the daemon's loop 25 to 70 ms: health checks,
 * streams and timers waited behind them. Revivals come in such bursts too: every client of a
 * restarted daemon loads its sessions again as it reconnects.
 */
import { OnePerTurn } from '../../core/next-turn.js';
import type { RelayConnection } from './relay-connection.js';

export class SessionStarts {
  private readonly starts = new OnePerTurn();
  /** Per session, its requests waiting in `starts` to start its process (a cancel waits behind them). */
  private readonly startsWaiting = new Map<string, number>();

  /** Runs `start` in its turn (`starts`), unless its client went away while it waited: no child for a session nobody will hear of. */
  inItsTurn(conn: RelayConnection, start: () => void): Promise<void> {
    return this.starts.push(() => void (conn.isClosed || start()));
  }

  /** A request that starts the session's process, in its turn; counted in startsWaiting until then. */
  startInItsTurn(conn: RelayConnection, sessionId: string, start: () => void): Promise<void> {
    this.startsWaiting.set(sessionId, (this.startsWaiting.get(sessionId) ?? 0) + 1);
    return this.inItsTurn(conn, start).finally(() => {
      const n = this.startsWaiting.get(sessionId)! - 1;
      if (n > 0) this.startsWaiting.set(sessionId, n);
      else this.startsWaiting.delete(sessionId);
    });
  }

  /** Whether requests wait for their turn to start the session's process. */
  waiting(sessionId: string): boolean {
    return this.startsWaiting.has(sessionId);
  }

  /** Settles once every start waiting now has had its turn. */
  afterWaiting(): Promise<void> {
    return this.starts.push(() => undefined);
  }
}
