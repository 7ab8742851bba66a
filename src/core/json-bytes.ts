/**
 * The size of a value's JSON text in UTF-8, counted without making the text. `JSON.stringify` of a
 * value whose JSON is longer than V8's longest string (2^29 - 24 characters, some 512 MiB) throws a
 * RangeError, and short of that it holds the whole text in memory only to be measured: a tool input
 * of 90 million control characters is 90 MB as a string and 540 MB as JSON (each one `\u0001`).
 */

// Printable ASCII other than `"` and `\`: such a string's JSON is its length plus quotes.
export const PLAIN_JSON_CHARS = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** Bytes of `s` as a JSON string in UTF-8, quotes included, as `JSON.stringify` writes it. */
export function jsonStringBytes(s: string): number {
  if (PLAIN_JSON_CHARS.test(s)) return s.length + 2;
  let n = 2;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) {
      // `\"`, `\\`, `\b`, `\t`, `\n`, `\f`, `\r`; any other control character is `\u00XX`.
      if (c >= 0x20) n += c === 0x22 || c === 0x5c ? 2 : 1;
      else n += c === 8 || c === 9 || c === 10 || c === 12 || c === 13 ? 2 : 6;
    } else if (c < 0x800) n += 2;
    else if (c < 0xd800 || c > 0xdfff) n += 3;
    else if (c <= 0xdbff && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4; // a surrogate pair: one astral character
      i++;
    } else n += 6; // a lone surrogate: `\udXXX`
  }
  return n;
}

// No character JSON escapes, and no surrogate: such a string's JSON is as long as it is, plus quotes.
const UNESCAPED = /^[^\x00-\x1f"\\\ud800-\udfff]*$/;

/** Length of `s` as a JSON string in UTF-16 units (a JS string's length), quotes included. */
export function jsonStringLength(s: string): number {
  if (UNESCAPED.test(s)) return s.length + 2;
  let n = 2;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20) n += c === 8 || c === 9 || c === 10 || c === 12 || c === 13 ? 2 : 6;
    else if (c === 0x22 || c === 0x5c) n += 2;
    else if (c < 0xd800 || c > 0xdfff) n += 1;
    else if (c <= 0xdbff && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 2; // a surrogate pair, written as it is
      i++;
    } else n += 6; // a lone surrogate: `\udXXX`
  }
  return n;
}

/**
 * Bytes of `JSON.stringify(value)` in UTF-8 (0 when it gives no text: `undefined`, a function),
 * counted without making the text. Throws what `JSON.stringify` would for a value it cannot write (a
 * cycle, a BigInt), and a RangeError for nesting deeper than the stack allows.
 */
export function jsonBytes(value: unknown): number {
  return measure(value, '', new Set(), jsonStringBytes) ?? 0;
}

/**
 * `JSON.stringify(value).length` (0 when it gives no text), counted as {@link jsonBytes} counts: what
 * sizes the conversation's offline token estimate, for an input of any size.
 */
export function jsonLength(value: unknown): number {
  return measure(value, '', new Set(), jsonStringLength) ?? 0;
}

/**
 * As `JSON.stringify`'s SerializeJSONProperty (ECMA-262 §25.5.2.2): undefined where it writes nothing.
 * Strings are measured by `string` (bytes or UTF-16 units); everything else is ASCII, the same in both.
 */
function measure(v: unknown, key: string, ancestors: Set<object>, string: (s: string) => number): number | undefined {
  if ((typeof v === 'object' && v !== null) || typeof v === 'bigint') {
    const toJSON = (v as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') v = toJSON.call(v, key);
  }
  // A boxed primitive is written as its value.
  if (v instanceof Number || v instanceof String || v instanceof Boolean || v instanceof BigInt) v = v.valueOf();
  switch (typeof v) {
    case 'string':
      return string(v);
    case 'number':
      return Number.isFinite(v) ? String(v).length : 4;
    case 'boolean':
      return v ? 4 : 5;
    case 'bigint':
      throw new TypeError('Do not know how to serialize a BigInt');
    case 'object':
      break;
    default:
      return undefined; // undefined, a function, a symbol
  }
  if (v === null) return 4;
  if (ancestors.has(v)) throw new TypeError('Converting circular structure to JSON');
  ancestors.add(v);
  let n = 2;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) n += (i > 0 ? 1 : 0) + (measure(v[i], String(i), ancestors, string) ?? 4);
  } else {
    let first = true;
    for (const k of Object.keys(v)) {
      const bytes = measure((v as Record<string, unknown>)[k], k, ancestors, string);
      if (bytes === undefined) continue;
      n += (first ? 0 : 1) + string(k) + 1 + bytes;
      first = false;
    }
  }
  ancestors.delete(v);
  return n;
}
