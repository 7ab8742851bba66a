/**
 * Cheap classification of one NDJSON line from a `troupe acp` child: is it a `session/update`
 * notification, and which session and seq does it carry? The daemon relays these lines verbatim, so
 * it need not parse and re-serialize the bulk of its traffic (one line per model delta).
 *
 * The child writes `JSON.stringify` output of messages built as `{ jsonrpc, method, params }` with
 * params `{ sessionId, update }` and `update._meta.troupe = { seq[, turnId] }` last
 * (src/acp/update.projection.ts). A line is taken as an update only when
 *   - it starts with `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"<id>","update":{`
 *     (so the top level has exactly jsonrpc, method, params, in that order: no `id`, no other method),
 *   - and it ends with `"_meta":{"troupe":{"seq":<digits>}}}}}`, with `,"turnId":"<id>"` and then
 *     `,"prompter":<digits>` optionally before the first `}`: five closing braces end `seq`'s object,
 *     `_meta`'s, `update`'s, `params`'s and the message, so this `_meta` is the last key of an object
 *     three levels deep.
 * `prompter` marks the echo of a prompt the daemon forwarded (src/acp/troupe-meta.ts): it is returned
 * apart, and cut out of `json`, which is what the other clients are sent.
 * A quote inside a JSON string is always escaped (`\"`), so `"_meta":{"troupe":{"seq":` (bare quotes
 * after letters) never occurs inside text: a text containing `"id":` or `"_meta"` cannot fool it.
 * Anything else (responses, requests, other notifications, updates without a seq) returns undefined
 * and is parsed as before.
 */

const PREFIX = '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"';
const AFTER_ID = '","update":{';
const META = '"_meta":{"troupe":{"seq":';
const CLOSE = '}}}}}';
const TURN = ',"turnId":"';
const PROMPTER = ',"prompter":';

export interface UpdateLine {
  sessionId: string;
  seq: number;
  /** The line itself (no newline): the JSON text of the whole notification, without `prompter`. */
  json: string;
  /** The prompter of the prompt this line echoes, if it is such an echo. */
  prompter?: number;
}

/** The digits of a JSON integer at `from` (at most 15, no leading zero): its value and where it ends, or undefined. */
function integerAt(line: string, from: number): { value: number; end: number } | undefined {
  let i = from;
  let value = 0;
  for (; i < line.length; i++) {
    const c = line.charCodeAt(i) - 48;
    if (c < 0 || c > 9) break;
    value = value * 10 + c;
  }
  const digits = i - from;
  if (digits === 0 || digits > 15 || (digits > 1 && line.charCodeAt(from) === 48)) return undefined;
  return { value, end: i };
}

/** Where the update object's first key is in `u.json` (just after its `{`): the child writes `sessionUpdate` there. */
export function updateStart(u: UpdateLine): number {
  return PREFIX.length + u.sessionId.length + AFTER_ID.length;
}

export function classifyUpdateLine(line: string): UpdateLine | undefined {
  if (!line.startsWith(PREFIX)) return undefined;
  const idEnd = line.indexOf('"', PREFIX.length);
  if (idEnd < 0 || !line.startsWith(AFTER_ID, idEnd)) return undefined;
  const sessionId = line.slice(PREFIX.length, idEnd);
  if (sessionId.length === 0 || sessionId.includes('\\')) return undefined;
  const meta = line.lastIndexOf(META);
  if (meta < idEnd) return undefined;
  const seq = integerAt(line, meta + META.length);
  if (!seq) return undefined;
  let i = seq.end;
  if (line.startsWith(TURN, i)) {
    const end = line.indexOf('"', i + TURN.length);
    if (end < 0 || line.lastIndexOf('\\', end) > i) return undefined;
    i = end + 1;
  }
  const prompter = line.startsWith(PROMPTER, i) ? integerAt(line, i + PROMPTER.length) : undefined;
  const tagEnd = prompter ? prompter.end : i;
  if (line.length !== tagEnd + CLOSE.length || !line.endsWith(CLOSE)) return undefined;
  if (!prompter) return { sessionId, seq: seq.value, json: line };
  return { sessionId, seq: seq.value, json: line.slice(0, i) + CLOSE, prompter: prompter.value };
}
