import { jsonBytes, jsonStringBytes } from '../core/json-bytes.js';

/**
 * The most one NDJSON line of ACP may take, in bytes without its line ending: the ACP SDK's own
 * default limit (`ndJsonStream`), so what editors built on it read. troupe reads no more on its stdin
 * (src/acp/oversized-lines.ts), and writes no more either: a longer line ends the reader's
 * connection, every session of the editor with it.
 */
export const MAX_LINE_BYTES = 32 * 1024 * 1024;

/**
 * Room kept on a line for what goes beside its large fields (a tool call's input, an edit's diff):
 * the JSON-RPC envelope, ids, a title (a path of at most 4096 characters, up to 6 bytes each in
 * JSON), locations, options.
 */
const LINE_OVERHEAD_BYTES = 64 * 1024;

/** What a line may give its large fields together: a tool call's input first, then what it shows. */
export const LINE_PAYLOAD_BYTES = MAX_LINE_BYTES - LINE_OVERHEAD_BYTES;

/** A value made to fit, and the bytes of its JSON. */
export interface FittedJson {
  value: unknown;
  bytes: number;
}

/**
 * `value` (a tool call's input, as the model wrote it) made to fit `maxBytes` of JSON: as is, else
 * with its longest strings, longest first, each replaced by a note of its size until it fits, else
 * a note in its place. A model may write a file of any size (its input is logged in parts), and
 * shown whole the input alone made a line over what an ACP client reads: its connection ended.
 * Given with the bytes of its JSON, which the fitting knows: a caller that fits more beside it (a
 * permission request's preview) need not walk the input again (an input may be megabytes).
 *
 * Never throws: sizes are counted, not made (core/json-bytes.ts; until 2026-12-07 an input whose JSON
 * was over V8's longest string, 90 million control characters say, threw a RangeError here, and the
 * tool call's update and permission request with it). An input with no JSON at all (a cycle, a
 * BigInt, nesting deeper than the stack) is a note too.
 */
export function fitJson(value: unknown, maxBytes: number): FittedJson {
  try {
    return fit(value, maxBytes);
  } catch (err) {
    return note(`[The input cannot be shown here: it has no JSON (${err instanceof Error ? err.message : 'unknown'}).]`);
  }
}

const note = (text: string): FittedJson => ({ value: text, bytes: jsonStringBytes(text) });

function fit(value: unknown, maxBytes: number): FittedJson {
  const bytes = jsonBytes(value);
  if (bytes <= maxBytes) return { value, bytes };
  let total = bytes;
  const strings: { holder: Record<string | number, unknown>; key: string | number; bytes: number; note: string }[] = [];
  const copy = copyNoting(value, strings);
  strings.sort((a, b) => b.bytes - a.bytes);
  for (const s of strings) {
    if (total <= maxBytes) break;
    s.holder[s.key] = s.note;
    total -= s.bytes - jsonStringBytes(s.note);
  }
  return total <= maxBytes ? { value: copy, bytes: total } : note(`[The input is too large to show here: ${bytes} bytes of JSON.]`);

  function copyNoting(v: unknown, found: typeof strings): unknown {
    if (v === null || typeof v !== 'object') return v;
    const out = (Array.isArray(v) ? [] : {}) as Record<string | number, unknown>;
    for (const [key, item] of Object.entries(v)) {
      const k = Array.isArray(v) ? Number(key) : key;
      out[k] = copyNoting(item, found);
      if (typeof item === 'string') found.push({ holder: out, key: k, bytes: jsonStringBytes(item), note: `[${Buffer.byteLength(item)} bytes, too large to show here]` });
    }
    return out;
  }
}
