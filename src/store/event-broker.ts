/**
 * The cursor broker of one session: bounded in-memory retention of the newest events, paged reads
 * and watchers (replay, then live) addressed by `seq`. Older events come from a `ColdSource` (the
 * durable log) when there is one. Semantics: spec/event-log.md §4.
 */
import type { AgentEvent } from '../core/events.js';
import type { EventPage, ReadOptions } from '../core/ports.js';
import { TroupeError } from '../core/errors.js';
import { BrokerWatcher, type QueueLimits } from './event-watcher.js';
import type { QueueBudget } from './queue-budget.js';

/** Durable history the broker falls back to for events it no longer retains. */
export interface ColdSource {
  /** The lowest seq the source can serve, or `undefined` if it serves none. It serves every seq from there up to the broker's `droppedThrough`. */
  firstSeq(): number | undefined;
  /**
   * Up to `max` consecutive events starting at `afterSeq + 1`, and, when `maxBytes` is given, no
   * more than about that many bytes of them (at least one event).
   */
  read(afterSeq: number, max: number, maxBytes?: number): Promise<AgentEvent[]>;
}

export interface RetentionOptions {
  /** Most events kept in memory (default: unbounded). */
  maxEvents?: number;
  /** Most bytes (compact JSON) kept in memory (default: unbounded). */
  maxBytes?: number;
}

export interface BrokerOptions {
  retention?: RetentionOptions;
  /** The highest seq that exists before the broker starts (a reopened log). */
  initialSeq?: number;
  cold?: ColdSource;
  /** Default queue bound of a live watcher: events. */
  queueLimit?: number;
  /** Default queue bound of a live watcher: bytes, as `publish` is told them (default: unbounded). */
  queueMaxBytes?: number;
}

export const DEFAULT_QUEUE_LIMIT = 10_000;
export const DEFAULT_PAGE_LIMIT = 1000;
export const DEFAULT_SCAN_LIMIT = 10_000;

function positiveInt(v: number | undefined, fallback: number, name: string): number {
  if (v === undefined) return fallback;
  if (v === Infinity) return v;
  if (!Number.isInteger(v) || v < 1) throw new TroupeError('invalid_params', `${name} must be a positive integer, got ${v}`);
  return v;
}

/** Throws `invalid_cursor` for a malformed cursor or one beyond `lastSeq` (a broker's, or a feed's not yet open). */
export function checkFeedCursor(cursor: number, lastSeq: number): void {
  if (!Number.isSafeInteger(cursor) || cursor < 0) throw new TroupeError('invalid_cursor', `cursor must be a non-negative integer, got ${cursor}`, { cursor });
  if (cursor > lastSeq) throw new TroupeError('invalid_cursor', `cursor ${cursor} is beyond the latest seq ${lastSeq}`, { cursor, lastSeq });
}

export class EventBroker {
  private last: number;
  private dropped: number;
  /** Retained events from `head` on; the slots before it were evicted and are let go (undefined). */
  private readonly ring: (AgentEvent | undefined)[] = [];
  private readonly sizes: number[] = [];
  private head = 0;
  private retainedBytes = 0;
  private readonly maxEvents: number;
  private readonly maxBytes: number;
  private readonly queueLimits: QueueLimits;
  private readonly live = new Set<BrokerWatcher>();
  private ended = false;
  readonly cold: ColdSource | undefined;

  constructor(options: BrokerOptions = {}) {
    this.maxEvents = positiveInt(options.retention?.maxEvents, Infinity, 'retention.maxEvents');
    this.maxBytes = positiveInt(options.retention?.maxBytes, Infinity, 'retention.maxBytes');
    this.queueLimits = {
      events: positiveInt(options.queueLimit, DEFAULT_QUEUE_LIMIT, 'queueLimit'),
      bytes: positiveInt(options.queueMaxBytes, Infinity, 'queueMaxBytes'),
    };
    this.last = options.initialSeq ?? 0;
    this.dropped = this.last;
    this.cold = options.cold;
  }

  lastSeq(): number {
    return this.last;
  }

  /** The highest seq evicted from memory (events up to here come from the cold source, if any). */
  droppedThrough(): number {
    return this.dropped;
  }

  isClosed(): boolean {
    return this.ended;
  }

  /** Adds the next event (its seq must be `lastSeq() + 1`) and hands it to every live watcher. */
  publish(event: AgentEvent, bytes: number): void {
    if (this.ended) throw new TroupeError('session_closed', 'the event log is closed');
    if (event.seq !== this.last + 1) throw new TroupeError('internal_error', `broker expected seq ${this.last + 1}, got ${event.seq}`);
    this.last = event.seq;
    this.ring.push(event);
    this.sizes.push(bytes);
    this.retainedBytes += bytes;
    this.evict();
    for (const w of this.live) w.offer(event, bytes);
  }

  private evict(): void {
    let n = this.ring.length - this.head;
    while (n > 0 && (n > this.maxEvents || this.retainedBytes > this.maxBytes)) {
      this.retainedBytes -= this.sizes[this.head]!;
      this.dropped = this.ring[this.head]!.seq;
      // Let go now, not at the next compaction: up to a thousand evicted events (of a megabyte, a
      // tool's output) stayed reachable from here beyond the retention bound.
      this.ring[this.head] = undefined;
      this.head++;
      n--;
    }
    // Compact now and then, so that eviction stays O(1) amortised.
    if (this.head > 1024 && this.head * 2 > this.ring.length) {
      this.ring.splice(0, this.head);
      this.sizes.splice(0, this.head);
      this.head = 0;
    }
  }

  /** Where the retained event with this seq is in `ring` and `sizes`. */
  private slot(seq: number): number {
    return this.head + (seq - this.dropped - 1);
  }

  /** The retained event with this seq, if memory still has it. */
  retained(seq: number): AgentEvent | undefined {
    if (seq <= this.dropped || seq > this.last) return undefined;
    return this.ring[this.slot(seq)];
  }

  /** Whether events after `cursor` can still be served (from memory or the cold source). */
  canServe(cursor: number): boolean {
    if (cursor >= this.dropped) return true;
    const first = this.cold?.firstSeq();
    return first !== undefined && first <= cursor + 1;
  }

  /** Throws `invalid_cursor` for a malformed cursor or one beyond the latest seq. */
  checkCursor(cursor: number): void {
    checkFeedCursor(cursor, this.last);
  }

  gapError(cursor: number): TroupeError {
    return new TroupeError('replay_gap', `events after seq ${cursor} are no longer available (retained from ${this.dropped + 1})`, {
      cursor,
      droppedThrough: this.dropped,
    });
  }

  async readAfter(cursor: number, options: ReadOptions = {}): Promise<EventPage> {
    this.checkCursor(cursor);
    const limit = positiveInt(options.limit, DEFAULT_PAGE_LIMIT, 'limit');
    const scanLimit = positiveInt(options.scanLimit, Math.max(limit, DEFAULT_SCAN_LIMIT), 'scanLimit');
    const maxBytes = positiveInt(options.maxBytes, Infinity, 'maxBytes');
    const filter = options.filter;
    const events: AgentEvent[] = [];
    let pos = cursor;
    let scanned = 0;
    let bytes = 0;
    while (pos < this.last && scanned < scanLimit && events.length < limit && bytes < maxBytes) {
      if (pos >= this.dropped) {
        const at = this.slot(pos + 1);
        const e = this.ring[at]!;
        const kept = !filter || filter(e);
        // As the file bounds its batches: the event that would go over is the next page's first.
        if (kept && events.length > 0 && bytes + this.sizes[at]! > maxBytes) break;
        pos = e.seq;
        scanned++;
        if (kept) {
          events.push(e);
          bytes += this.sizes[at]!;
        }
        continue;
      }
      if (!this.canServe(pos)) throw this.gapError(pos);
      const batch = await this.cold!.read(pos, Math.min(scanLimit - scanned, 4096), maxBytes === Infinity ? undefined : maxBytes - bytes);
      if (batch.length === 0 || batch[0]!.seq !== pos + 1) throw this.gapError(pos);
      for (const e of batch) {
        if (scanned >= scanLimit || events.length >= limit) break;
        pos = e.seq;
        scanned++;
        if (!filter || filter(e)) events.push(e);
      }
      // The file bounded the batch by what the page had left; its events' sizes are not known here.
      if (maxBytes !== Infinity) bytes = maxBytes;
    }
    return { events, cursor: pos, hasMore: pos < this.last };
  }

  /** Replay after `cursor`, then live events. Throws `invalid_cursor` at once; a gap surfaces from the iteration. */
  subscribe(cursor: number, options: { queueLimit?: number; queueMaxBytes?: number; queueBudget?: QueueBudget } = {}): BrokerWatcher {
    this.checkCursor(cursor);
    const events = positiveInt(options.queueLimit, this.queueLimits.events, 'queueLimit');
    const bytes = positiveInt(options.queueMaxBytes, this.queueLimits.bytes, 'queueMaxBytes');
    return new BrokerWatcher(this, cursor, { events, bytes, ...(options.queueBudget ? { budget: options.queueBudget } : {}) });
  }

  /** Called by a watcher that has been handed every event that exists: from now on it is pushed events. */
  goLive(w: BrokerWatcher): void {
    if (!this.ended) this.live.add(w);
  }

  leave(w: BrokerWatcher): void {
    this.live.delete(w);
  }

  /** Accepts no more events; watchers still receive every event published so far, then end. */
  close(): void {
    if (this.ended) return;
    this.ended = true;
    for (const w of this.live) w.brokerClosed();
    this.live.clear();
  }

  /** Bytes of events pushed to live watchers and not yet taken by them (for metrics). */
  queuedBytes(): number {
    let n = 0;
    for (const w of this.live) n += w.queuedBytes();
    return n;
  }

  /** Number of watchers currently live (for tests and metrics). */
  liveWatchers(): number {
    return this.live.size;
  }
}
