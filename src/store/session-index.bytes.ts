/**
 * The session index file's bytes (spec/event-log.md §6): exactly
 * `JSON.stringify({version, sessions}, null, 1)` with the sessions sorted by id, kept between writes
 * so that a write serializes again only what changed.
 */
import { nextTurn } from '../core/next-turn.js';
import { INDEX_FORMAT_VERSION } from './session-index.codec.js';
import type { SessionEntry } from './session-summary.js';
import { SortedKeys } from './sorted-keys.js';

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
  /** The ids sorted, kept as they are added: ids are time-ordered, so new ones go near the end. */
  private readonly sortedIds = new SortedKeys<string, SessionEntry>(byId);

  /**
   * The file's bytes for `entries`, in parts (to be written as they are, never joined), from the
   * cached blocks whose entries did not change. Entries are never changed in place, so the entries
   * taken at the start are a consistent snapshot, and a block is serialized per turn of the loop:
   * the first call serializes them all. Calls must not overlap (the index makes them one at a time).
   * `replacing` is written in the place of the entry with its id (one not yet in memory: it is put
   * there once the file holds it); its place in the id order is that entry's.
   */
  async of(entries: Map<string, SessionEntry>, replacing?: SessionEntry): Promise<Buffer[]> {
    const sessions = this.sortedIds.of(entries).map((id) => (id === replacing?.id ? replacing : entries.get(id)!));
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
}

function byId(a: readonly [string, SessionEntry], b: readonly [string, SessionEntry]): number {
  return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0;
}

function sameEntries(a: readonly SessionEntry[], b: readonly SessionEntry[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
