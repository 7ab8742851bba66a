// Any strict-JSON event survives the log's record encoding unchanged (same value, same key order),
// alone or coalesced with others. Replay with FC_SEED=<seed>.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { AgentEvent } from '../../../src/core/events.js';
import { isTroupeError } from '../../../src/core/errors.js';
import { decodeEventRecord, encodeEventRecord, peekEventRecord } from '../../../src/store/log-record.codec.js';
import { FRAME_HEADER_BYTES } from '../../../src/store/record-frame.codec.js';
import { projectStrictJson } from '../../../src/store/strict-json.codec.js';

const seed = process.env.FC_SEED ? Number(process.env.FC_SEED) : Date.now() ^ (Math.random() * 2 ** 31);
console.log('fast-check seed', seed);

/**
 * Whether `v` has an own "__proto__" key at any depth. Looked for in the value, not in its JSON text:
 * the key `"__proto__` (a quote first) also puts `"__proto__":` in the text (seed 2050209185).
 */
const hasProtoKey = (v: unknown): boolean =>
  typeof v === 'object' && v !== null && (Array.isArray(v) ? v.some(hasProtoKey) : Object.hasOwn(v, '__proto__') || Object.values(v).some(hasProtoKey));

test('records round-trip any strict-JSON events, and the projected size is the JSON size', () => {
  const payload = fc.dictionary(fc.string({ unit: 'binary' }).filter((k) => k !== '__proto__' && k !== 'seq' && k !== 'ts'), fc.jsonValue(), { maxKeys: 6 });
  fc.assert(
    fc.property(fc.array(payload, { minLength: 1, maxLength: 30 }), fc.integer({ min: 1, max: 2 ** 40 }), (bodies, first) => {
      // fc.jsonValue may produce an own "__proto__" key, which the projection refuses by rule.
      if (bodies.some(hasProtoKey)) {
        assert.throws(() => bodies.forEach((b) => projectStrictJson(b)), (e: unknown) => isTroupeError(e, 'invalid_event_payload'));
        return;
      }
      const events = bodies.map((b, i) => {
        const { value, bytes } = projectStrictJson(b, 8 * 1024 * 1024);
        assert.equal(bytes, Buffer.byteLength(JSON.stringify(b)));
        return { ...(value as object), type: 'x', sessionId: 's', seq: first + i, ts: 1_764_000_000_000 + i } as unknown as AgentEvent;
      });
      const frame = encodeEventRecord(events);
      const p = frame.subarray(FRAME_HEADER_BYTES);
      assert.deepEqual(peekEventRecord(p), { firstSeq: first, count: events.length });
      const back = decodeEventRecord(p, 0);
      assert.deepEqual(back, events);
      back.forEach((e, i) => assert.deepEqual(Object.keys(e), Object.keys(events[i]!)));
      // JSON's view is the same too (e.g. -0 was normalised by the projection).
      assert.equal(JSON.stringify(back), JSON.stringify(events));
    }),
    { seed, numRuns: 300 },
  );
});

test('text with lone surrogates (UTF-16 halves UTF-8 cannot hold) is projected as the record keeps it, so live readers and replays see the same', () => {
  // Any UTF-16 code units, lone surrogates included.
  const text = fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)), maxLength: 40 });
  const wellFormed = (s: string) => (s as string & { toWellFormed(): string }).toWellFormed();
  fc.assert(
    fc.property(fc.dictionary(text.filter((k) => k !== '__proto__' && k !== 'seq' && k !== 'ts'), text, { maxKeys: 4 }), text, (fields, chunk) => {
      const input = { ...fields, text: chunk };
      const names = Object.keys(input).map(wellFormed);
      if (new Set(names).size < names.length) {
        // Two keys that would be one: refused rather than one of them lost.
        assert.throws(() => projectStrictJson(input), (e: unknown) => isTroupeError(e, 'invalid_event_payload'));
        return;
      }
      const { value, bytes } = projectStrictJson(input, 8 * 1024 * 1024);
      const expected = Object.fromEntries(Object.entries(input).map(([k, v]) => [wellFormed(k), wellFormed(v)]));
      assert.deepEqual(value, expected);
      assert.equal(bytes, Buffer.byteLength(JSON.stringify(value)));
      const event = { ...(value as object), type: 'x', sessionId: 's', seq: 1, ts: 1_764_000_000_000 } as unknown as AgentEvent;
      assert.deepEqual(decodeEventRecord(encodeEventRecord([event]).subarray(FRAME_HEADER_BYTES), 0), [event]);
    }),
    { seed, numRuns: 300 },
  );
});
