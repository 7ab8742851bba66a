/**
 * One run at a time per key: while a run for `key` is in flight, asking again gets that run's
 * promise instead of a second run (two deletes of one session are one delete). The key is
 * forgotten once the run settles.
 */
export function oncePerKey<K>(running: Map<K, Promise<void>>, key: K, run: () => Promise<void>): Promise<void> {
  let current = running.get(key);
  if (!current) {
    current = run().finally(() => running.delete(key));
    running.set(key, current);
  }
  return current;
}
