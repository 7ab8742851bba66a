/**
 * One byte budget shared by the live queues of many watchers, of any number of brokers: each queue
 * has its own bound, but a bound per queue times the number of readers (the daemon's /v1 event
 * streams: 8 MiB × 256) is no bound a machine can pay. At the budget, the queue that holds the most
 * overflows, exactly as one over its own bound does (its reader goes on from the log).
 */

/** A queue under the budget (a live watcher). */
export interface BudgetedQueue {
  /** Bytes it holds now, as last reported with {@link QueueBudget.changed}. */
  queuedBytes(): number;
  /** Drops its queue and ends its live feed with `event_overflow`; reports its bytes gone. */
  overflowBudget(budgetBytes: number): void;
}

export class QueueBudget {
  private total = 0;
  /** Queues holding bytes now: the candidates when room must be made. */
  private readonly holding = new Set<BudgetedQueue>();

  constructor(readonly maxBytes: number) {
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 1) throw new RangeError(`a queue budget must be a positive integer, got ${maxBytes}`);
  }

  /** Bytes all queues hold together. */
  get queuedBytes(): number {
    return this.total;
  }

  /** `q`'s queue grew (or shrank, negative) by `delta` bytes. */
  changed(q: BudgetedQueue, delta: number): void {
    this.total += delta;
    if (q.queuedBytes() > 0) this.holding.add(q);
    else this.holding.delete(q);
  }

  /**
   * Makes room for `bytes` more: overflows the queue holding most, then the next, until they fit or
   * no queue holds anything (one event larger than the budget alone is still queued, as one larger
   * than a queue's own bound is). The queue about to grow may be the one that goes.
   */
  makeRoom(bytes: number): void {
    while (this.total + bytes > this.maxBytes && this.holding.size > 0) {
      let largest: BudgetedQueue | undefined;
      for (const q of this.holding) if (!largest || q.queuedBytes() > largest.queuedBytes()) largest = q;
      // Removed here too: a queue that failed to report its drop must not be picked forever.
      this.holding.delete(largest!);
      largest!.overflowBudget(this.maxBytes);
    }
  }
}
