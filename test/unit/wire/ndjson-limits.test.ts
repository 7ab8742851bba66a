import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fitJson as fitted, LINE_PAYLOAD_BYTES } from '../../../src/wire/ndjson-limits.js';

const bytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v));

/** What fitJson gives, checked to come with the bytes of its JSON. */
function fitJson(value: unknown, maxBytes: number): unknown {
  const got = fitted(value, maxBytes);
  assert.equal(got.bytes, bytes(got.value), 'the bytes given are those of the JSON of the value given');
  return got.value;
}

test('a tool input within its budget is shown as it is; over it, its longest strings become notes of their size, longest first; over it still, a note', () => {
  const small = { path: 'a.txt', content: 'x' };
  assert.equal(fitJson(small, 1024), small);

  // Counted as JSON: 1000 control characters are 6000 bytes, not 1000; the 3000-character string is
  // shorter as JSON, so it is kept.
  const input = { path: 'a.txt', content: '\x01'.repeat(1000), edits: [{ old: 'é'.repeat(3000), keep: 'k' }] };
  const fitted = fitJson(input, 10_000);
  assert.deepEqual(fitted, { path: 'a.txt', content: '[1000 bytes, too large to show here]', edits: [{ old: 'é'.repeat(3000), keep: 'k' }] });
  assert.ok(bytes(fitted) <= 10_000);
  assert.equal(input.content.length, 1000, 'the input itself is left as it was');
  assert.deepEqual(fitJson(input, 2000), { path: 'a.txt', content: '[1000 bytes, too large to show here]', edits: [{ old: '[6000 bytes, too large to show here]', keep: 'k' }] });

  // No long string to replace: a note in its place.
  assert.match(String(fitJson({ n: Array(5000).fill(1) }, 1000)), /^\[The input is too large to show here: 10007 bytes of JSON\.\]$/);
});

test('an input whose JSON is over the longest string V8 makes is fitted, not a RangeError', () => {
  // 90 million control characters: 90 MB as a string, 540 million bytes as JSON (`\u0001` each),
  // over V8's 2^29 - 24 characters. Real size, not a lowered limit: the fitting never makes that text.
  const content = '\x01'.repeat(90_000_000);
  assert.throws(() => JSON.stringify(content), RangeError, 'the premise: V8 cannot make this JSON');
  const fitted = fitJson({ path: 'a.txt', content }, LINE_PAYLOAD_BYTES);
  assert.deepEqual(fitted, { path: 'a.txt', content: '[90000000 bytes, too large to show here]' });
});

test('an input with no JSON (a cycle, a BigInt, nesting deeper than the stack) is a note, not an exception', () => {
  const cyclic: Record<string, unknown> = { path: 'a.txt' };
  cyclic.self = cyclic;
  let deep: unknown[] = [];
  for (let i = 0; i < 200_000; i++) deep = [deep];
  for (const input of [cyclic, { n: 1n }, deep]) {
    assert.throws(() => JSON.stringify(input), 'the premise: JSON.stringify throws');
    assert.match(String(fitJson(input, 1024)), /^\[The input cannot be shown here: it has no JSON \(.+\)\.\]$/);
  }
});

test("fitJson walks the input once, and its caller need not walk it again: the bytes come with it", () => {
  // A getter counts the walks: each reads the property once (JSON.stringify would too).
  let reads = 0;
  const input = Object.defineProperty({ path: 'a.txt' }, 'content', { enumerable: true, get: () => (reads++, 'x'.repeat(100)) });
  const got = fitted(input, 1024);
  assert.equal(reads, 1, 'one walk');
  assert.equal(got.value, input);
  assert.equal(got.bytes, bytes(input));
});
