// The size of a value's JSON, counted without making it (src/core/json-bytes.ts), is the size of what
// JSON.stringify makes, for any JSON value and any string (escapes, multi-byte and astral characters,
// lone surrogates). Replay with FC_SEED=<seed>.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { jsonBytes, jsonLength, jsonStringBytes, jsonStringLength } from '../../../src/core/json-bytes.js';
import { fcRuns, fcSeed } from '../../support/fc-seed.js';
import { jsonHardText, jsonishValue } from '../../support/json-arbitraries.js';

const seed = fcSeed('json-bytes');
const native = (v: unknown) => Buffer.byteLength(JSON.stringify(v) ?? '');

const text = jsonHardText(200);

test('jsonStringBytes is the UTF-8 length of JSON.stringify of the string, jsonStringLength its length', () => {
  fc.assert(
    fc.property(text, (s) => {
      assert.equal(jsonStringBytes(s), native(s));
      assert.equal(jsonStringLength(s), JSON.stringify(s).length);
    }),
    { seed, numRuns: fcRuns(2000) },
  );
});

test('jsonBytes is the UTF-8 length of JSON.stringify of the value, jsonLength its length', () => {
  const value = jsonishValue(text);
  fc.assert(
    fc.property(value, (v) => {
      assert.equal(jsonBytes(v), native(v));
      assert.equal(jsonLength(v), (JSON.stringify(v) ?? '').length);
    }),
    { seed, numRuns: fcRuns(2000) },
  );
});
