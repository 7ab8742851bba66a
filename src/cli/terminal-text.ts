/**
 * Untrusted text on a terminal: model output, tool output, session titles (a title is its first
 * prompt's words), paths a client chose. Raw, an ESC in it could retitle, clear or drive the
 * terminal; its control characters are spelled out (`\x1b`) instead. So are bidi overrides and
 * isolates (U+202A–U+202E, U+2066–U+2069, as `\u202e`): raw, they make the terminal show text in
 * another order than its characters' (a file `\u202Etxt.exe` shown as `exe.txt`, "Trojan Source");
 * until 2026-12-07 they were printed raw. Line breaks and tabs stay where the text is shown as lines
 * (`CRLF` becomes a line break); a one-line field keeps none.
 */
import { BIDI_CONTROLS, UNPRINTABLE } from '../core/one-line.js';
import { clustersOf, displayWidth } from './display-width.js';

const UNPRINTABLE_IN_LINES = new RegExp(`[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f${BIDI_CONTROLS}]`, 'g');
const spell = (c: string) => {
  const code = c.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
};

export function printable(s: string, { lines = false } = {}): string {
  return lines ? s.replace(/\r\n/g, '\n').replace(UNPRINTABLE_IN_LINES, spell) : s.replace(UNPRINTABLE, spell);
}

/**
 * The start of a one-line field (a title in a list) that fits in `columns` terminal columns, spelled
 * out as above: whole characters only (an emoji, a letter with its accents), measured as printed
 * (`\x1b` takes four). Until 2026-12-06 the cut was at `columns` UTF-16 units, which a CJK title
 * filled twice over, and the lists padded by `.length`, so wide characters misaligned them. A field
 * that does not fit ends in `…` (within the columns): until 2026-12-07 a cut title ("list the files
 * here and read package.jso") looked like the whole of a misspelt one.
 */
export function printableStart(s: string, columns: number): string {
  const shown = [...clustersOf(s)].map((cluster) => printable(cluster));
  let out = '';
  let width = 0;
  for (const [i, part] of shown.entries()) {
    const w = displayWidth(part);
    // The last column goes to the ellipsis unless this is the field's last character.
    const room = i === shown.length - 1 ? columns : columns - 1;
    if (width + w > room) return `${out}…`;
    out += part;
    width += w;
  }
  return out;
}
