/**
 * Cutting text without splitting a surrogate pair (an emoji is two UTF-16 units): a lone half is not
 * valid text, and turns into U+FFFD once encoded as UTF-8 (the log, the wire).
 */
import { jsonStringBytes } from './json-bytes.js';

export const isHighSurrogate = (unit: number): boolean => unit >= 0xd800 && unit <= 0xdbff;
export const isLowSurrogate = (unit: number): boolean => unit >= 0xdc00 && unit <= 0xdfff;

/** Where to end a cut of `text` at `end` units: `end`, or one unit earlier when it falls inside a pair. */
export function pairSafeEnd(text: string, end: number): number {
  return end > 0 && end < text.length && isHighSurrogate(text.charCodeAt(end - 1)) && isLowSurrogate(text.charCodeAt(end)) ? end - 1 : end;
}

/**
 * How many characters of `s` from its start make at most `room` bytes of JSON (quotes aside), a
 * surrogate pair never parted, and the bytes they make: a cut to what a session's log can hold, where
 * a character may be six bytes (a control character, `\u0001`). The bytes are given so that a caller
 * keeping the cut does not measure it again.
 */
export function jsonFittingPrefix(s: string, room: number): { chars: number; bytes: number } {
  if (room <= 0) return { chars: 0, bytes: 0 };
  // A character is at least one byte: no more than `room` of them can fit.
  const head = s.length > room ? s.slice(0, pairSafeEnd(s, room)) : s;
  // Most often all of it fits: one measure, not one a character.
  const whole = jsonStringBytes(head) - 2;
  if (whole <= room) return { chars: head.length, bytes: whole };
  let bytes = 0;
  let i = 0;
  while (i < head.length) {
    const width = isHighSurrogate(head.charCodeAt(i)) && isLowSurrogate(head.charCodeAt(i + 1)) ? 2 : 1;
    const more = jsonStringBytes(head.slice(i, i + width)) - 2;
    if (bytes + more > room) break;
    bytes += more;
    i += width;
  }
  return { chars: i, bytes };
}

/** The first `n` UTF-16 units of `text`, one fewer when the cut would part a surrogate pair. */
export function headOf(text: string, n: number): string {
  return text.slice(0, pairSafeEnd(text, n));
}

/** The last `n` UTF-16 units of `text`, one fewer when the cut would part a surrogate pair. */
export function tailOf(text: string, n: number): string {
  if (n >= text.length) return text;
  if (n <= 0) return '';
  const start = text.length - n;
  return text.slice(isLowSurrogate(text.charCodeAt(start)) && isHighSurrogate(text.charCodeAt(start - 1)) ? start + 1 : start);
}

/** `text` as it is when at most `max` units long, else its {@link headOf} `max` units and `mark` after it. */
export function elided(text: string, max: number, mark = '…'): string {
  return text.length <= max ? text : `${headOf(text, max)}${mark}`;
}

/** `text` as it is when at most `max` units long, else its start and `mark` in at most `max` units ({@link headOf}). */
export function clipped(text: string, max: number, mark = '…'): string {
  return text.length <= max ? text : `${headOf(text, max - mark.length)}${mark}`;
}
