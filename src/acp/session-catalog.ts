/**
 * The session index as a session host sees it: the home's index for an editor's agent, or the
 * daemon's for a daemon's child, which reads nothing of it and reports to it.
 */
import type { EventLog } from '../core/ports.js';
import type { SessionIndex } from '../store/index.js';
import { logCatchUp } from '../store/session-log-entry.js';
import type { SessionReporter } from './control-channel.js';

/** What the host needs of the session index. A supervised child only reads it: its daemon writes it. */
export type SessionCatalog = Pick<SessionIndex, 'isUsed' | 'get' | 'list' | 'refresh' | 'refreshIfChanged' | 'applyEvents' | 'tombstone' | 'flush'> & {
  /**
   * Brings the session's entry up to date with its open `log` (SessionIndex.catchUp). `heldSeq`: the
   * log's last seq once opened (repaired), before the session appended anything. `indexedSeq`: where
   * the entry stands, when another process owns the index (INDEXED_SEQ, src/acp/troupe-meta.ts).
   */
  catchUp(id: string, log: Pick<EventLog, 'readAfter' | 'lastSeq'>, at: { heldSeq: number; indexedSeq?: number }): Promise<void>;
};

/**
 * The catalog of a supervised child: empty. Its daemon owns the index (it answers session/list and
 * deletes), the log file is the truth when a session is opened, and new ids carry 80 random bits, so
 * a child never reads or writes the index (with 10,000 sessions that would be megabytes per spawn).
 * What it does: when it opens a session whose opening request said where the daemon's entry stands,
 * it reports the indexed events its log holds beyond that, so that the daemon reads no log itself
 * (or all of them, when its log holds less than that).
 */
export function daemonOwnedCatalog(reporter: SessionReporter): SessionCatalog {
  return {
    isUsed: () => false,
    get: () => undefined,
    list: () => ({ sessions: [] }),
    refresh: async () => undefined,
    refreshIfChanged: async () => undefined,
    applyEvents: async () => undefined,
    catchUp: async (id, log, { heldSeq, indexedSeq }) => {
      if (indexedSeq === undefined) return;
      // The same reading as the agent's own index (SessionIndex.catchUp); the daemon follows it (SessionIndex.follow).
      const { events, rewound } = await logCatchUp(log, { entrySeq: indexedSeq, heldSeq });
      if (events.length || rewound !== undefined) reporter.indexed(id, events, rewound);
    },
    tombstone: async () => undefined,
    flush: async () => undefined,
  };
}
