/**
 * A deleted session's log: replaced, atomically, by a tombstone log that keeps only the id, the
 * index metadata and the seq the session ended at (spec/event-log.md §6). The id stays used forever.
 */
import { stat } from 'node:fs/promises';
import type { AgentEvent } from '../core/events.js';
import { TroupeError } from '../core/errors.js';
import { writeFileAtomic } from './atomic-write.js';
import { lockLogForWriting } from './log-lock.js';
import { logWriteFailed } from './log-writer.js';
import { scanLogFilePaced } from './log-file.reader.js';
import { encodeEventRecord, encodeHeaderRecord, LOG_FORMAT_VERSION } from './log-record.codec.js';
import { sessionLogPath } from './paths.js';
import type { SessionEntry } from './session-summary.js';

/**
 * Replaces the log of session `entry` in `dir` by its tombstone, deleted at `now`; returns the seq of
 * the tombstone's `session_closed` (the session's last). The log must not be open for writing.
 * `pause` is awaited between slices of the log's scan (scanFdPaced): a delete comes while the
 * process serves others (the daemon's DELETE, an editor's session/delete), and a gigabyte of log
 * is ~300 ms of CRC. Nobody appends meanwhile: the writer lock is held.
 */
export async function writeTombstoneLog(dir: string, entry: SessionEntry, now: number, pause: () => Promise<void>): Promise<number> {
  const id = entry.id;
  const path = sessionLogPath(dir, id);
  // The log's writer lock, held while the file is replaced: a process (this one too) that had it
  // open for writing would go on writing to a file no longer there, and one that opened it while
  // it is replaced would read the new file at the old one's offsets. After the lock, an open
  // finds the tombstone. A holder makes this throw session_locked, naming it.
  const unlock = lockTombstonedLog(path, id);
  try {
    let lastSeq = entry.lastSeq;
    try {
      await stat(path);
      // Frames only, nothing decoded: a log one of whose records does not decode can still be deleted.
      lastSeq = Math.max(lastSeq, (await scanLogFilePaced(path, pause)).lastSeq);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    const tombstone = { cwd: entry.cwd, model: entry.model, mode: entry.mode, createdAt: entry.createdAt, deletedAt: now, ...(entry.title !== undefined ? { title: entry.title } : {}) };
    const header = encodeHeaderRecord({ troupeLog: LOG_FORMAT_VERSION, sessionId: id, createdAt: entry.createdAt, baseSeq: lastSeq, tombstone });
    const closed = { type: 'session_closed', sessionId: id, reason: 'deleted', seq: lastSeq + 1, ts: now } as AgentEvent;
    await writeFileAtomic(path, Buffer.concat([header, encodeEventRecord([closed])])).catch((err: unknown) => {
      throw logWriteFailed(err);
    });
    return lastSeq + 1;
  } finally {
    unlock();
  }
}

/** The log's writer lock, for its tombstone: a lock that cannot be written (a full disk) is `log_write_failed`, as for a writer. */
function lockTombstonedLog(path: string, id: string): () => void {
  try {
    return lockLogForWriting(path, id);
  } catch (err) {
    throw err instanceof TroupeError ? err : logWriteFailed(err);
  }
}
