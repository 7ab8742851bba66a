/**
 * An index entry read from its session's log, the source of truth: when the index is rebuilt, adopts
 * a log it does not know, or catches an entry up with what a crash kept from it (spec/event-log.md §6).
 */
import { readdir, rm } from 'node:fs/promises';
import type { AgentEvent } from '../core/events.js';
import type { EventLog, Logger } from '../core/ports.js';
import { isTroupeError, type TroupeError } from '../core/errors.js';
import { isValidSessionId } from '../core/ids.js';
import { isProcessAlive } from './process-alive.js';
import { logLockPath } from './log-lock.js';
import { damageLeavingNothing, readLogFile, readScannedEventsPaged, scanLogFilePaced, type LogContents, type LogScan } from './log-file.reader.js';
import { LOG_FILE_EXT, sessionLogPath } from './paths.js';
import { foldEvent, INDEXED_EVENT_TYPES, type SessionEntry } from './session-summary.js';

/** The ids of the session logs in `dir`. */
export async function sessionLogIds(dir: string): Promise<string[]> {
  const names = await readdir(dir);
  return names.filter((n) => n.endsWith(LOG_FILE_EXT)).map((n) => n.slice(0, -LOG_FILE_EXT.length)).filter(isValidSessionId);
}

/**
 * Reads one log into its index entry (tombstone headers included); `undefined` if the log holds no
 * session. A spare log whose maker is gone is removed. (A log with a lost `session_created` gives
 * an entry with an empty `cwd`, which keeps its id used.)
 */
export async function entryFromLog(dir: string, id: string, logger: Logger, pause?: () => Promise<void>): Promise<SessionEntry | undefined> {
  const path = sessionLogPath(dir, id);
  let contents: LogContents;
  let undecodableFrom: number | undefined;
  // With `pause`, scanned in slices and decoded a page of events at a time (a read while the process
  // serves); the scan is kept for a log that turns out not to decode, which is not scanned again.
  let scanned: LogScan | undefined;
  try {
    if (pause) {
      scanned = await scanLogFilePaced(path, pause);
      contents = { scan: scanned, events: await readScannedEventsPaged(path, scanned, pause, scanned.validBytes) };
    } else contents = await readLogFile(path);
  } catch (err) {
    // Listed, then gone before it was read: a spare log its maker removed as it stopped, or one
    // that another opening index removed (its maker is gone). Such a log was no session; until
    // 2026-12-06 it failed the whole open (an agent starting next to another did not start).
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    if (!isTroupeError(err, 'log_corrupt')) throw err;
    // Without `pause` (an index opening, before it serves), its pages hold the loop, as readLogFile does.
    ({ contents, offset: undecodableFrom } = await readDecodablePrefix(path, err, logger, pause ?? holdLoop, scanned));
  }
  const { scan, events } = contents;
  for (const w of scan.warnings) logger.warn(w.message, { offset: w.offset });
  const spare = scan.header?.spare;
  // Bytes after the header that give no event (a record that does not decode, or one that fails its
  // check) may be a session's: such a log is left as it is (spec/event-log.md §2), spare or not.
  // Every new log is marked spare until its first event (since 15c9ad3): until 2026-12-07 a session
  // whose first record was damaged and whose maker had exited was removed here, file and all.
  const leftNothing = undecodableFrom === undefined ? damageLeavingNothing(scan) : undefined;
  const damage = scan.header?.tombstone ? undefined : (undecodableFrom ?? leftNothing?.offset);
  if (spare && events.length === 0 && !scan.header?.tombstone) {
    const makerAlive = isProcessAlive(spare.pid);
    // A log made ahead and never used is no session; once its maker is gone, nobody will use it.
    if (damage === undefined) {
      if (!makerAlive) await Promise.all([rm(path, { force: true }), rm(logLockPath(path), { force: true })]);
      return undefined;
    }
    // Its first record torn while its maker lives: that record is being written now, as a reader
    // sees one (§2), and the maker indexes the session itself. Until 2026-12-07 (9414d7f to this)
    // such a log read mid-append was listed damaged, with no cwd. (Since the header keeps its mark,
    // a first record that fails its check with the maker's pid alive is listed damaged, as any log.)
    if (makerAlive && (leftNothing?.reason === 'torn_header' || leftNothing?.reason === 'torn_record')) return undefined;
  }
  const tomb = scan.header?.tombstone;
  let entry: SessionEntry | undefined = tomb
    ? { id, cwd: tomb.cwd, model: tomb.model, mode: tomb.mode, createdAt: tomb.createdAt, updatedAt: tomb.deletedAt, status: 'deleted', lastSeq: scan.lastSeq, ...(tomb.title !== undefined ? { title: tomb.title } : {}) }
    : undefined;
  for (const e of events) entry = foldEvent(entry, e);
  if (!entry && scan.header) {
    // A log whose session_created was lost still holds the id: keep it, so the id is never reused.
    const t = scan.header.createdAt;
    entry = { id, cwd: '', model: '', mode: '', createdAt: t, updatedAt: t, status: 'closed', lastSeq: scan.lastSeq };
  }
  // What keeps the session from opening (its open fails log_corrupt), said in its entry: until
  // 2026-12-06 such a session was listed `active` like any other, and only a request for it told.
  if (entry && damage !== undefined) entry.damaged = { code: 'log_corrupt', offset: damage };
  return entry;
}

const holdLoop = async (): Promise<void> => {};

/**
 * A log whose frames all check but one of whose records does not decode (spec/event-log.md §2):
 * the events before that record. The session is indexed from them, and the index opens; opening
 * the session itself fails `log_corrupt`, and the file is left as it is. Until 2026-12-06 such a
 * log failed the whole open: one bad file kept `troupe serve` and `troupe acp` from starting.
 */
async function readDecodablePrefix(path: string, err: TroupeError, logger: Logger, pause: () => Promise<void>, scanned?: LogScan): Promise<{ contents: LogContents; offset: number }> {
  // Paced as the read that failed was: the daemon's recheck comes here for a log damaged while it was down.
  const scan = scanned ?? (await scanLogFilePaced(path, pause));
  const offset = Number(err.data.offset);
  const end = Number.isSafeInteger(offset) && offset < scan.validBytes ? offset : scan.validBytes;
  const events = await readScannedEventsPaged(path, scan, pause, end);
  logger.warn(`session log ${path} does not decode from byte ${end}: indexed from the events before it; opening the session fails log_corrupt`, {
    path,
    offset: end,
    error: err.message,
  });
  return { contents: { scan, events }, offset: end };
}

/**
 * What a session's open log tells its index entry, which stands at `entrySeq`: the indexed events it
 * holds beyond it, or, when it holds less (`rewound`: its last seq once opened and repaired, before
 * the session appended anything, is below `entrySeq`: a machine crash, a damaged tail cut), every
 * indexed event it holds, from its start, to make the entry again from (spec/event-log.md §6).
 */
export interface LogCatchUp {
  events: AgentEvent[];
  rewound?: number;
}

/**
 * Reads what `log` tells an entry at `entrySeq` (LogCatchUp). One decision for both who keep an index:
 * an agent's own (SessionIndex.catchUp) and a daemon's child, which reports it (session-catalog.ts).
 */
export async function logCatchUp(log: Pick<EventLog, 'readAfter' | 'lastSeq'>, { entrySeq, heldSeq }: { entrySeq: number; heldSeq: number }): Promise<LogCatchUp> {
  if (heldSeq < entrySeq) return { events: await indexedEventsAfter(log, 0), rewound: heldSeq };
  return { events: await indexedEventsAfter(log, entrySeq) };
}

/**
 * The events of `log` after `seq` that change an index entry (INDEXED_EVENT_TYPES), in order. None
 * from a log whose prefix through `seq` is lost (`replay_gap`): it holds nothing to fold after it.
 */
export async function indexedEventsAfter(log: Pick<EventLog, 'readAfter' | 'lastSeq'>, seq: number): Promise<AgentEvent[]> {
  const indexed: AgentEvent[] = [];
  try {
    for (let cursor = Math.min(seq, log.lastSeq()); cursor < log.lastSeq(); ) {
      const page = await log.readAfter(cursor, { limit: 1000, filter: (e) => INDEXED_EVENT_TYPES.has(e.type) });
      for (const e of page.events) indexed.push(e);
      cursor = page.cursor;
    }
  } catch (err) {
    if (isTroupeError(err, 'replay_gap')) return [];
    throw err;
  }
  return indexed;
}
