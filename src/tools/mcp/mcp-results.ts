/**
 * What a session is shown of an MCP tool call: its result as the text the model reads, its
 * progress as the call's content while it runs, each cut to a bound.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ToolRunContext } from '../../core/ports.js';

/** What the model reads of a result: its text, and a line for each part that is not text. */
export function textOf(result: CallToolResult): string {
  const parts = (result.content ?? []).map((c) => {
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
  });
  if (parts.length === 0 && result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
  return parts.join('\n');
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

/** `text`, or its first `limit` characters and a note of how many more there were. */
export function cut(text: string, limit: number): string {
  return text.length <= limit ? text : `${text.slice(0, limit)}\n[… ${text.length - limit} more characters cut]`;
}
