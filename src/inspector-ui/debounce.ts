/** The page's debounce: calls gathered, but a busy session still redrawn while it runs. */

/**
 * Runs `fn` once calls have paused for `ms`, but no later than `maxMs` after the first call not yet
 * served: a session whose log never pauses that long (a reply streaming a chunk every 10 ms, many
 * busy sessions moving their machines) must still be redrawn while it runs, not only once it rests.
 */
export function debounce(fn: () => void, ms: number, maxMs: number): () => void {
  let t: number | undefined;
  let first: number | undefined;
  const run = () => {
    first = undefined;
    fn();
  };
  return () => {
    window.clearTimeout(t);
    const now = Date.now();
    first ??= now;
    t = window.setTimeout(run, Math.max(0, Math.min(ms, first + maxMs - now)));
  };
}
