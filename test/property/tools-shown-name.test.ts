// shownName (src/tools/path-guard.ts): whatever a file name holds, what tool output shows is one
// line with no control character, and it gives the name back: as it is, or as a JSON string literal.
// Replay with FC_SEED=<seed>.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { shownName } from '../../src/tools/path-guard.js';
import { fcRuns, fcSeed } from '../support/fc-seed.js';

const seed = fcSeed('tools-shown-name');
const unprintable = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

test('a shown name is one printable line that gives the name back', () => {
  const name = fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: fc.constantFrom('a', '.', '"', '\\', '\n', '\r', '\t', '\u0000', '\u0085', '\u2028', '\u202e', '\u2066', 'é', '名') }));
  fc.assert(
    fc.property(name, (n) => {
      const shown = shownName(n);
      assert.equal(unprintable.test(shown), false);
      if (unprintable.test(n) || n.startsWith('"')) assert.equal(JSON.parse(shown), n);
      else assert.equal(shown, n);
    }),
    { seed, numRuns: fcRuns(2000) },
  );
});
