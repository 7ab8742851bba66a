/** Paged MCP lists (tools, prompts, resources): every item, page after page, up to limits. */
import { jsonLength } from '../../core/json-bytes.js';

/** More pages than any real list has: a server that never stops paging is stopped here. */
const MAX_PAGES = 1000;
/**
 * The most items, and the most bytes of them (as JSON), troupe keeps of one list: far more than a
 * model can be shown. One page is bounded by the most troupe reads of one message (10 MB), but the
 * pages were not: a server could send 1000 of them, gigabytes, all kept until the list ended.
 */
export const MAX_LIST_ITEMS = 10_000;
const MAX_LIST_BYTES = 16 * 1024 * 1024;

/** Why a list is refused: the server's list is longer than troupe keeps. */
export function listTooLong(): Error {
  return new Error(`the server's list is too long (over ${MAX_LIST_ITEMS} items or ${MAX_LIST_BYTES / (1024 * 1024)} MiB in all); troupe reads no more of it`);
}

/** A page of a list: its items, the cursor of the next, and (when some were left out) how many the server sent. */
export type Page<T> = { items: T[]; nextCursor?: string | undefined; listed?: number };

/**
 * Every item of an MCP list, following `nextCursor`; a server that repeats a cursor, or pages
 * past MAX_PAGES, MAX_LIST_ITEMS or MAX_LIST_BYTES, is refused. A page's `listed` is how many items
 * the server sent on it, those left out included: they count toward MAX_LIST_ITEMS too, or a server
 * listing only items MCP refuses could page 1000 times 10000 of them, each one checked and logged.
 */
export async function allPages<T>(page: (cursor: string | undefined) => Promise<Page<T>>): Promise<T[]> {
  const items: T[] = [];
  const seen = new Set<string>();
  let bytes = 0;
  let listed = 0;
  let cursor: string | undefined;
  do {
    const next = await page(cursor);
    listed += next.listed ?? next.items.length;
    if (listed > MAX_LIST_ITEMS) throw listTooLong();
    bytes += jsonLength(next.items);
    if (bytes > MAX_LIST_BYTES) throw listTooLong();
    items.push(...next.items);
    cursor = next.nextCursor;
    if (cursor !== undefined && (seen.has(cursor) || seen.size >= MAX_PAGES)) throw new Error(`the server's list does not end (cursor ${JSON.stringify(cursor)} again, or over ${MAX_PAGES} pages)`);
    if (cursor !== undefined) seen.add(cursor);
  } while (cursor);
  return items;
}
