/**
 * How many terminal columns text takes, to line up the CLI's tables: a CJK character or an emoji
 * takes two, a combining mark, a zero-width joiner or a variation selector none (String `.length`
 * counts UTF-16 units: one for `漢`, two for `😀`, one for a combining accent). Without a
 * dependency: grapheme clusters from Intl.Segmenter (an emoji sequence or a letter with its accents
 * is one), emoji and zero-width characters from the Unicode properties JS regexps know, and the East
 * Asian Wide and Fullwidth blocks, which they do not, from the table below (Unicode 15.1
 * EastAsianWidth.txt, W and F, merged over unassigned gaps; the emoji among them are found by
 * their property instead). Text is measured as printed: spell control characters out first.
 */

/** East Asian Wide (W) and Fullwidth (F) code points, as [first, last] pairs in order. */
const WIDE: readonly (readonly [number, number])[] = [
  [0x1100, 0x115f], [0x2329, 0x232a], [0x2e80, 0x303e], [0x3041, 0x3247], [0x3250, 0x4dbf],
  [0x4e00, 0xa4c6], [0xa960, 0xa97c], [0xac00, 0xd7a3], [0xf900, 0xfaff], [0xfe10, 0xfe19],
  [0xfe30, 0xfe6b], [0xff01, 0xff60], [0xffe0, 0xffe6], [0x16fe0, 0x16fe4], [0x16ff0, 0x16ff1],
  [0x17000, 0x18cd5], [0x18d00, 0x18d08], [0x1aff0, 0x1b2fb], [0x1f200, 0x1f265],
  [0x20000, 0x2fffd], [0x30000, 0x3fffd],
];

const ZERO_WIDTH = /^[\p{Mn}\p{Me}\p{Cf}\p{Cc}\u1160-\u11ff]/u;
const EMOJI_PRESENTATION = /^\p{Emoji_Presentation}/u;
/** An emoji shown as one because VS16 (U+FE0F) asks for it: `❤️`, `1️⃣`. */
const EMOJI_BY_SELECTOR = /^\p{Emoji}\uFE0F/u;

function isWide(cp: number): boolean {
  let lo = 0;
  let hi = WIDE.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const [first, last] = WIDE[mid]!;
    if (cp < first) hi = mid - 1;
    else if (cp > last) lo = mid + 1;
    else return true;
  }
  return false;
}

/** The columns of one grapheme cluster: those of its first character, or two for an emoji. */
function clusterWidth(cluster: string): number {
  if (ZERO_WIDTH.test(cluster)) return 0;
  if (EMOJI_PRESENTATION.test(cluster) || EMOJI_BY_SELECTOR.test(cluster)) return 2;
  return isWide(cluster.codePointAt(0)!) ? 2 : 1;
}

const segmenter = new Intl.Segmenter('en', { granularity: 'grapheme' });

/** The grapheme clusters of `text` with their columns, in order. */
export function* columnsOf(text: string): Generator<{ cluster: string; width: number }> {
  for (const { segment } of segmenter.segment(text)) yield { cluster: segment, width: clusterWidth(segment) };
}

/** How many columns `text` (one line, its control characters already spelled out) takes on a terminal. */
export function displayWidth(text: string): number {
  // Plain ASCII, the usual cell (ids, statuses, ages), needs no segmenting.
  if (/^[\x20-\x7e]*$/.test(text)) return text.length;
  let width = 0;
  for (const c of columnsOf(text)) width += c.width;
  return width;
}

/** `text` padded with spaces to `columns` columns (as String `padEnd`, by display width). */
export function padEndColumns(text: string, columns: number): string {
  return text + ' '.repeat(Math.max(0, columns - displayWidth(text)));
}
