// The columns text takes on a terminal, which the CLI's tables line up by (display-width.ts), and
// the cut of a title to a list's column (printableStart).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { displayWidth, padEndColumns } from '../../../src/cli/display-width.js';
import { printableStart } from '../../../src/cli/terminal-text.js';

test('wide characters take two columns, combining marks and joiners none', () => {
  const cases: [string, number][] = [
    ['', 0],
    ['ses_0abc idle', 13],
    ['漢字', 4], // CJK ideographs
    ['かなカナ', 8], // Hiragana, Katakana
    ['한국어', 6], // Hangul syllables
    ['ＡＢ', 4], // fullwidth Latin
    ['ｶﾅ', 2], // halfwidth Katakana stays narrow
    ['😀', 2],
    ['👍🏽', 2], // with a skin tone modifier
    ['👨‍👩‍👧', 2], // a ZWJ family: one emoji
    ['🇫🇷', 2], // a flag: two regional indicators
    ['❤️', 2], // text-default heart asking for emoji presentation (VS16)
    ['❤', 1], // without: text presentation
    ['1️⃣', 2], // keycap
    ['e\u0301', 1], // e + combining acute
    ['Ame\u0301lie\u0300', 6],
    ['a\u200bb', 2], // zero-width space
    ['\u0301', 0], // a lone combining mark
    ['𠀀', 2], // CJK extension B (outside the BMP)
    ['é漢😀x', 6],
  ];
  for (const [text, width] of cases) assert.equal(displayWidth(text), width, JSON.stringify(text));
});

test('padEndColumns pads to columns, not UTF-16 units', () => {
  assert.equal(padEndColumns('漢字', 6), '漢字  ');
  assert.equal(padEndColumns('😀', 3), '😀 ');
  assert.equal(padEndColumns('e\u0301', 3), 'e\u0301  ');
  assert.equal(padEndColumns('longer', 3), 'longer');
});

test('printableStart keeps whole characters that fit in the columns, measured as printed, and marks a cut with …', () => {
  assert.equal(printableStart('abcd', 4), 'abcd', 'a field that fits is whole, its last character in the last column');
  assert.equal(printableStart('abcdef', 4), 'abc…', 'a cut field ends in … within the columns');
  assert.equal(printableStart('', 4), '');
  // Until 2026-12-06: 4 UTF-16 units, i.e. 8 columns of CJK.
  assert.equal(printableStart('漢字漢字漢字', 4), '漢…');
  assert.equal(printableStart('漢字漢字漢字', 5), '漢字…', 'a wide character that would cross the edge is left out');
  assert.equal(printableStart('abc😀', 4), 'abc…', 'cut before the emoji, not in it');
  assert.equal(printableStart('ab👨‍👩‍👧cd', 5), 'ab👨‍👩‍👧…', 'a ZWJ sequence is one character');
  assert.equal(printableStart('e\u0301e\u0301e\u0301', 2), 'e\u0301…', 'an accent stays with its letter');
  // A control character is printed as \x1b: four columns.
  assert.equal(printableStart('\x1b[2Jabc', 6), '\\x1b[…');
  assert.equal(printableStart('ab\x1bcd', 5), 'ab…', 'the spelled-out character is not cut either');
  // A bidi override is printed as \u202e: six columns, never raw (it would reorder the row).
  assert.equal(printableStart('\u202Etxt.exe', 8), '\\u202et…');
  assert.equal(printableStart('ab\u2066cd', 7), 'ab…', 'the spelled-out isolate is not cut either');
});
