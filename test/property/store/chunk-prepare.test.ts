// prepareEvent's text-chunk path gives exactly what the general strict-JSON projection gives: the
// same copy (values and key order) and the same size, for any text and ids; near the size limit it
// refuses the same events. Replay with FC_SEED=<seed>.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { AgentEventInput } from '../../../src/core/events.js';
import { isTroupeError } from '../../../src/core/errors.js';
import { prepareEvent } from '../../../src/store/event-stamp.js';
import { projectStrictJson } from '../../../src/store/strict-json.codec.js';
import { fcRuns, fcSeed } from '../../support/fc-seed.js';

const seed = fcSeed('chunk-prepare');
const STAMP = new Set(['seq', 'ts']);
// What prepareEvent reserves for the stamp (`,"seq":…,"ts":…`).
const RESERVED = 12 + 26;

const outcome = (f: () => { value: unknown; bytes: number }) => {
  try {
    const r = f();
    return { value: JSON.stringify(r.value), keys: Object.keys(r.value as object), bytes: r.bytes };
  } catch (err) {
    return { error: isTroupeError(err) ? err.code : String(err) };
  }
};

test('a text chunk is prepared as the general projection would prepare it', () => {
  const chunk = fc.record({
    type: fc.constantFrom('agent_message_chunk', 'agent_thought_chunk'),
    sessionId: fc.constant('ses_a"b'),
    turnId: fc.string({ unit: 'binary' }),
    messageId: fc.string({ unit: 'binary' }),
    text: fc.string({ unit: 'binary', maxLength: 1200 }),
  });
  fc.assert(
    fc.property(chunk, fc.integer({ min: 1024, max: 2048 }), (input, maxBytes) => {
      const fast = outcome(() => {
        const p = prepareEvent(input as AgentEventInput, input.sessionId, maxBytes);
        return { value: p.body, bytes: p.bytes - RESERVED };
      });
      const general = outcome(() => projectStrictJson(input, maxBytes - RESERVED, STAMP));
      assert.deepEqual(fast, general);
      if (!('error' in general)) assert.equal(general.bytes, Buffer.byteLength(JSON.stringify(input)));
    }),
    { seed, numRuns: fcRuns(500) },
  );
});

test('chunks with other keys, other order or non-string fields take the general path', () => {
  const base = { type: 'agent_message_chunk', sessionId: 's', turnId: 't', messageId: 'm', text: 'x' };
  const cases: Record<string, unknown>[] = [
    { ...base, extra: 1 },
    { text: 'x', type: 'agent_message_chunk', sessionId: 's', turnId: 't', messageId: 'm' },
    { ...base, text: 5 },
    { ...base, text: undefined },
  ];
  for (const input of cases) {
    const fast = outcome(() => {
      const p = prepareEvent(input as AgentEventInput, 's', 4096);
      return { value: p.body, bytes: p.bytes - RESERVED };
    });
    assert.deepEqual(fast, outcome(() => projectStrictJson(input, 4096 - RESERVED, STAMP)));
  }
});
