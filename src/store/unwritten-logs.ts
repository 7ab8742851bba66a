/**
 * The logs of this process with events enqueued and not yet written to their files, so that output
 * carrying those events can put them in the file first (spec/event-log.md §3: an event may be sent
 * live before it is durable, never before it is in the file). Apart from the writer, so that the
 * agent's stdout can call it without loading the log's code before a session needs it.
 */
interface Unwritten {
  /** Writes the enqueued events now; a failure fails that log, and does not throw. */
  writePendingSync(): void;
}

const unwritten = new Set<Unwritten>();

export function markUnwritten(log: Unwritten): void {
  unwritten.add(log);
}

export function markWritten(log: Unwritten): void {
  unwritten.delete(log);
}

/** Writes every log's enqueued events to its file now, synchronously. */
export function writePendingLogs(): void {
  if (unwritten.size === 0) return;
  // Each write takes its log out of the set: deleting the visited entry is safe while iterating.
  for (const log of unwritten) log.writePendingSync();
}
