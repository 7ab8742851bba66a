/**
 * The durable `EventLog`: one append-only file per session (spec/event-log.md), the cursor broker
 * in front of it for live watchers and recent events, and the file itself as the cold source for
 * older cursors. A writable open repairs a torn tail; a read-only open never modifies the file.
 */
import { closeSync, fdatasyncSync, fsyncSync, openSync, rmSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import type { AgentEvent, AgentEventInput } from '../core/events.js';
import type { Clock, EventLog, EventPage, EventWatcher, Logger, ReadOptions } from '../core/ports.js';
import { silentLogger, systemClock } from '../core/ports.js';
import { TroupeError } from '../core/errors.js';
import { writeAllSync } from './atomic-write.js';
import { resolveDurability, type DurabilityOptions } from './durability.js';
import { EventBroker, type ColdSource, type RetentionOptions } from './event-broker.js';
import { prepareEvent, stampEvent } from './event-stamp.js';
import { damageLeavingNothing, readEventRange, scanFd, type LogScan, type LogWarning } from './log-file.reader.js';
import { encodeHeaderRecord, LOG_FORMAT_VERSION } from './log-record.codec.js';
import { LogWriter, logWriteFailed } from './log-writer.js';
import { lockLogForWriting } from './log-lock.js';
import { LOG_FILE_EXT, makeDirs, sessionLogPath } from './paths.js';
import { resolveMaxEventBytes } from './strict-json.codec.js';

export interface FileEventLogOptions {
  /** Required to create a file; when opening, it must match the file's header. */
  sessionId?: string;
  /** Open without writing: no repair, no append. */
  readOnly?: boolean;
  clock?: Clock;
  logger?: Logger;
  durability?: DurabilityOptions;
  /** In-memory retention (default 10,000 events and 8 MiB); older events are read from the file. */
  retention?: RetentionOptions;
  /** Largest event in bytes of compact JSON: 1 KiB to 8 MiB, default 1 MiB. */
  maxEventBytes?: number;
  /** Default queue bound of a live watcher. */
  queueLimit?: number;
  /**
   * Writable open of a damaged log none of whose events survives the damage (a bad header or first
   * record): refuse it with `log_corrupt` and leave the file as it is, instead of repairing it to an
   * empty log. A crash tears a tail, not a whole history: what is left may still be read by hand.
   */
  refuseRepairToNothing?: boolean;
}

const DEFAULT_RETENTION: RetentionOptions = { maxEvents: 10_000, maxBytes: 8 * 1024 * 1024 };

function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

export class FileEventLog implements EventLog {
  readonly sessionId: string;
  readonly path: string;
  readonly readOnly: boolean;
  /** What the opening scan found wrong (a torn or corrupt tail), each with its byte offset. */
  readonly warnings: readonly LogWarning[];
  /** The broker, exposed for tests and metrics. */
  readonly broker: EventBroker;
  private readonly clock: Clock;
  readonly maxEventBytes: number;
  private readonly writer: LogWriter | undefined;
  private readonly scan: LogScan;
  private closing: Promise<void> | undefined;
  /** Releases the writer's lock (spec/event-log.md §2); nothing to release for a read-only log. */
  private unlock: () => void = () => undefined;

  private constructor(path: string, scan: LogScan, sessionId: string, options: FileEventLogOptions, writer: (log: FileEventLog) => LogWriter | undefined) {
    this.path = path;
    this.scan = scan;
    this.sessionId = sessionId;
    this.readOnly = options.readOnly === true;
    this.warnings = scan.warnings;
    this.clock = options.clock ?? systemClock;
    this.maxEventBytes = resolveMaxEventBytes(options.maxEventBytes);
    const baseSeq = scan.header?.baseSeq ?? 0;
    const cold: ColdSource = {
      firstSeq: () => baseSeq + 1,
      read: (afterSeq, max, maxBytes) => this.readCold(afterSeq, max, maxBytes),
    };
    this.broker = new EventBroker({ retention: options.retention ?? DEFAULT_RETENTION, initialSeq: scan.lastSeq, cold, queueLimit: options.queueLimit });
    this.writer = writer(this);
  }

  /**
   * Creates a new log file; fails (`invalid_params`, `data.exists`) if the file exists (a session
   * id is never reused). `session/new` waits for this, so apart from the open (which must give a
   * FileHandle) the calls are synchronous: each is short (the fdatasync of one small record is the
   * longest, a fraction of a millisecond), where through the thread pool every one would cost a
   * round trip to another thread. `spare`: made ahead for a session not created yet, marked so in
   * its header (spec/event-log.md §6).
   */
  static async create(path: string, options: FileEventLogOptions & { sessionId: string; spare?: boolean }): Promise<FileEventLog> {
    const clock = options.clock ?? systemClock;
    let fh: FileHandle;
    let unlock: () => void;
    try {
      makeDirs(dirname(path), 0o700);
      unlock = lockLogForWriting(path, options.sessionId);
    } catch (err) {
      throw err instanceof TroupeError ? err : logWriteFailed(err);
    }
    try {
      fh = await open(path, 'wx+', 0o600);
    } catch (err) {
      unlock();
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw new TroupeError('invalid_params', `a log already exists at ${path}`, { path, exists: true });
      throw logWriteFailed(err);
    }
    try {
      const header = encodeHeaderRecord({ troupeLog: LOG_FORMAT_VERSION, sessionId: options.sessionId, createdAt: clock.now(), baseSeq: 0, ...(options.spare ? { spare: { pid: process.pid } } : {}) });
      writeAllSync(fh.fd, header, 0);
      fdatasyncSync(fh.fd);
      fsyncDir(dirname(path));
    } catch (err) {
      // No session was made: its empty or half-written file is not left behind (a full disk, say).
      await fh.close();
      rmSync(path, { force: true });
      unlock();
      throw logWriteFailed(err);
    }
    return FileEventLog.fromHandle(path, fh, options, unlock);
  }

  /** Opens an existing log file: writable (repairing a torn tail) unless `readOnly`. Throws `session_not_found` if there is none. */
  static async open(path: string, options: FileEventLogOptions = {}): Promise<FileEventLog> {
    // Locked before the file is even read: opening for writing may repair (truncate) its tail.
    let unlock: (() => void) | undefined;
    try {
      unlock = options.readOnly ? undefined : lockLogForWriting(path, options.sessionId ?? basename(path, LOG_FILE_EXT));
    } catch (err) {
      // A lock that cannot be written (a full disk) is the log that cannot be written, as in create.
      throw err instanceof TroupeError ? err : logWriteFailed(err);
    }
    let fh: FileHandle;
    try {
      fh = await open(path, options.readOnly ? 'r' : 'r+');
    } catch (err) {
      unlock?.();
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new TroupeError('session_not_found', `no log at ${path}`, { path, sessionId: options.sessionId, missing: true });
      throw err;
    }
    return FileEventLog.fromHandle(path, fh, options, unlock);
  }

  /** Opens the log of `sessionId` under a sessions directory, creating it if `create` is set and it does not exist. */
  static async forSession(sessionsDir: string, sessionId: string, options: FileEventLogOptions & { create?: boolean } = {}): Promise<FileEventLog> {
    const path = sessionLogPath(sessionsDir, sessionId);
    try {
      return await FileEventLog.open(path, { ...options, sessionId });
    } catch (err) {
      if (options.create && err instanceof TroupeError && err.code === 'session_not_found' && err.data.missing === true) return FileEventLog.create(path, { ...options, sessionId });
      throw err;
    }
  }

  private static async fromHandle(path: string, fh: FileHandle, options: FileEventLogOptions, unlock?: () => void): Promise<FileEventLog> {
    const logger = options.logger ?? silentLogger;
    try {
      let scan = scanFd(fh.fd, path);
      const warnings = scan.warnings;
      for (const w of scan.warnings) logger.warn(w.message, { path, offset: w.offset, droppedBytes: w.droppedBytes, reason: w.reason });
      const sessionId = scan.header?.sessionId ?? options.sessionId;
      if (sessionId === undefined) throw new TroupeError('log_corrupt', `${path} has no valid header and no session id was given`, { path });
      if (options.sessionId !== undefined && options.sessionId !== sessionId) {
        throw new TroupeError('log_corrupt', `${path} belongs to session ${sessionId}, not ${options.sessionId}`, { path, sessionId });
      }
      if (scan.header?.tombstone && !options.readOnly) {
        throw new TroupeError('session_not_found', `session ${sessionId} was deleted; its log is a tombstone`, { path, sessionId, deleted: true });
      }
      const w = options.refuseRepairToNothing && !options.readOnly ? damageLeavingNothing(scan) : undefined;
      if (w) {
        throw new TroupeError('log_corrupt', `${path} is damaged from byte ${w.offset} (${w.reason}) and no event of it is readable; it is left as it is`, { path, sessionId, offset: w.offset, reason: w.reason });
      }
      if (options.readOnly) {
        await fh.close();
        return new FileEventLog(path, scan, sessionId, options, () => undefined);
      }
      if (scan.validBytes < scan.fileBytes || !scan.header) {
        try {
          if (scan.validBytes < scan.fileBytes) {
            await fh.truncate(scan.validBytes);
            logger.warn(`truncated ${path} to ${scan.validBytes} bytes`, { path });
          }
          if (!scan.header) {
            // Not even the header survived (a crash during creation): start the file again.
            const header = encodeHeaderRecord({ troupeLog: LOG_FORMAT_VERSION, sessionId, createdAt: (options.clock ?? systemClock).now(), baseSeq: 0 });
            // Whole, or the error: a write that took part of it (a full disk) went unnoticed, and the
            // log took events after a torn header, which no reader could then read.
            writeAllSync(fh.fd, header, 0);
          }
          await fh.datasync();
        } catch (err) {
          // The repair is the log's first write: its failure is the log's (a full or failing disk).
          throw logWriteFailed(err);
        }
        if (!scan.header) scan = scanFd(fh.fd, path);
      }
      const policy = resolveDurability(options.durability);
      const checkpoints = scan.checkpoints;
      const repaired = scan;
      const log = new FileEventLog(path, { ...repaired, warnings }, sessionId, options, () =>
        new LogWriter(fh, repaired.validBytes, repaired.lastSeq, policy, options.clock ?? systemClock, logger, (seq, off) => checkpoints.add(seq, off)),
      );
      if (unlock) log.unlock = unlock;
      return log;
    } catch (err) {
      await fh.close().catch(() => undefined);
      unlock?.();
      throw err;
    }
  }

  lastSeq(): number {
    return this.broker.lastSeq();
  }

  /** Highest seq evicted from memory (older events are read from the file). */
  droppedThrough(): number {
    return this.broker.droppedThrough();
  }

  /** Highest seq known to be on stable storage. */
  durableSeq(): number {
    return this.writer ? this.writer.durableSeq() : this.scan.lastSeq;
  }

  /** Writer counters (batches written, fdatasyncs, bytes); zeros for a read-only log. */
  stats(): { writes: number; syncs: number; writtenBytes: number; writtenSeq: number; durableSeq: number } {
    return this.writer?.stats() ?? { writes: 0, syncs: 0, writtenBytes: this.scan.validBytes, writtenSeq: this.scan.lastSeq, durableSeq: this.scan.lastSeq };
  }

  check(input: AgentEventInput): void {
    prepareEvent(input, this.sessionId, this.maxEventBytes);
  }

  failure(): TroupeError | undefined {
    return this.writer?.error();
  }

  onFailure(listener: (err: TroupeError) => void): void {
    const writer = this.writer;
    if (!writer) return;
    const earlier = writer.onFailure;
    writer.onFailure = earlier ? (err) => (earlier(err), listener(err)) : listener;
  }

  append(input: AgentEventInput): AgentEvent {
    if (!this.writer) throw new TroupeError('internal_error', `${this.path} is open read-only`, { path: this.path });
    if (this.closing || this.broker.isClosed()) throw new TroupeError('session_closed', 'the event log is closed', { sessionId: this.sessionId });
    const failure = this.writer.error();
    if (failure) throw failure;
    const prepared = prepareEvent(input, this.sessionId, this.maxEventBytes);
    const event = stampEvent(prepared, this.broker.lastSeq() + 1, this.clock.now());
    this.writer.enqueue(event, prepared.bytes);
    this.broker.publish(event, prepared.bytes);
    return event;
  }

  writePending(): void {
    this.writer?.writePendingSync();
  }

  /**
   * Hands over the bytes of every record written from now on (whole records, exactly as in the
   * file), with the seqs they hold, so that they can be forwarded without being encoded again.
   * Returns the last seq written before the call: later events come through `listener`. One
   * listener per log; undefined for a read-only log.
   */
  forwardRecords(listener: (records: Buffer, firstSeq: number, lastSeq: number) => void): number | undefined {
    if (!this.writer) return undefined;
    this.writer.onWritten = listener;
    return this.writer.writtenSeq();
  }

  /**
   * Makes what is appended durable now, on this thread, unless a write is already in flight (then
   * `whenDurable` waits for it as usual): for a barrier a request waits on with nothing else to do.
   */
  syncNow(): void {
    this.writer?.syncNow();
  }

  whenDurable(seq: number): Promise<void> {
    try {
      this.broker.checkCursor(seq);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.writer ? this.writer.whenDurable(seq) : Promise.resolve();
  }

  readAfter(cursor: number, options?: ReadOptions): Promise<EventPage> {
    return this.broker.readAfter(cursor, options);
  }

  subscribe(cursor: number, options?: { queueLimit?: number }): EventWatcher {
    return this.broker.subscribe(cursor, options);
  }

  /** Stops accepting events, writes and syncs what was accepted, closes the file; watchers drain and end. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.broker.close();
      try {
        await this.writer?.close();
      } finally {
        this.unlock();
      }
    })();
    return this.closing;
  }

  private async readCold(afterSeq: number, max: number, maxBytes?: number): Promise<AgentEvent[]> {
    if (this.writer && afterSeq + 1 > this.writer.writtenSeq()) await this.writer.flushWrites();
    const end = this.writer ? this.writer.writtenBytes() : this.scan.validBytes;
    return readEventRange(this.path, this.scan.checkpoints, afterSeq, max, end, maxBytes);
  }
}
