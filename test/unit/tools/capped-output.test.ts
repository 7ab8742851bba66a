// CappedOutput keeps a prefix and a suffix within budget and counts what it dropped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { CappedOutput } from '../../../src/tools/capped-output.js';

const seed = process.env.FC_SEED ? Number(process.env.FC_SEED) : Date.now() ^ (Math.random() * 2 ** 31);
console.log('fast-check seed', seed);

test('head is a prefix, tail a suffix, total budget respected, nothing lost under the limit', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 64 }), fc.array(fc.uint8Array({ maxLength: 40 }), { maxLength: 20 }), (limit, chunks) => {
      const out = new CappedOutput(limit);
      for (const c of chunks) out.push(Buffer.from(c));
      const all = Buffer.concat(chunks.map((c) => Buffer.from(c)));
      const { head, tail } = out.keptBytes();
      assert.equal(out.total, all.length);
      assert.ok(head.length + tail.length <= limit);
      assert.ok(all.subarray(0, head.length).equals(head), 'head is a prefix');
      assert.ok(all.subarray(all.length - tail.length).equals(tail), 'tail is a suffix');
      if (all.length <= limit) {
        assert.equal(out.truncated, false);
        assert.ok(Buffer.concat([head, tail]).equals(all));
      } else {
        assert.equal(out.truncated, true);
        assert.equal(head.length + tail.length, limit, 'a full budget is used once over');
        assert.match(out.text(), new RegExp(`\\[\\.\\.\\. ${all.length - limit} bytes of output omitted \\.\\.\\.\\]`));
      }
    }),
    { seed, numRuns: 300 },
  );
});

test('the tail starts on a UTF-8 character boundary', () => {
  const out = new CappedOutput(9); // head 2 bytes, tail 7: the tail would start mid-character
  out.push(Buffer.from('ab' + 'é'.repeat(20)));
  assert.doesNotMatch(out.text(), /\uFFFD/);
  assert.throws(() => new CappedOutput(0), RangeError);
});

test('the head ends on a UTF-8 character boundary', () => {
  const out = new CappedOutput(9); // head 2 bytes: 'a' and the first byte of 'é'
  out.push(Buffer.from('aé' + 'x'.repeat(20)));
  assert.equal(out.text(), `a\n[... 14 bytes of output omitted ...]\n${'x'.repeat(7)}`);
});
