/**
 * Budgets over what SSE streams keep for `Last-Event-ID` resume (spec/transport.md §4, §7): each
 * stream keeps up to `retainBytes`, but 1024 session streams of one connection could keep 8 GiB. A
 * connection's streams together keep at most `retainConnectionBytes`, all connections together at
 * most `retainTotalBytes`; beyond, the holders keeping most give up their oldest delivered events,
 * as one stream over its own limit does. A resume from before them gets `_troupe/replay_gap`.
 */

/** Something that keeps delivered output for resume: a stream, or a connection of streams. */
export interface RetentionHolder {
  /** Bytes kept for resume now. */
  readonly retained: number;
  /** Lets go of the oldest kept events, about `bytes` of them; returns the bytes let go. */
  shed(bytes: number): number;
}

/**
 * Brings holders that together keep `total` bytes down under `budget`: from the one keeping most,
 * then the next. A sixteenth of the budget more is let go, so that a connection streaming at its
 * budget sorts its streams once per that much output, not once per event.
 */
export function keepWithin(holders: Iterable<RetentionHolder>, total: number, budget: number): number {
  if (total <= budget) return 0;
  return shedLargestFirst(holders, total - budget + Math.floor(budget / 16));
}

/** Lets go of about `bytes` kept by `holders`, from the one keeping most; returns the bytes let go. */
export function shedLargestFirst(holders: Iterable<RetentionHolder>, bytes: number): number {
  const largestFirst = [...holders].filter((h) => h.retained > 0).sort((a, b) => b.retained - a.retained);
  let freed = 0;
  for (const h of largestFirst) {
    if (freed >= bytes) break;
    freed += h.shed(bytes - freed);
  }
  return freed;
}
