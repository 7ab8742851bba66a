/**
 * The writing side of a log file: events queue up, are packed into records (many per record) and
 * written in one `write` per batch at the end of the file; fdatasync follows the durability policy.
 * Writes are synchronous (a write to the page cache takes microseconds); only fdatasync runs on the
 * thread pool, one at a time, so batches grow while the disk is busy (group commit).
 *
 * An event may be published (sent live to a client) before it is durable, but never before it is
 * in the file: a process that writes what it publishes calls `writePendingLogs()` first
 * (unwritten-logs.ts; the agent's stdout does). A process killed at any point (a crash, SIGKILL,
 * out of memory) then leaves a log holding every event any client saw, so a seq a client saw is
 * never given to another event after the restart. Only the machine's crash loses what was written
 * and not synced.
 */
import { fdatasyncSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import type { AgentEvent } from '../core/events.js';
import type { Clock, Logger } from '../core/ports.js';
import { TroupeError } from '../core/errors.js';
import { writeAllSync } from './atomic-write.js';
import type { ResolvedDurability } from './durability.js';
import { writeFailed } from './write-failed.js';
import { encodeEventRecord } from './log-record.codec.js';
import { markUnwritten, markWritten } from './unwritten-logs.js';

/** A record holds at most this many events, or about this many bytes (one larger event gets a record of its own). */
const RECORD_MAX_EVENTS = 1024;
const RECORD_TARGET_BYTES = 256 * 1024;
/** Pending bytes beyond which a write starts without waiting for the timer (bounds memory). */
const EAGER_WRITE_BYTES = 4 * 1024 * 1024;

/** Records ready to be written at the end of the file: their bytes, where each starts, their seqs. */
interface Batch {
  buf: Buffer;
  /** [first seq of a record, its offset in the file] */
  starts: [number, number][];
  firstSeq: number;
  lastSeq: number;
  /** The end of the file once written. */
  end: number;
}

interface Waiter {
  seq: number;
  resolve(): void;
  reject(err: unknown): void;
}

/** A system error writing a log (ENOSPC, EDQUOT, EIO, EFBIG, EACCES…) as `log_write_failed`, its errno in `data.cause`. */
export function logWriteFailed(err: unknown): TroupeError {
  return writeFailed('log_write_failed', "the session's event log", err);
}

export class LogWriter {
  private pending: AgentEvent[] = [];
  private pendingSizes: number[] = [];
  private pendingBytes = 0;
  private written: number;
  private durable: number;
  private end: number;
  private syncDue = false;
  private timer: unknown;
  private immediate: NodeJS.Immediate | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private waiters: Waiter[] = [];
  private failure: TroupeError | undefined;
  private closed = false;
  private writes = 0;
  private syncs = 0;
  /** Called after each batch is written with its bytes (whole records) and the seqs they hold. */
  onWritten: ((records: Buffer, firstSeq: number, lastSeq: number) => void) | undefined;
  /** Called once, when a write or sync fails: the writer accepts nothing more from then on. */
  onFailure: ((err: TroupeError) => void) | undefined;

  constructor(
    private readonly fh: FileHandle,
    endOffset: number,
    lastSeq: number,
    private readonly policy: ResolvedDurability,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly onRecord: (firstSeq: number, offset: number) => void,
  ) {
    this.end = endOffset;
    this.written = this.durable = lastSeq;
  }

  writtenSeq(): number {
    return this.written;
  }
  durableSeq(): number {
    return this.durable;
  }
  /** End of the bytes written so far (readers never look beyond it). */
  writtenBytes(): number {
    return this.end;
  }
  /** Counters for metrics and benchmarks. */
  stats(): { writes: number; syncs: number; writtenBytes: number; writtenSeq: number; durableSeq: number } {
    return { writes: this.writes, syncs: this.syncs, writtenBytes: this.end, writtenSeq: this.written, durableSeq: this.durable };
  }

  /** The write or sync error that stopped this writer, if any. */
  error(): TroupeError | undefined {
    return this.failure;
  }

  enqueue(event: AgentEvent, bytes: number): void {
    if (this.failure) throw this.failure;
    if (this.pending.length === 0) markUnwritten(this);
    this.pending.push(event);
    this.pendingSizes.push(bytes);
    this.pendingBytes += bytes;
    const p = this.policy;
    if (p.sync === 'always' || (p.sync === 'group' && p.isBarrier(event))) {
      this.syncDue = true;
      this.kickSoon();
    } else if (this.pendingBytes >= EAGER_WRITE_BYTES) {
      this.kickSoon();
    } else if (this.timer === undefined) {
      this.timer = this.clock.setTimeout(() => {
        this.timer = undefined;
        if (p.sync === 'group') this.syncDue = true;
        this.kick();
      }, p.groupCommitMs);
    }
  }

  /** Resolves once `seq` is synced; under `never` it asks for a sync. */
  whenDurable(seq: number): Promise<void> {
    if (seq <= this.durable) return Promise.resolve();
    if (this.failure) return Promise.reject(this.failure);
    if (this.policy.sync === 'never') {
      this.syncDue = true;
      this.kickSoon();
    } else if (this.syncDue && !this.running) {
      // A barrier is pending and now someone waits for it (a new session's answer, a turn's result):
      // start its write and sync now rather than on the next turn of the loop. Not at the barrier's
      // append itself: the events appended with it in the same turn (a turn's user_message and
      // turn_started) must go in the same write, or a crash between two writes would split them.
      this.kick();
    }
    return new Promise<void>((resolve, reject) => this.waiters.push({ seq, resolve, reject }));
  }

  /**
   * Writes out (without syncing) everything enqueued so far, so that readers of the file see it. A
   * write is synchronous: this waits for no sync in flight.
   */
  async flushWrites(): Promise<void> {
    this.writePendingSync();
    if (this.failure) throw this.failure;
  }

  /** Writes and syncs everything, then closes the file. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    try {
      while (!this.failure && (this.pending.length > 0 || this.durable < this.written || this.running)) {
        this.syncDue = true;
        this.kick();
        await this.running;
      }
    } finally {
      if (this.immediate) clearImmediate(this.immediate);
      await this.fh.close();
    }
    if (this.failure) throw this.failure;
  }

  private kickSoon(): void {
    this.immediate ??= setImmediate(() => {
      this.immediate = undefined;
      this.kick();
    });
  }

  private kick(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.drain().finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        if (this.pending.length > 0 || (this.syncDue && this.durable < this.written)) this.kick();
      }
    });
  }

  private async drain(): Promise<void> {
    try {
      while (!this.failure && (this.pending.length > 0 || (this.syncDue && this.durable < this.written))) {
        const sync = this.syncDue;
        this.syncDue = false;
        if (this.pending.length > 0) this.writeBatch();
        if (sync) {
          // What is written while the sync runs (writePendingSync) is not covered by it.
          const through = this.written;
          await this.fh.datasync();
          this.synced(through);
        }
      }
    } catch (err) {
      this.fail(err);
    }
  }

  /** Writes the enqueued events to the file now (not synced); a failure fails the log. */
  writePendingSync(): void {
    if (this.failure || this.pending.length === 0) return;
    try {
      this.writeBatch();
    } catch (err) {
      this.fail(err);
    }
  }

  /**
   * Writes and syncs everything enqueued, on this thread, unless a sync is already in flight (then
   * nothing happens: `whenDurable` waits as usual). For a barrier a request waits on with nothing
   * else to do, such as a new session's first event: two thread-pool round trips fewer, for a main
   * thread blocked as long as the fdatasync takes.
   */
  syncNow(): void {
    if (this.running || this.failure || this.closed || (this.pending.length === 0 && this.durable === this.written)) return;
    try {
      if (this.pending.length > 0) this.writeBatch();
      fdatasyncSync(this.fh.fd);
      this.syncDue = false;
      this.synced(this.written);
    } catch (err) {
      this.fail(err);
    }
  }

  /** Everything written through `seq` is on disk: its waiters go on, and no group-commit timer is needed while nothing is pending. */
  private synced(seq: number): void {
    this.syncs++;
    this.durable = seq;
    this.settle();
    // (Not while events written during the sync, by writePendingSync, still wait for theirs.)
    if (this.pending.length === 0 && this.durable === this.written && this.timer !== undefined) {
      this.clock.clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  /** Writes everything enqueued at the end of the file, on this thread; throws the system's error. */
  private writeBatch(): void {
    const batch = this.takeBatch();
    writeAllSync(this.fh.fd, batch.buf, this.end);
    this.commitBatch(batch);
  }

  /** Everything enqueued, as records at the end of the file. */
  private takeBatch(): Batch {
    const events = this.pending;
    const sizes = this.pendingSizes;
    markWritten(this);
    this.pending = [];
    this.pendingSizes = [];
    this.pendingBytes = 0;
    const frames: Buffer[] = [];
    const starts: [number, number][] = [];
    let offset = this.end;
    for (let i = 0; i < events.length; ) {
      let j = i;
      let bytes = 0;
      while (j < events.length && j - i < RECORD_MAX_EVENTS && (j === i || bytes + sizes[j]! <= RECORD_TARGET_BYTES)) bytes += sizes[j++]!;
      const frame = encodeEventRecord(events.slice(i, j));
      starts.push([events[i]!.seq, offset]);
      frames.push(frame);
      offset += frame.length;
      i = j;
    }
    const buf = frames.length === 1 ? frames[0]! : Buffer.concat(frames);
    return { buf, starts, firstSeq: events[0]!.seq, lastSeq: events[events.length - 1]!.seq, end: offset };
  }

  /** A batch is in the file: the readers and the forwarding listener may see it. */
  private commitBatch(batch: Batch): void {
    this.writes++;
    this.end = batch.end;
    this.written = batch.lastSeq;
    for (const [seq, at] of batch.starts) this.onRecord(seq, at);
    this.onWritten?.(batch.buf, batch.firstSeq, this.written);
  }

  private settle(): void {
    if (this.waiters.length === 0) return;
    const keep: Waiter[] = [];
    for (const w of this.waiters) {
      if (w.seq <= this.durable) w.resolve();
      else keep.push(w);
    }
    this.waiters = keep;
  }

  private fail(err: unknown): void {
    const e = logWriteFailed(err);
    this.failure = e;
    markWritten(this); // nothing more is written
    this.logger.error('event log write failed; the log accepts no more events', { error: e.message });
    for (const w of this.waiters) w.reject(e);
    this.waiters = [];
    this.onFailure?.(e);
  }
}
