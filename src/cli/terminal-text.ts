/**
 * Untrusted text on a terminal: model output, tool output, session titles (a title is its first
 * prompt's words), paths a client chose. Raw, an ESC in it could retitle, clear or drive the
 * terminal; its control characters are spelled out (`\x1b`) instead. Line breaks and tabs stay where
 * the text is shown as lines (`CRLF` becomes a line break); a one-line field keeps none.
 */
import { pairSafeEnd } from '../core/text-cut.js';

const CONTROL_IN_LINES = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;
const CONTROL = /[\x00-\x1f\x7f-\x9f]/g;
const spell = (c: string) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`;

export function printable(s: string, { lines = false } = {}): string {
  return lines ? s.replace(/\r\n/g, '\n').replace(CONTROL_IN_LINES, spell) : s.replace(CONTROL, spell);
}

/**
 * The first `max` UTF-16 units of a one-line field (a title in a list), spelled out as above; cut
 * before an emoji the cut falls in, whose lone half would print as U+FFFD.
 */
export function printableStart(s: string, max: number): string {
  return printable(s.slice(0, pairSafeEnd(s, max)));
}
