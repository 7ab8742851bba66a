/**
 * The session index file's bytes (spec/event-log.md §6): exactly
 * `JSON.stringify({version, sessions}, null, 1)` with the sessions sorted by id, kept between writes
 * so that a write serializes again only what changed.
 */
import { nextTurn } from '../core/next-turn.js';
import { INDEX_FORMAT_VERSION } from './session-index.codec.js';
import type { SessionEntry } from './session-summary.js';

/** New ids put in place one by one in the sorted ids; more are sorted with them all. */
const FEW_NEW_IDS = 256;
/** Entries per cached block of the file's bytes (~60 KB of them, ~1 ms to serialize). */
const BLOCK_ENTRIES = 256;
const LIST_END = Buffer.from('\n ]\n}\n');
const EMPTY_LIST_END = Buffer.from(']\n}\n');

export class IndexFileBytes {
  /**
   * The file's entries in blocks of BLOCK_ENTRIES consecutive ones (in id order), each serialized
   * into one buffer, kept with the entry objects it holds (entries are never changed in place). A
   * write serializes again only the blocks whose entries changed; ids are time-ordered, so new
   * sessions land in the last block. With 10,000 sessions, serializing them all took ~45 ms, and
   * joining 10,000 cached per-entry buffers (a way tried before) 4 to 40 ms of the daemon's loop per
   * write, with as many buffers for the collector to keep track of.
   */
  private blocks: { entries: SessionEntry[]; bytes: Buffer }[] = [];
  /** The ids sorted, for the map and size they were sorted for (ids are only ever added, or the map replaced). */
  private sortedIds?: { of: Map<string, SessionEntry>; size: number; ids: string[] };

  /**
   * The file's bytes for `entries`, in parts (to be written as they are, never joined), from the
   * cached blocks whose entries did not change. Entries are never changed in place, so the entries
   * taken at the start are a consistent snapshot, and a block is serialized per turn of the loop:
   * the first call serializes them all. Calls must not overlap (the index makes them one at a time).
   */
  async of(entries: Map<string, SessionEntry>): Promise<Buffer[]> {
    const sessions = this.idsInOrder(entries).map((id) => entries.get(id)!);
    const parts: Buffer[] = [Buffer.from(`{\n "version": ${INDEX_FORMAT_VERSION},\n "sessions": [`)];
    const blocks: typeof this.blocks = [];
    let serialized = 0;
    for (let from = 0; from < sessions.length; from += BLOCK_ENTRIES) {
      const held = sessions.slice(from, from + BLOCK_ENTRIES);
      let block = this.blocks[blocks.length];
      if (!block || !sameEntries(block.entries, held)) {
        if (serialized++ > 0) await nextTurn();
        let text = '';
        for (let i = 0; i < held.length; i++) text += (from + i === 0 ? '\n  ' : ',\n  ') + JSON.stringify(held[i], null, 1).replace(/\n/g, '\n  ');
        block = { entries: held, bytes: Buffer.from(text) };
      }
      blocks.push(block);
      parts.push(block.bytes);
    }
    this.blocks = blocks;
    parts.push(sessions.length ? LIST_END : EMPTY_LIST_END);
    return parts;
  }

  private idsInOrder(entries: Map<string, SessionEntry>): string[] {
    const cached = this.sortedIds;
    const size = entries.size;
    if (cached && cached.of === entries && cached.size === size) return cached.ids;
    let ids: string[];
    if (cached && cached.of === entries && cached.size < size && size - cached.size <= FEW_NEW_IDS) {
      // A Map iterates in insertion order and ids are only ever added to it: the new ones are its
      // last keys. Each goes in its place (near the end: ids are time-ordered), no sort of them all.
      // (Many at once, say another process's thousands merged in, are sorted with the rest.)
      ids = cached.ids.slice();
      let seen = 0;
      for (const id of entries.keys()) if (seen++ >= cached.size) ids.splice(sortedPosition(ids, id), 0, id);
    } else {
      ids = [...entries.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    }
    this.sortedIds = { of: entries, size, ids };
    return ids;
  }
}

/** Where `id` goes in the sorted `ids` (binary search). */
function sortedPosition(ids: readonly string[], id: string): number {
  let lo = 0;
  let hi = ids.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (ids[mid]! < id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function sameEntries(a: readonly SessionEntry[], b: readonly SessionEntry[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
