// A value's JSON written and read in pieces (src/core/json-slices.ts), for texts longer than V8's
// longest string. Written: the pieces join to JSON.stringify's text exactly, for any value (escapes,
// astral characters, lone surrogates, toJSON, values JSON leaves out). Read: any text cut anywhere (in
// a string, an escape, a number) parses to what JSON.parse gives, and where JSON.parse throws a
// SyntaxError so does the reader. Replay with FC_SEED=<seed>.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { jsonHead, parseJsonSlices, writeJsonPieces } from '../../../src/core/json-slices.js';
import { fcRuns, fcSeed } from '../../support/fc-seed.js';
import { jsonHardText, jsonishValue } from '../../support/json-arbitraries.js';

const seed = fcSeed('json-slices');

const text = jsonHardText(60);
const key = fc.oneof(text, fc.constantFrom('__proto__', 'constructor', 'toJSON', '0'));
const value = jsonishValue(text, key);

/** `s` cut at `cuts` (any positions, surrogate pairs and escapes included). */
const cutAt = (s: string, cuts: number[]) => {
  const at = [...new Set(cuts.map((c) => c % (s.length + 1)))].sort((a, b) => a - b);
  return [...at, s.length].map((end, i) => s.slice(i === 0 ? 0 : at[i - 1], end));
};

test('the pieces join to exactly what JSON.stringify writes', () => {
  fc.assert(
    fc.property(value, fc.integer({ min: 1, max: 8 }), (v, chunk) => {
      const pieces: string[] = [];
      writeJsonPieces(v, (p) => pieces.push(p), chunk);
      assert.equal(pieces.length === 0 ? undefined : pieces.join(''), JSON.stringify(v));
      // A string's in pieces of its escaped chunks; a number whole: up to 25 characters (-0.0000013674467000661512).
      for (const p of pieces) assert.ok(p.length <= Math.max(6 * chunk + 2, 25), `a piece of ${p.length} characters`);
    }),
    { seed, numRuns: fcRuns(1500) },
  );
});

test("jsonHead is the start of JSON.stringify's text, cut anywhere (in an escape, in a pair), and the whole's length", () => {
  fc.assert(
    fc.property(value, fc.nat({ max: 300 }), (v, max) => {
      const json = JSON.stringify(v) ?? '';
      assert.deepEqual(jsonHead(v, max), { head: json.slice(0, max), length: json.length });
    }),
    { seed, numRuns: fcRuns(1500) },
  );
});

test('a value that JSON.stringify cannot write throws as it does', () => {
  const cyclic: Record<string, unknown> = { a: [1] };
  (cyclic.a as unknown[]).push(cyclic);
  for (const v of [cyclic, { n: 1n }]) {
    assert.throws(() => writeJsonPieces(v, () => {}), TypeError);
    assert.throws(() => jsonHead(v, 10), TypeError);
  }
});

test('any JSON text cut anywhere reads back as JSON.parse reads it whole', () => {
  fc.assert(
    fc.property(value, fc.constantFrom(undefined, 1, '\t', ' \r\n'), fc.array(fc.nat(), { maxLength: 12 }), (v, indent, cuts) => {
      const json = JSON.stringify(v ?? null, null, indent);
      // A limit of 0 characters: never joined, always read in pieces.
      assert.deepEqual(parseJsonSlices(cutAt(json, cuts), 0), JSON.parse(json));
    }),
    { seed, numRuns: fcRuns(1500) },
  );
});

test('text that is not JSON fails as JSON.parse fails on it', () => {
  const unit = fc.constantFrom('{', '}', '[', ']', ':', ',', '"', '\\', 'u', '0', '1', '-', '.', 'e', '+', 'true', 'null', 'fals', ' ', '\n', '\u0001', 'a', '😀');
  fc.assert(
    fc.property(fc.array(unit, { maxLength: 16 }).map((u) => u.join('')), fc.array(fc.nat(), { maxLength: 6 }), (s, cuts) => {
      let expected: unknown;
      try {
        expected = { value: JSON.parse(s) };
      } catch (err) {
        expected = err;
      }
      if (expected instanceof SyntaxError) assert.throws(() => parseJsonSlices(cutAt(s, cuts), 0), SyntaxError);
      else assert.deepEqual(parseJsonSlices(cutAt(s, cuts), 0), (expected as { value: unknown }).value);
    }),
    { seed, numRuns: fcRuns(3000) },
  );
});
