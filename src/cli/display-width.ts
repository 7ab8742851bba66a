/**
 * How many terminal columns text takes, to line up the CLI's tables and cut titles: a CJK character
 * or an emoji takes two, a combining mark, a zero-width joiner or a variation selector none (String
 * `.length` counts UTF-16 units: one for `漢`, two for `😀`, one for a combining accent). Widths
 * come from string-width (Unicode's East Asian Width and emoji data, which JS regexps do not carry
 * in full); grapheme clusters from Intl.Segmenter, so that an emoji sequence or a letter with its
 * accents is measured and cut as one. Text is measured as printed: spell control characters out first.
 */
import stringWidth from 'string-width';

const segmenter = new Intl.Segmenter('en', { granularity: 'grapheme' });

/** The grapheme clusters of `text`, in order (each measured as printed by its caller). */
export function* clustersOf(text: string): Generator<string> {
  for (const { segment } of segmenter.segment(text)) yield segment;
}

/** How many columns `text` (one line, its control characters already spelled out) takes on a terminal. */
export function displayWidth(text: string): number {
  return stringWidth(text);
}

/** `text` padded with spaces to `columns` columns (as String `padEnd`, by display width). */
export function padEndColumns(text: string, columns: number): string {
  return text + ' '.repeat(Math.max(0, columns - displayWidth(text)));
}
