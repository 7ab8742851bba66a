/**
 * The logs that changed while the index was not looking, read again in the background. The index
 * learns what a log holds from the processes that write it; a log changed by anything else (damaged
 * while the daemon was down, cut short by a machine crash, written by a process killed before its
 * index write) kept an entry that says what the log no longer does, until something opened it: a
 * damaged session was listed as one that opens. Which logs: those whose change time is not before
 * the index file the index was loaded from (one `stat` each, in slices; nothing is read of the
 * others), and that nobody has open for writing. A log that is gone makes its session `deleted`
 * and `gone`; the logs of those are stat'ed too, and read once they are back. spec/event-log.md §6, Recheck.
 */
import type { Logger } from '../core/ports.js';
import { fileIdentity, sameFile } from './file-identity.js';
import { logLockHolder } from './log-lock.js';
import { sessionLogPath } from './paths.js';
import { entryFromLog } from './session-log-entry.js';
import type { SessionIndex } from './session-index.store.js';

export interface LogRecheckOptions {
  /** Whether a process of this index has the session open (its writer told the index all): left alone. */
  isOpen(id: string): boolean;
  /** Awaited between slices of stats and between pages of a log's events: the caller's loop stays free. */
  pause(): Promise<void>;
  logger: Logger;
  /** Stops the recheck between two steps (a daemon stopping). */
  signal?: AbortSignal;
}

export interface LogRecheckCounts {
  /** Logs whose identity was looked at. */
  looked: number;
  /** Logs changed since the index was written, read again. */
  read: number;
  /** Entries that changed for it. */
  changed: number;
}

/** Logs stat'ed at once, per step. */
const STAT_SLICE = 64;

/**
 * Reads again the logs changed since the index file was written (`index.loadedFrom`), and makes
 * their entries what they say (SessionIndex.followLog). Nothing when the index was rebuilt at its
 * open: it read every log then.
 */
export async function recheckChangedLogs(index: SessionIndex, opts: LogRecheckOptions): Promise<LogRecheckCounts> {
  const counts: LogRecheckCounts = { looked: 0, read: 0, changed: 0 };
  const since = index.loadedFrom?.mtimeNs;
  if (since === undefined) return counts;
  // A page of the list per step (copying all 10,000 entries at once held the loop for milliseconds).
  // Deleted entries too, for those whose log was gone (`gone`): nothing is stat'ed of the others.
  const paging = { limit: STAT_SLICE, includeDeleted: true };
  for (let page = index.list(paging); ; page = index.list({ ...paging, cursor: page.nextCursor })) {
    if (opts.signal?.aborted) return counts;
    const slice = page.sessions.filter((s) => s.status !== 'deleted' || s.gone);
    // `undefined`: no such file; a log that cannot be stat'ed (EACCES, EIO) is left as its entry says.
    const identities = await Promise.all(slice.map((s) => fileIdentity(sessionLogPath(index.dir, s.id)).catch(() => 'unknown' as const)));
    counts.looked += slice.length;
    for (let j = 0; j < slice.length; j++) {
      // The change time moves with every write, and with a `touch` of the modification time too. No
      // log at all (removed by hand, or lost with a disk): the session is gone (`recheck` says so).
      // A gone session's log that is there again is read whatever its times (put back by a copy
      // that kept them, or before another process wrote the index): the session is back.
      const identity = identities[j];
      const { id, gone } = slice[j]!;
      const toRead = identity !== 'unknown' && (gone ? identity !== undefined : identity === undefined || identity.ctimeNs >= since);
      if (toRead && (await recheck(index, id, opts, counts))) counts.changed++;
      if (opts.signal?.aborted) return counts;
    }
    if (!page.nextCursor) break;
    await opts.pause();
  }
  if (counts.read > 0) opts.logger.info('session logs changed since the index was written, read again', { ...counts });
  return counts;
}

async function recheck(index: SessionIndex, id: string, opts: LogRecheckOptions, counts: LogRecheckCounts): Promise<boolean> {
  const path = sessionLogPath(index.dir, id);
  // A log open for writing is its writer's to repair and report; a read of it may end in the record
  // it is writing, which is no damage.
  if (opts.isOpen(id) || logLockHolder(path) !== undefined) return false;
  const seen = index.get(id);
  if (!seen || (seen.status === 'deleted' && !seen.gone)) return false;
  // Its reads are synchronous (a scan, a page of events): one log per turn of the caller's loop.
  await opts.pause();
  const before = await fileIdentity(path);
  if (before === undefined && seen.gone) return false;
  if (before === undefined) {
    // Gone still: no process can open the session, and a rebuild would not list it. The entry stays,
    // as `deleted`, so that its id is never used again (SessionIndex.followLog).
    opts.logger.warn('a session log is gone; its session is listed no more', { sessionId: id, path });
    return index.followLog(id, seen, undefined);
  }
  counts.read++;
  const fromLog = await entryFromLog(index.dir, id, opts.logger, opts.pause).catch((err: unknown) => {
    opts.logger.warn('reading a changed session log again', { sessionId: id, error: String(err) });
    return undefined;
  });
  // Written meanwhile (a process opened it): what was read may be a record short, and its writer tells.
  if (!fromLog || opts.isOpen(id) || !sameFile(before, await fileIdentity(path))) return false;
  if (seen.gone && fromLog.status !== 'deleted') opts.logger.info('a gone session log is back; its session is listed again', { sessionId: id, path });
  return index.followLog(id, seen, fromLog);
}

/** A recheck running in the background: `done` settles when it ends (a failure is logged, not thrown); `stop` ends it between two steps. */
export interface BackgroundRecheck {
  done: Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts `recheckChangedLogs` without waiting for it, for a process that serves meanwhile: `troupe
 * serve`, and `troupe acp` run by an editor, whose `session/list` waits for `done`.
 */
export function recheckInBackground(index: SessionIndex, opts: Omit<LogRecheckOptions, 'signal'>): BackgroundRecheck {
  const stopped = new AbortController();
  const done = recheckChangedLogs(index, { ...opts, signal: stopped.signal }).then(
    () => undefined,
    (err: unknown) => opts.logger.warn('reading changed session logs again failed', { error: String(err) }),
  );
  return { done, stop: () => (stopped.abort(), done) };
}
