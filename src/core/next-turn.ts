/**
 * Resolves on the event loop's next turn (after pending I/O): long work done in slices awaits it
 * between slices, so that one request does not hold up every other (a daemon's clients, an agent's
 * streams).
 */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
