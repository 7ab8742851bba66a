/**
 * A page of the session index's list: newest first (spec/event-log.md §6), from a cursor, filtered
 * by cwd, tombstones left out unless asked for.
 */
import { resolve } from 'node:path';
import { TroupeError } from '../core/errors.js';
import { before, decodeCursor, encodeCursor } from './session-index.codec.js';
import type { SessionEntry } from './session-summary.js';
import { firstIndex, SortedKeys } from './sorted-keys.js';

export interface SessionListOptions {
  /** Only sessions whose cwd is this directory. */
  cwd?: string;
  /** Page size (default 100). */
  limit?: number;
  /** `nextCursor` of the previous page. */
  cursor?: string;
  /** Tombstones are left out unless asked for. */
  includeDeleted?: boolean;
}

export interface SessionListPage {
  sessions: SessionEntry[];
  /** Present when there are more sessions. */
  nextCursor?: string;
}

/** The index's entries in list order, kept sorted as they change (see SortedKeys). */
export const listOrder = (): SortedKeys<string, SessionEntry> => new SortedKeys<string, SessionEntry>((a, b) => before(a[1], b[1]));

export function listPage(entries: ReadonlyMap<string, SessionEntry>, order: SortedKeys<string, SessionEntry>, options: SessionListOptions = {}): SessionListPage {
  const limit = options.limit ?? 100;
  if (!Number.isInteger(limit) || limit < 1) throw new TroupeError('invalid_params', `limit must be a positive integer, got ${limit}`);
  const cwd = options.cwd === undefined ? undefined : resolve(options.cwd);
  const after = options.cursor === undefined ? undefined : decodeCursor(options.cursor);
  const pivot = after && ({ createdAt: after[0], id: after[1] } as SessionEntry);
  const ids = order.of(entries);
  // A page starts after its cursor's place, found by binary search, and ends at `limit` entries:
  // one more that matches says there is a next page.
  const from = pivot ? firstIndex(ids, (id) => before(pivot, entries.get(id)!) < 0) : 0;
  const page: SessionEntry[] = [];
  for (let i = from; i < ids.length; i++) {
    const e = entries.get(ids[i]!)!;
    if ((!options.includeDeleted && e.status === 'deleted') || (cwd !== undefined && e.cwd !== cwd)) continue;
    if (page.length === limit) return { sessions: page, nextCursor: encodeCursor(page[page.length - 1]!) };
    page.push({ ...e });
  }
  return { sessions: page };
}
