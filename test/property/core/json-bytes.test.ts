// The size of a value's JSON, counted without making it (src/core/json-bytes.ts), is the size of what
// JSON.stringify makes, for any JSON value and any string (escapes, multi-byte and astral characters,
// lone surrogates). Replay with FC_SEED=<seed>.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { jsonBytes, jsonLength, jsonStringBytes, jsonStringLength } from '../../../src/core/json-bytes.js';
import { fcRuns, fcSeed } from '../../support/fc-seed.js';

const seed = fcSeed('json-bytes');
const native = (v: unknown) => Buffer.byteLength(JSON.stringify(v) ?? '');

const text = fc.string({ unit: fc.oneof(fc.constantFrom('a', '"', '\\', '\n', '\b', '\u0001', '\u007f', 'é', '€', '😀', '\ud800', '\udc00'), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })), maxLength: 200 });

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
  const value = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small' },
      text,
      fc.double(),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.constant(undefined),
      fc.array(tie('value'), { maxLength: 5 }),
      fc.dictionary(text, tie('value'), { maxKeys: 5 }),
      fc.date({ noInvalidDate: true }),
    ),
  })).value;
  fc.assert(
    fc.property(value, (v) => {
      assert.equal(jsonBytes(v), native(v));
      assert.equal(jsonLength(v), (JSON.stringify(v) ?? '').length);
    }),
    { seed, numRuns: fcRuns(2000) },
  );
});
