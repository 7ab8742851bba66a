import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fitJson } from '../../../src/wire/ndjson-limits.js';

const bytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v));

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
