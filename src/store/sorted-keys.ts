/**
 * A map's keys in an order, kept between calls and brought up to date cheaply: the session index
 * keeps its ids sorted by id for its file (session-index.bytes.ts) and by `before` for its list.
 * Sorting 10,000 of them on every call held the daemon's loop for milliseconds each time.
 *
 * It relies on what the index does with its map: keys are only ever added (a Map iterates in
 * insertion order, so the new ones are its last keys) or the whole map is replaced (another
 * object, sorted again). A key whose place in the order changed must be told (`moved`).
 */

/** New or moved keys put in place one by one; more at once are sorted with them all. */
const FEW_KEYS = 256;

export class SortedKeys<K, V> {
  /** The keys in order, for the map and size they were sorted for. */
  private cached?: { of: ReadonlyMap<K, V>; size: number; keys: K[] };
  /** Keys of the cached map whose place changed since (their values compare differently now). */
  private movedKeys = new Set<K>();

  /**
   * `compare` orders two of the map's [key, value] pairs, a total order. (It is given the values:
   * a sort of 10,000 keys that looked each value up in the map took twice as long.)
   */
  constructor(private readonly compare: (a: readonly [K, V], b: readonly [K, V]) => number) {}

  /** `key`'s value changed in a way that changes its place in the order (kept until the next `of`). */
  moved(key: K): void {
    this.movedKeys.add(key);
  }

  /** `map`'s keys in order. The array is shared: do not change it. */
  of(map: ReadonlyMap<K, V>): readonly K[] {
    const cached = this.cached;
    const size = map.size;
    const moved = this.movedKeys;
    this.movedKeys = new Set();
    if (cached && cached.of === map && cached.size === size && moved.size === 0) return cached.keys;
    let keys: K[];
    if (cached && cached.of === map && cached.size <= size && size - cached.size + moved.size <= FEW_KEYS) {
      keys = cached.keys.slice();
      // A moved key leaves its old place (found by value: its old value is gone), then goes in
      // as a new one. Moved keys are mostly new sessions, near the front of the list's order.
      const placing: K[] = [];
      for (const key of moved) {
        const at = keys.indexOf(key);
        if (at < 0) continue; // added after the cache was made: placed with the new keys below
        keys.splice(at, 1);
        placing.push(key);
      }
      let seen = 0;
      for (const key of map.keys()) if (seen++ >= cached.size) placing.push(key);
      for (const key of placing) {
        const pair = [key, map.get(key)!] as const;
        keys.splice(firstIndex(keys, (k) => this.compare(pair, [k, map.get(k)!]) < 0), 0, key);
      }
    } else {
      keys = [...map].sort(this.compare).map(([key]) => key);
    }
    this.cached = { of: map, size, keys };
    return keys;
  }
}

/** The first index of `sorted` whose key `isAfter` holds for (binary search: once it holds, it holds for the rest). */
export function firstIndex<K>(sorted: readonly K[], isAfter: (key: K) => boolean): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (isAfter(sorted[mid]!)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
