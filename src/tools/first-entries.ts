/**
 * The first entries of a directory in a given order, holding at most twice as many as are kept.
 *
 * readdir returns a directory's every entry at once: a directory of millions of files (a cache, a
 * mail store, generated data) cost hundreds of MiB (about 250 bytes an entry), and a session
 * process, whose heap the daemon bounds (`--child-memory-mb`, 512 by default), died of it, though
 * list_dir shows 1000 entries and a search examines a bounded number. Here the directory is
 * streamed (opendir) and only the first `max` entries in `order` are kept: the same entries, in the
 * same order, as sorting them all and taking the first `max`.
 */
import type { Dirent } from 'node:fs';
import { opendir } from 'node:fs/promises';

/** Entries read from the system per call (opendir's default is 32). */
const BATCH = 1024;

export interface FirstEntries<T> {
  /** At most `max` entries, the first in `order`; of equal ones, those read first. */
  kept: T[];
  /** How many entries the directory has. */
  total: number;
}

/**
 * The first `max` entries of `dir` (names as bytes: one that is not UTF-8 opens only so), each made
 * into a `T` by `make`, sorted by `order`. Rejects as readdir would (ENOENT, ENOTDIR, EACCES, …), and
 * when `signal` aborts.
 */
/**
 * The entries of `dir`, streamed (BATCH at a time), their names as the bytes the file system has.
 * The iterator closes the directory however the caller's loop ends.
 */
export async function dirEntries(dir: string | Buffer): Promise<AsyncIterable<Dirent<Buffer>>> {
  // `encoding: 'buffer'` is honoured at run time; the types only know string encodings.
  const handle = await opendir(dir as string, { encoding: 'buffer' as BufferEncoding, bufferSize: BATCH });
  return handle as AsyncIterable<Dirent> as AsyncIterable<Dirent<Buffer>>;
}

export async function firstEntries<T>(
  dir: string | Buffer,
  max: number,
  make: (entry: Dirent<Buffer>) => T,
  order: (a: T, b: T) => number,
  signal?: AbortSignal,
): Promise<FirstEntries<T>> {
  signal?.throwIfAborted();
  const entries = await dirEntries(dir);
  // Entries are gathered unsorted; at twice `max`, sorted and cut to `max`, and the last one kept is
  // then the bound: an entry not before it can no longer be kept. O(n log max) in all, and at most
  // 2 × `max` held. (Inserting each entry in its place cost O(max) each: a search of a 200000-entry
  // directory with its 100000-entry budget took 50 s, where readdir and one sort took 11.) Array sort is stable:
  // of equal entries, those read first stay first.
  const kept: T[] = [];
  let bound: T | undefined;
  let total = 0;
  for await (const entry of entries) {
    if (++total % BATCH === 0) signal?.throwIfAborted();
    if (max <= 0) continue;
    const item = make(entry);
    if (bound !== undefined && order(item, bound) >= 0) continue;
    kept.push(item);
    if (kept.length >= 2 * max) {
      kept.sort(order);
      kept.length = max;
      bound = kept[max - 1];
    }
  }
  kept.sort(order);
  if (kept.length > max) kept.length = max;
  return { kept, total };
}
