/**
 * The size of a value's JSON text in UTF-8, counted without making the text. `JSON.stringify` of a
 * value whose JSON is longer than V8's longest string (2^29 - 24 characters, some 512 MiB) throws a
 * RangeError, and short of that it holds the whole text in memory only to be measured: a tool input
 * of 90 million control characters is 90 MB as a string and 540 MB as JSON (each one `\u0001`).
 */

import { walkJson } from './json-walk.js';

// Printable ASCII other than `"` and `\`: such a string's JSON is its length plus quotes.
export const PLAIN_JSON_CHARS = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

// Printable ASCII: such a string's JSON is its length, plus quotes, plus a backslash for each `"` and `\`.
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/** Bytes of `s` as a JSON string in UTF-8, quotes included, as `JSON.stringify` writes it. */
export function jsonStringBytes(s: string): number {
  if (PLAIN_JSON_CHARS.test(s)) return s.length + 2;
  return PRINTABLE_ASCII.test(s) ? printableSize(s) : escapedSize(s, 2, 3, 4);
}

/**
 * The JSON size of printable ASCII `s` (bytes and UTF-16 units alike), its quotes and backslashes
 * found by `indexOf`: a piece of JSON text (a slice of a large tool input the log measures) has
 * them, and this is several times faster than {@link escapedSize}'s loop over every character.
 */
function printableSize(s: string): number {
  let n = s.length + 2;
  for (let i = s.indexOf('"'); i >= 0; i = s.indexOf('"', i + 1)) n++;
  for (let i = s.indexOf('\\'); i >= 0; i = s.indexOf('\\', i + 1)) n++;
  return n;
}

// No character JSON escapes, and no surrogate: such a string's JSON is as long as it is, plus quotes.
const UNESCAPED = /^[^\x00-\x1f"\\\ud800-\udfff]*$/;

/** Length of `s` as a JSON string in UTF-16 units (a JS string's length), quotes included. */
export function jsonStringLength(s: string): number {
  if (UNESCAPED.test(s)) return s.length + 2;
  return PRINTABLE_ASCII.test(s) ? printableSize(s) : escapedSize(s, 1, 1, 2);
}

/**
 * The size of `s` as a JSON string, quotes included, where a character JSON writes as it is counts
 * `twoByte`, `threeByte` or `pair` by its UTF-8 length (2, 3, or an astral character's pair) and an
 * ASCII one 1: bytes and UTF-16 units differ only there (an escape is ASCII, the same in both).
 */
function escapedSize(s: string, twoByte: number, threeByte: number, pair: number): number {
  let n = 2;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) {
      // `\"`, `\\`, `\b`, `\t`, `\n`, `\f`, `\r`; any other control character is `\u00XX`.
      if (c >= 0x20) n += c === 0x22 || c === 0x5c ? 2 : 1;
      else n += c === 8 || c === 9 || c === 10 || c === 12 || c === 13 ? 2 : 6;
    } else if (c < 0x800) n += twoByte;
    else if (c < 0xd800 || c > 0xdfff) n += threeByte;
    else if (c <= 0xdbff && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += pair; // a surrogate pair: one astral character, written as it is
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
  return measure(value, jsonStringBytes);
}

/**
 * `JSON.stringify(value).length` (0 when it gives no text), counted as {@link jsonBytes} counts: what
 * sizes the conversation's offline token estimate, for an input of any size.
 */
export function jsonLength(value: unknown): number {
  return measure(value, jsonStringLength);
}

/** The size of `value`'s JSON: its strings by `string` (bytes or UTF-16 units), the rest ASCII, the same in both. */
function measure(value: unknown, string: (s: string) => number): number {
  let n = 0;
  walkJson(value, { string: (s) => void (n += string(s)), text: (t) => void (n += t.length) });
  return n;
}
