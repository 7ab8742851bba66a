/**
 * A tool call's result, made to fit the session's log. Its content is for the client to show, and a
 * diff carries the whole file before and after: an edit of a 600 KB file made an event over the log's
 * 1 MiB limit, whose append then failed the turn with the edit done on disk, unrecorded, and the
 * call left `in_progress` for ever. A result too large for the log keeps what the model reads (the
 * output) and shows less: each diff narrowed to the lines that changed (as agents that send an edit's
 * old and new string as its diff do), and if even that does not fit, a note instead of the content.
 */
import { isTroupeError } from '../core/errors.js';
import type { AgentEventInput, ToolContent } from '../core/events.js';
import { jsonBytes } from '../core/json-bytes.js';
import { jsonFittingPrefix } from '../core/text-cut.js';
import type { EngineCore } from './engine-core.js';

/** Unchanged lines kept on each side of a narrowed diff's change. */
const CONTEXT_LINES = 3;
const TOO_LARGE_NOTE = '[This result is too large for the session log to show; the model read its output.]';
const CUT_MARK = '… [cut]';
/** Room left in the last resort's event for its JSON's own punctuation beyond the measured parts. */
const SLACK_BYTES = 64;

type ToolCallUpdated = Extract<AgentEventInput, { type: 'tool_call_updated' }>;

/**
 * Emits a tool call's result, smaller when the log refuses it as too large (see the module comment).
 * A refused append takes no seq and changes nothing, so the usual result is appended once, with no
 * size check of its own before.
 */
export function emitToolResult(core: EngineCore, event: ToolCallUpdated): void {
  if (emitted(core, event)) return;
  const narrowed: ToolCallUpdated = { ...event, ...(event.content ? { content: event.content.map(narrowDiff) } : {}) };
  if (emitted(core, narrowed)) return;
  // The last resort holds the output twice (what the model reads, and the text the client is shown),
  // each cut to half of what the rest of the event leaves, in bytes of JSON: cut in characters (256 Ki
  // of them), an output of control characters (six bytes each) still made an event over the limit,
  // and the turn failed on it (until 2026-12-07).
  const rest = jsonBytes({ ...event, output: '', content: [{ type: 'text', text: `\n${TOO_LARGE_NOTE}` }] });
  const room = Math.floor((core.deps.log.maxEventBytes - rest - SLACK_BYTES) / 2);
  const output = event.output === undefined ? undefined : cutToJsonBytes(event.output, room);
  core.emit({ ...event, ...(output !== undefined ? { output } : {}), content: [{ type: 'text', text: output ? `${output}\n${TOO_LARGE_NOTE}` : TOO_LARGE_NOTE }] });
}

/** `text` if its JSON (quotes aside) is at most `room` bytes, else a start of it that is, with CUT_MARK. */
function cutToJsonBytes(text: string, room: number): string {
  if (jsonBytes(text) - 2 <= room) return text;
  // Joined, not concatenated: a slice keeps the whole output in memory for as long as it lives.
  return [text.slice(0, jsonFittingPrefix(text, room - (jsonBytes(CUT_MARK) - 2)).chars), CUT_MARK].join('');
}

/** Whether the log took the event (false: too large for it). */
function emitted(core: EngineCore, event: ToolCallUpdated): boolean {
  try {
    core.emit(event);
    return true;
  } catch (err) {
    if (isTroupeError(err, 'event_too_large')) return false;
    throw err;
  }
}

/**
 * What a permission request shows (an edit's diff, `preview`), made to fit `maxBytes` of JSON: as
 * is, else each diff narrowed to the lines that changed, else a note. Unbounded, it was the whole
 * file before and after, and JSON makes a character take up to 6 bytes (a control character
 * `\u0001`; a quote 2): an edit of a 10 MiB file (edit_file's limit) made a request line of up to
 * 120 MiB, over the 32 MiB an ACP client reads, whose connection then ended (until 2026-12-07).
 * Within the budget it is whole, however large (an editor shows a whole new file before it is written).
 * Its size is counted, not made: a write_file preview holds the old file's text (up to maxFileBytes)
 * and the new content (the model's, up to what its JSON text held) whole, and JSON over V8's longest
 * string threw when made, and the call was denied without being asked (until 2026-12-07).
 */
export function fitPreview(content: ToolContent[], maxBytes: number): ToolContent[] {
  const fits = (c: ToolContent[]) => jsonBytes(c) <= maxBytes;
  if (fits(content)) return content;
  const narrowed = content.map(narrowDiff);
  if (fits(narrowed)) return narrowed;
  return [{ type: 'text', text: '[The change is too large to show here.]' }];
}

function narrowDiff(c: ToolContent): ToolContent {
  if (c.type !== 'diff' || c.oldText === null) return c;
  return { ...c, ...changedRegion(c.oldText, c.newText) };
}

/** The lines of `before` and `after` that differ, with up to CONTEXT_LINES unchanged lines around them. */
export function changedRegion(before: string, after: string): { oldText: string; newText: string } {
  const shorter = Math.min(before.length, after.length);
  let prefix = 0;
  while (prefix < shorter && before.charCodeAt(prefix) === after.charCodeAt(prefix)) prefix++;
  let suffix = 0;
  while (suffix < shorter - prefix && before.charCodeAt(before.length - 1 - suffix) === after.charCodeAt(after.length - 1 - suffix)) suffix++;
  // Both texts share the prefix and the suffix, so line boundaries found in one hold for the other.
  let from = before.lastIndexOf('\n', prefix - 1) + 1;
  for (let n = 0; n < CONTEXT_LINES && from > 0; n++) from = before.lastIndexOf('\n', from - 2) + 1;
  let to = before.length - suffix;
  for (let n = 0; n <= CONTEXT_LINES && to < before.length; n++) {
    const nl = before.indexOf('\n', to);
    to = nl < 0 ? before.length : nl + 1;
  }
  const tail = before.length - Math.max(to, from);
  return { oldText: before.slice(from, before.length - tail), newText: after.slice(from, after.length - tail) };
}
