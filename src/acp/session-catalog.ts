/**
 * The session index as a session host sees it: the home's index for an editor's agent, or nothing
 * for a daemon's child, whose daemon owns the index.
 */
import type { SessionIndex } from '../store/index.js';

/** What the host needs of the session index. A supervised child only reads it: its daemon writes it. */
export type SessionCatalog = Pick<SessionIndex, 'isUsed' | 'get' | 'list' | 'refresh' | 'refreshIfChanged' | 'applyEvents' | 'catchUp' | 'tombstone' | 'flush'>;

/**
 * The catalog of a supervised child: empty. Its daemon owns the index (it answers session/list and
 * deletes), the log file is the truth when a session is opened, and new ids carry 80 random bits, so
 * a child never reads or writes the index (with 10,000 sessions that would be megabytes per spawn).
 */
export const daemonOwnedCatalog: SessionCatalog = {
  isUsed: () => false,
  get: () => undefined,
  list: () => ({ sessions: [] }),
  refresh: async () => undefined,
  refreshIfChanged: async () => undefined,
  applyEvents: async () => undefined,
  catchUp: async () => undefined,
  tombstone: async () => undefined,
  flush: async () => undefined,
};
