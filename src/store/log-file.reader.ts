/**
 * Reading log files: the scan that validates a file on open, reading all events from the start,
 * and reading a range after a cursor. None of these modifies the file. See spec/event-log.md §1–2.
 */
import { closeSync, fstatSync, openSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { AgentEvent } from '../core/events.js';
import { TroupeError } from '../core/errors.js';
import { LogCheckpoints } from './log-checkpoints.js';
import { decodeEventRecord, decodeHeaderRecord, peekEventRecord, type LogHeader } from './log-record.codec.js';
import { FRAME_HEADER_BYTES, walkBuffer, walkFrames, type FrameProblem, type FrameWalk } from './record-frame.codec.js';

/** A damaged tail found by a scan: everything from `offset` on is not part of the log. */
export interface LogWarning {
  offset: number;
  droppedBytes: number;
  reason: FrameProblem['reason'] | 'missing_header' | 'seq_discontinuity';
  message: string;
}

export interface LogScan {
  path: string;
  header: LogHeader | undefined;
  /** Seq of the first event in the file, or `undefined` if it holds none. */
  firstSeq: number | undefined;
  /** Seq of the last valid event (the header's `baseSeq` if there is none). */
  lastSeq: number;
  /** Length of the valid prefix; a writable open truncates the file to it. */
  validBytes: number;
  fileBytes: number;
  records: number;
  warnings: LogWarning[];
  checkpoints: LogCheckpoints;
}

/**
 * The damage of a log none of whose events survives it (its first event record fails its check),
 * or `undefined`: a writable open refuses to repair such a log into an empty one
 * (`refuseRepairToNothing`), and the index marks its session `damaged` (spec/event-log.md §2, §6).
 */
export function damageLeavingNothing(scan: LogScan): LogWarning | undefined {
  return scan.firstSeq === undefined ? scan.warnings[0] : undefined;
}

function warningOf(p: { offset: number; reason: LogWarning['reason']; detail: string }, fileBytes: number, path: string): LogWarning {
  const dropped = fileBytes - p.offset;
  return {
    offset: p.offset,
    droppedBytes: dropped,
    reason: p.reason,
    message: `${path}: ${p.detail} at byte ${p.offset}; the ${dropped} bytes from there on are not part of the log`,
  };
}

/**
 * The order every reader holds a log's records to (spec/event-log.md §1): the first is the header,
 * each next one an event record starting at the seq after the one before ended. `next` says what a
 * record is: its seqs (an event record), `undefined` (the header), or why it breaks the order.
 * `resumeAfter`: go on after records already checked, up to that seq (the header behind).
 */
function recordOrder(resumeAfter?: number) {
  let header: LogHeader | undefined;
  let started = resumeAfter !== undefined;
  let lastSeq = resumeAfter ?? 0;
  return {
    get header() {
      return header;
    },
    /** Seq of the last event record accepted (the header's `baseSeq` before any). */
    get lastSeq() {
      return lastSeq;
    },
    next(payload: Buffer, offset: number): { firstSeq: number; count: number } | FrameProblem | undefined {
      if (!started) {
        header = offset === 0 ? decodeHeaderRecord(payload) : undefined;
        if (!header) return { offset, reason: 'bad_record', detail: 'the first record is not a troupe log header' };
        started = true;
        lastSeq = header.baseSeq;
        return undefined;
      }
      const peek = peekEventRecord(payload);
      if (!peek) return { offset, reason: 'bad_record', detail: 'record is not an event record' };
      if (peek.firstSeq !== lastSeq + 1) return { offset, reason: 'bad_record', detail: `seq discontinuity (record starts at ${peek.firstSeq}, expected ${lastSeq + 1})` };
      lastSeq = peek.firstSeq + peek.count - 1;
      return peek;
    },
  };
}

const isProblem = (r: object): r is FrameProblem => 'reason' in r;

/** Validates a log file (lengths, CRCs, header, seq continuity) without decoding events. */
export function scanLogFile(path: string): LogScan {
  const fd = openSync(path, 'r');
  try {
    return scanFd(fd, path);
  } finally {
    closeSync(fd);
  }
}

/** Like `scanLogFile` on an open descriptor. */
export function scanFd(fd: number, path: string): LogScan {
  const fileBytes = fstatSync(fd).size;
  const scan = logScanner(path);
  return scan.result(walkFrames(fd, 0, fileBytes, scan.visit), fileBytes);
}

/** Bytes of log a paced scan checks between two pauses: about 2–3 ms of CRC here (~3 GB/s). */
export const SCAN_SLICE_BYTES = 8 * 1024 * 1024;

/**
 * `scanFd` for a process whose event loop serves others (the daemon opening a feed): the same scan,
 * in slices of about `sliceBytes`, with `pause()` awaited between them, so that a long log (a
 * gigabyte is ~300 ms of CRC) never holds the loop for more than a slice. The file may grow while
 * it is scanned (a child appends): each slice goes on to the file's end as it is then, and the scan
 * ends at an end it reached with no pause since, so it has every record written before it ended
 * (every event a child reported durable by then).
 */
export async function scanFdPaced(fd: number, path: string, pause: () => Promise<void>, sliceBytes = SCAN_SLICE_BYTES): Promise<LogScan> {
  const scan = logScanner(path);
  for (let pos = 0; ; ) {
    const fileBytes = fstatSync(fd).size;
    const stopAt = pos + sliceBytes;
    const walk = walkFrames(fd, pos, fileBytes, (payload, offset) => scan.visit(payload, offset) ?? (offset + FRAME_HEADER_BYTES + payload.length < stopAt ? undefined : false));
    if (walk.problem || walk.validEnd >= fileBytes) return scan.result(walk, fileBytes);
    pos = walk.validEnd;
    await pause();
  }
}

/** `scanLogFile` paced as `scanFdPaced` is. */
export async function scanLogFilePaced(path: string, pause: () => Promise<void>, sliceBytes = SCAN_SLICE_BYTES): Promise<LogScan> {
  const fd = openSync(path, 'r');
  try {
    return await scanFdPaced(fd, path, pause, sliceBytes);
  } finally {
    closeSync(fd);
  }
}

/** What a scan makes of the frames it is shown, in file order, one walk or several in a row. */
function logScanner(path: string) {
  const checkpoints = new LogCheckpoints();
  const order = recordOrder();
  let firstSeq: number | undefined;
  let records = 0;
  return {
    visit(payload: Buffer, offset: number): FrameProblem | undefined {
      const record = order.next(payload, offset);
      if (record && isProblem(record)) return record;
      if (record) {
        checkpoints.add(record.firstSeq, offset);
        firstSeq ??= record.firstSeq;
      }
      records++;
      return undefined;
    },
    /** The scan, from the last walk (which ended the scan) and the file's size it walked to. */
    result(walk: FrameWalk, fileBytes: number): LogScan {
      const header = order.header;
      const warnings: LogWarning[] = [];
      if (walk.problem) warnings.push(warningOf(walk.problem, fileBytes, path));
      else if (!header && fileBytes > 0) warnings.push(warningOf({ offset: 0, reason: 'missing_header', detail: 'no header record' }, fileBytes, path));
      return { path, header, firstSeq, lastSeq: order.lastSeq, validBytes: header ? walk.validEnd : 0, fileBytes, records, warnings, checkpoints };
    },
  };
}

export interface LogContents {
  scan: LogScan;
  events: AgentEvent[];
}

/**
 * Reads every valid event of a log file from the start, in one pass (read once, frame, check, decode).
 * The damaged tail, if any, is reported in `scan.warnings` and left alone.
 */
export async function readLogFile(path: string): Promise<LogContents> {
  const buf = await readFile(path);
  return decodeLogBuffer(buf, path);
}

/**
 * `readLogFile`, decoded a page of `pageSize` events at a time from the scan's checkpoints, with
 * `pause()` awaited between pages (and between the scan's slices, `scanFdPaced`): a long log (tens of thousands of events, ~0.6 µs each) is read
 * without holding the caller's event loop for the whole decode. The file may grow meanwhile; what
 * the scan found is what is read.
 */
export async function readLogFilePaged(path: string, pause: () => Promise<void>, pageSize = 4096): Promise<LogContents> {
  // One descriptor for the scan and every page: the file first opened is read to the end, even once
  // its name is another file's (a deleted session's log replaced by its tombstone). Until 2026-12-07
  // each page opened the name again, and one opened after such a swap read the tombstone at the log's
  // offsets (log_corrupt, or a log cut short).
  const fd = openSync(path, 'r');
  try {
    const scan = await scanFdPaced(fd, path, pause);
    return { scan, events: await eventsPaged((after, max, end) => readEventRangeFd(fd, path, scan.checkpoints, after, max, end), scan, pause, scan.validBytes, pageSize) };
  } finally {
    closeSync(fd);
  }
}

/**
 * Every event `scan` found in its log that lies before byte `end` (at most its valid prefix), read
 * `pageSize` at a time with `pause()` awaited between pages (readEventRange: throws `log_corrupt`
 * at a record that does not decode).
 */
export function readScannedEventsPaged(path: string, scan: LogScan, pause: () => Promise<void>, end: number, pageSize = 4096): Promise<AgentEvent[]> {
  return eventsPaged((after, max, upTo) => readEventRange(path, scan.checkpoints, after, max, upTo), scan, pause, end, pageSize);
}

/** The pages of `readScannedEventsPaged`, each read by `read` (the events after a seq, at most `max`, before byte `end`). */
async function eventsPaged(read: (after: number, max: number, end: number) => AgentEvent[], scan: LogScan, pause: () => Promise<void>, end: number, pageSize: number): Promise<AgentEvent[]> {
  const events: AgentEvent[] = [];
  for (let after = scan.firstSeq === undefined ? scan.lastSeq : scan.firstSeq - 1; after < scan.lastSeq; ) {
    if (events.length > 0) await pause();
    const page = read(after, Math.min(pageSize, scan.lastSeq - after), Math.min(end, scan.validBytes));
    if (page.length === 0) break;
    for (const e of page) events.push(e);
    after = page[page.length - 1]!.seq;
  }
  return events;
}

/** `readLogFile` on bytes already in memory. */
export function decodeLogBuffer(buf: Buffer, path = '<buffer>'): LogContents {
  const events: AgentEvent[] = [];
  const scan = visitLogBuffer(buf, (event) => void events.push(event), path);
  return { scan, events };
}

/**
 * Decodes every valid event of a log file's bytes in order, handing each to `visit` as it is
 * decoded instead of collecting them (a replay keeps what it makes of each event, not the event).
 * Returns the scan, as `decodeLogBuffer` does.
 */
export function visitLogBuffer(buf: Buffer, visit: (event: AgentEvent) => void, path = '<buffer>'): LogScan {
  const checkpoints = new LogCheckpoints();
  const order = recordOrder();
  let firstSeq: number | undefined;
  let records = 0;
  const walk = walkBuffer(buf, (payload, offset) => {
    const record = order.next(payload, offset);
    if (record && isProblem(record)) return record;
    if (record) {
      checkpoints.add(record.firstSeq, offset);
      const batch = decodeEventRecord(payload, offset);
      firstSeq ??= record.firstSeq;
      for (let i = 0; i < batch.length; i++) visit(batch[i]!);
    }
    records++;
  });
  const header = order.header;
  const lastSeq = order.lastSeq;
  const warnings: LogWarning[] = [];
  if (walk.problem) warnings.push(warningOf(walk.problem, buf.length, path));
  else if (!header && buf.length > 0) warnings.push(warningOf({ offset: 0, reason: 'missing_header', detail: 'no header record' }, buf.length, path));
  return {
    path,
    header,
    firstSeq,
    lastSeq,
    validBytes: header ? walk.validEnd : 0,
    fileBytes: buf.length,
    records,
    warnings,
    checkpoints,
  };
}

/**
 * Up to `max` consecutive events after `afterSeq`, read from the file's valid prefix `[0, end)`,
 * starting at the checkpoint nearest before them, and no more than about `maxBytes` of them (each
 * event counted as its share of its record's payload; at least one event, however large). Throws
 * `log_corrupt` if a checksummed record does not decode.
 */
export function readEventRange(path: string, checkpoints: LogCheckpoints, afterSeq: number, max: number, end: number, maxBytes = Infinity): AgentEvent[] {
  const fd = openSync(path, 'r');
  try {
    return readEventRangeFd(fd, path, checkpoints, afterSeq, max, end, maxBytes);
  } finally {
    closeSync(fd);
  }
}

/**
 * `readEventRange` through a descriptor the caller keeps open: the file it was opened on, even once
 * its name is another file's (a deleted session's log replaced by its tombstone).
 */
export function readEventRangeFd(fd: number, path: string, checkpoints: LogCheckpoints, afterSeq: number, max: number, end: number, maxBytes = Infinity): AgentEvent[] {
  const out: AgentEvent[] = [];
  let bytes = 0;
  const start = checkpoints.offsetFor(afterSeq + 1);
  const walk = walkFrames(fd, start, end, (payload, offset) => {
    const peek = peekEventRecord(payload);
    if (!peek) return offset === 0 ? undefined : { offset, reason: 'bad_record', detail: 'record is not an event record' };
    // Records past the last checkpoint (appended since the scan that made them) become checkpoints
    // as they are walked (add keeps one per 64 KiB, in file order): without, every read of a log that
    // grew since walked all it had grown from there, and a feed open while a session wrote a
    // gigabyte read it again for each batch of 4 MiB (quadratic: 79 s to fill a 1 GB gap).
    checkpoints.add(peek.firstSeq, offset);
    if (peek.firstSeq + peek.count - 1 <= afterSeq) return;
    const batch = decodeNamingFile(path, payload, offset);
    const each = payload.length / batch.length;
    for (const e of batch) {
      if (e.seq <= afterSeq) continue;
      if (out.length > 0 && bytes + each > maxBytes) return false;
      out.push(e);
      bytes += each;
      if (out.length >= max) return false;
    }
  });
  if (walk.problem) throw new TroupeError('log_corrupt', `${path}: ${walk.problem.detail} at byte ${walk.problem.offset}`, { offset: walk.problem.offset });
  return out;
}

/** `decodeEventRecord`, its `log_corrupt` naming the file (`data.path`), as every other `log_corrupt` does. */
function decodeNamingFile(path: string, payload: Buffer, offset: number): AgentEvent[] {
  try {
    return decodeEventRecord(payload, offset);
  } catch (err) {
    if (err instanceof TroupeError && err.code === 'log_corrupt') throw new TroupeError('log_corrupt', `${path}: ${err.message}`, { ...err.data, path });
    throw err;
  }
}

/** Where a read of a log file ended: a later read goes on from there if the file is still that one. */
export interface LogPosition {
  dev: number;
  ino: number;
  /** Byte offset just after the last record read. */
  offset: number;
  /** Seq of the last event read (the header's `baseSeq` if none). */
  lastSeq: number;
}

export interface LogGrowth {
  events: AgentEvent[];
  position: LogPosition;
  /** Bytes of the file this read went through. */
  bytes: number;
  /** The file's header, when read from its start (a deleted session's tombstone says so there). */
  header?: LogHeader;
}

/**
 * The events a log file gained since `from` (every event, without it) and where this read ended,
 * decoded `pageSize` events at a time with `pause()` awaited between pages. Only the bytes after
 * `from.offset` are read, so a reader following a growing log reads each record once. It stops at
 * a damaged or unfinished tail as `scanLogFile` does (a record being written is read next time).
 * `undefined` when the file is no longer the one `from` was read from (replaced, e.g. by a deleted
 * session's tombstone, or shorter than what was read): read it again from the start.
 */
export async function readLogFrom(path: string, from: LogPosition | undefined, pause: () => Promise<void>, pageSize = 4096): Promise<LogGrowth | undefined> {
  const fd = openSync(path, 'r');
  try {
    const st = fstatSync(fd);
    if (from && (st.dev !== from.dev || st.ino !== from.ino || st.size < from.offset)) return undefined;
    const start = from?.offset ?? 0;
    const events: AgentEvent[] = [];
    const order = recordOrder(from?.lastSeq);
    let pos = start;
    for (let page = pageSize; pos < st.size; page = events.length + pageSize) {
      if (events.length > 0) await pause();
      const walk = walkFrames(fd, pos, st.size, (payload, offset) => {
        const record = order.next(payload, offset);
        if (record && isProblem(record)) return record;
        if (!record) return;
        for (const e of decodeEventRecord(payload, offset)) events.push(e);
        if (events.length >= page) return false;
      });
      pos = walk.validEnd;
      // Fewer than a page: the walk reached the end, or a tail that is not (yet) a valid record.
      if (walk.problem || events.length < page) break;
    }
    const lastSeq = order.lastSeq;
    return { events, position: { dev: st.dev, ino: st.ino, offset: pos, lastSeq }, bytes: pos - start, ...(order.header ? { header: order.header } : {}) };
  } finally {
    closeSync(fd);
  }
}
