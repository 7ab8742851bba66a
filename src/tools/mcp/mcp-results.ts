/**
 * What a session is shown of an MCP tool call: its result as the text the model reads, its
 * progress as the call's content while it runs, each cut to a bound.
 */
import { ContentBlockSchema, type ContentBlock } from '@modelcontextprotocol/sdk/types.js';
import { writeJsonPieces } from '../../core/json-slices.js';
import type { ToolRunContext } from '../../core/ports.js';
import { eachChecked, type UncheckedCallResult } from './mcp-checked.js';
import { CutText, type CutUnit } from './mcp-cut-text.js';

/**
 * What the model reads of a call's result, cut to `limit` bytes as the log holds it (mcp-cut-text.ts)
 * with a note: its text, a line for each part that is not text, or its structured content as JSON
 * when it has no content. Made as its content is checked, block by block (mcp-checked.ts), and only
 * up to the limit: until 2026-12-07 every block was checked into a copy first (a result of 300000
 * small blocks held 23 MB of copies beside the 14 MB the server's JSON made), then all of the text
 * joined into one string, and the output cut from it held the whole of it (a 10 MB one) for as
 * long as it was kept.
 */
export function callOutput(result: UncheckedCallResult, limit: number): string {
  const text = new CutText(limit, 'bytes');
  eachChecked(result.content, ContentBlockSchema, 'a content block', (block, i) => {
    if (i > 0) text.add('\n');
    text.add(partOf(block));
  });
  if (result.content.length === 0 && result.structuredContent !== undefined) writeJsonPieces(result.structuredContent, (piece) => text.add(piece));
  return text.text();
}

/** A content block as the model reads it: its text, or a line saying what it is. */
function partOf(c: ContentBlock): string {
  switch (c.type) {
    case 'text':
      return c.text;
    case 'resource':
      return 'text' in c.resource && typeof c.resource.text === 'string' ? c.resource.text : `[binary resource ${c.resource.uri}]`;
    case 'resource_link':
      return `[resource ${c.uri}${c.name ? ` (${c.name})` : ''}]`;
    default:
      return `[${c.type} content, ${'mimeType' in c ? String(c.mimeType) : 'binary'}]`;
  }
}

/** How often at most a call's progress is shown: each showing is an event in the session's log. */
const PROGRESS_EVERY_MS = 500;
/**
 * The most characters of a progress message shown (the rest cut, with a note): each showing is an
 * event in the log, and until 2026-12-07 a server's message went there whole, twice a second,
 * however long (a server could grow a session's log by megabytes a second).
 */
const PROGRESS_MESSAGE_MAX = 1000;

/** A call's progress notifications as its shown content (`Progress 2/5: message`), now and then. */
export function progressShown(ctx: ToolRunContext): (p: { progress: number; total?: number; message?: string }) => void {
  let shownAt = -Infinity;
  return (p) => {
    const now = performance.now();
    if (now - shownAt < PROGRESS_EVERY_MS) return;
    shownAt = now;
    ctx.update([{ type: 'text', text: `Progress ${p.progress}${p.total !== undefined ? `/${p.total}` : ''}${p.message ? `: ${cut(p.message, PROGRESS_MESSAGE_MAX)}` : ''}` }]);
  };
}

/** `text`, or as much of it as `limit` allows (in `unit`s) and a note of how many more characters there were. */
export function cut(text: string, limit: number, unit: CutUnit = 'characters'): string {
  const cutText = new CutText(limit, unit);
  cutText.add(text);
  return cutText.text();
}
