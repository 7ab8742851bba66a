/**
 * Untrusted text as one line of printable text: a session's title, which is its first prompt's words
 * and which an editor shows as given (`session_info_update`, `session/list`), and a tool call's title,
 * which shows the model's command or pattern (`tool_call`, a permission request). A control character
 * (C0, DEL, C1: NUL, ESC, line breaks, tabs) could clear or drive a terminal the title reaches, or
 * break a list's row; a bidi override or isolate (U+202A–U+202E, U+2066–U+2069) could make the title
 * read otherwise than its words (the "Trojan Source" reordering). Each becomes a space.
 */
import { clipped } from './text-cut.js';

/**
 * The bidi overrides and isolates (U+202A–U+202E, U+2066–U+2069), as a character-class range: the
 * characters that make text read in another order than its characters'. One list for every class
 * that keeps them out of what a person reads (here, `src/cli/terminal-text.ts`, `src/tools/path-guard.ts`).
 */
export const BIDI_CONTROLS = '\\u202a-\\u202e\\u2066-\\u2069';

/**
 * C0 controls, DEL, C1 controls and bidi overrides and isolates: what a title makes a space and
 * `src/cli/terminal-text.ts` spells out on a terminal.
 */
export const UNPRINTABLE = new RegExp(`[\\x00-\\x1f\\x7f-\\x9f${BIDI_CONTROLS}]`, 'g');

/** `s` on one line: control characters and bidi overrides spaces, every run of whitespace one space, no space at either end. */
export function oneLine(s: string): string {
  return s.replace(UNPRINTABLE, ' ').replace(/\s+/g, ' ').trim();
}

/**
 * `s` as {@link oneLine}, cut to at most `max` UTF-16 units with `…` last when longer, the cut one
 * unit earlier when it falls inside a surrogate pair (half an emoji is U+FFFD once encoded).
 */
export function oneLineClipped(s: string, max: number): string {
  return clipped(oneLine(s), max);
}
