/**
 * Cutting text without splitting a surrogate pair (an emoji is two UTF-16 units): a lone half is not
 * valid text, and turns into U+FFFD once encoded as UTF-8 (the log, the wire).
 */
export const isHighSurrogate = (unit: number): boolean => unit >= 0xd800 && unit <= 0xdbff;
export const isLowSurrogate = (unit: number): boolean => unit >= 0xdc00 && unit <= 0xdfff;

/** Where to end a cut of `text` at `end` units: `end`, or one unit earlier when it falls inside a pair. */
export function pairSafeEnd(text: string, end: number): number {
  return end > 0 && end < text.length && isHighSurrogate(text.charCodeAt(end - 1)) && isLowSurrogate(text.charCodeAt(end)) ? end - 1 : end;
}
