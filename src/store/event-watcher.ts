/**
 * One watcher of a broker. It first catches up by pulling (from retention, else from the cold
 * source), so a replay never counts against its queue; once it has been handed the latest event it
 * turns live, and the broker pushes new events into its bounded queue. The switch happens in the
 * same synchronous step as the check that nothing is left to pull, which is what makes the seam
 * between replay and live free of holes and duplicates.
 */
import type { AgentEvent } from '../core/events.js';
import type { EventWatcher } from '../core/ports.js';
import { TroupeError } from '../core/errors.js';
import type { EventBroker } from './event-broker.js';
import type { BudgetedQueue, QueueBudget } from './queue-budget.js';

const DONE: IteratorResult<AgentEvent> = { value: undefined, done: true };
/** Most events a catch-up reads from the cold source at once. */
export const COLD_BATCH = 512;
/**
 * And bytes: a batch is held until the consumer takes its last event, and 512 events of a megabyte
 * (tool outputs) were half a gigabyte for one stream that had overflowed and went on from the log.
 */
export const COLD_BATCH_BYTES = 4 * 1024 * 1024;

/** How far a live watcher may fall behind before it overflows: events, and their bytes. */
export interface QueueLimits {
  events: number;
  bytes: number;
  /** A byte budget this queue shares with others (every /v1 event stream of the daemon). */
  budget?: QueueBudget;
}

interface Waiter {
  resolve(r: IteratorResult<AgentEvent>): void;
  reject(err: unknown): void;
}

export class BrokerWatcher implements EventWatcher, AsyncIterator<AgentEvent>, BudgetedQueue {
  private pos: number;
  private live = false;
  /** Events pushed while live; those before `qHead` were taken and are let go (undefined). */
  private queue: (AgentEvent | undefined)[] = [];
  private sizes: number[] = [];
  private qHead = 0;
  /** Bytes (as the broker was told them) of the events waiting in `queue`. */
  private qBytes = 0;
  private prefetched: AgentEvent[] = [];
  private pHead = 0;
  private failure: TroupeError | undefined;
  private finished = false;
  private waiter: Waiter | undefined;
  private pulling: Promise<IteratorResult<AgentEvent>> | undefined;

  constructor(
    private readonly broker: EventBroker,
    cursor: number,
    private readonly limits: QueueLimits,
  ) {
    this.pos = cursor;
    this.maybeGoLive();
  }

  /** Bytes of the events pushed to this watcher that it has not taken yet. */
  queuedBytes(): number {
    return this.qBytes;
  }

  /** Events read ahead from the cold source and not yet handed to the consumer (what a catch-up holds). */
  readAhead(): number {
    return this.prefetched.length - this.pHead;
  }

  /** The seq of the last event handed to the consumer. */
  position(): number {
    return this.pos;
  }

  [Symbol.asyncIterator](): AsyncIterator<AgentEvent> {
    return this;
  }

  next(): Promise<IteratorResult<AgentEvent>> {
    // Concurrent next() calls are served in order, one after the other.
    const run = this.pulling ? this.pulling.then(() => this.pull(), () => this.pull()) : this.pull();
    this.pulling = run;
    const clear = (): void => {
      if (this.pulling === run) this.pulling = undefined;
    };
    run.then(clear, clear);
    return run;
  }

  return(): Promise<IteratorResult<AgentEvent>> {
    this.close();
    return Promise.resolve(DONE);
  }

  /** Ends this watcher only; the session and other watchers are not affected. */
  close(): void {
    if (this.finished) return;
    this.finish();
    this.failure = undefined;
    const w = this.waiter;
    this.waiter = undefined;
    w?.resolve(DONE);
  }

  private finish(): void {
    this.finished = true;
    this.live = false;
    this.dropQueue();
    this.prefetched = [];
    this.broker.leave(this);
  }

  private deliver(e: AgentEvent): IteratorResult<AgentEvent> {
    this.pos = e.seq;
    this.maybeGoLive();
    return { value: e, done: false };
  }

  private maybeGoLive(): void {
    if (!this.live && !this.finished && this.pos === this.broker.lastSeq() && !this.broker.isClosed()) {
      this.live = true;
      this.broker.goLive(this);
    }
  }

  private async pull(): Promise<IteratorResult<AgentEvent>> {
    for (;;) {
      if (this.finished) return DONE;
      if (this.failure) {
        const err = this.failure;
        this.failure = undefined;
        this.finish();
        throw err;
      }
      if (this.live) {
        if (this.qHead < this.queue.length) {
          const e = this.queue[this.qHead]!;
          // Let go at once: a queue that never runs empty (a reader one event behind all along)
          // would otherwise hold every event it ever passed on, beyond what qBytes counts.
          this.queue[this.qHead] = undefined;
          this.addQueued(-this.sizes[this.qHead++]!);
          if (this.qHead === this.queue.length) this.dropQueue();
          else if (this.qHead > 1024 && this.qHead * 2 > this.queue.length) {
            this.queue.splice(0, this.qHead);
            this.sizes.splice(0, this.qHead);
            this.qHead = 0;
          }
          return this.deliver(e);
        }
        if (this.broker.isClosed()) {
          this.finish();
          return DONE;
        }
        return new Promise<IteratorResult<AgentEvent>>((resolve, reject) => {
          this.waiter = { resolve, reject };
        });
      }
      if (this.pHead < this.prefetched.length) return this.deliver(this.prefetched[this.pHead++]!);
      if (this.pos >= this.broker.lastSeq()) {
        // Only reachable once the broker is closed: an open broker would have made us live.
        this.finish();
        return DONE;
      }
      const e = this.broker.retained(this.pos + 1);
      if (e) return this.deliver(e);
      if (!this.broker.canServe(this.pos)) {
        this.failure = this.broker.gapError(this.pos);
        continue;
      }
      const from = this.pos;
      const batch = await this.broker.cold!.read(from, COLD_BATCH, COLD_BATCH_BYTES);
      if (this.finished) return DONE;
      if (batch.length === 0 || batch[0]!.seq !== from + 1) {
        this.failure = this.broker.gapError(from);
        continue;
      }
      this.prefetched = batch;
      this.pHead = 0;
    }
  }

  private dropQueue(): void {
    this.queue = [];
    this.sizes = [];
    this.qHead = 0;
    this.addQueued(-this.qBytes);
  }

  private addQueued(delta: number): void {
    if (delta === 0) return;
    this.qBytes += delta;
    this.limits.budget?.changed(this, delta);
  }

  /**
   * Ends the live feed: the queue goes, and the consumer's next pull throws `event_overflow` once
   * (its stream then goes on from the log). finish() marks the watcher finished; the error must
   * still be delivered, so it is marked open again.
   */
  private overflow(message: string, data: Record<string, unknown>): void {
    this.finish();
    this.failure = new TroupeError('event_overflow', message, { ...data, position: this.pos });
    this.finished = false;
  }

  /** {@link BudgetedQueue}: the shared budget is full and this queue holds the most. */
  overflowBudget(budgetBytes: number): void {
    this.overflow(`the live queues of all watchers reached their shared budget of ${budgetBytes} bytes and this one held the most; its stream was ended`, { budgetBytes });
  }

  /**
   * Called by the broker for each new event while live, with its size. The queue holds at most
   * `limits.events` events and `limits.bytes` bytes (one event larger than that alone still fits): a
   * count alone let a slow reader of large events (tool outputs of a megabyte) hold gigabytes.
   */
  offer(e: AgentEvent, bytes: number): void {
    const w = this.waiter;
    if (w) {
      this.waiter = undefined;
      w.resolve(this.deliver(e));
      return;
    }
    // The shared budget first: it may overflow this very queue (the one holding most).
    this.limits.budget?.makeRoom(bytes);
    if (this.failure) return;
    const waiting = this.queue.length - this.qHead;
    if (waiting >= this.limits.events || (waiting > 0 && this.qBytes + bytes > this.limits.bytes)) {
      this.overflow(`watcher fell more than ${this.limits.events} events or ${this.limits.bytes} bytes behind; its stream was ended`, {
        queueLimit: this.limits.events,
        queueMaxBytes: this.limits.bytes,
      });
      return;
    }
    this.queue.push(e);
    this.sizes.push(bytes);
    this.addQueued(bytes);
  }

  /** Called by the broker when it closes: the queue drains, then the iteration ends. */
  brokerClosed(): void {
    if (this.qHead < this.queue.length) return;
    const w = this.waiter;
    if (w) {
      this.waiter = undefined;
      this.finish();
      w.resolve(DONE);
    }
  }
}
