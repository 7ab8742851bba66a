/** Paged MCP lists (tools, prompts, resources): every item, page after page. */

/** More pages than any real list has: a server that never stops paging is stopped here. */
const MAX_PAGES = 1000;

/** Every item of an MCP list, following `nextCursor`; a server that repeats a cursor is refused. */
export async function allPages<T>(page: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor?: string | undefined }>): Promise<T[]> {
  const items: T[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  do {
    const next = await page(cursor);
    items.push(...next.items);
    cursor = next.nextCursor;
    if (cursor !== undefined && (seen.has(cursor) || seen.size >= MAX_PAGES)) throw new Error(`the server's list does not end (cursor ${JSON.stringify(cursor)} again, or over ${MAX_PAGES} pages)`);
    if (cursor !== undefined) seen.add(cursor);
  } while (cursor);
  return items;
}
