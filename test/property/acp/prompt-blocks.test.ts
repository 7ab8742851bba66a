// The agent checks prompt blocks by hand (wellFormedBlock) rather than load the event schemas in
// every agent process; this holds the hand check equal to the schema the log is checked against:
// for any block-shaped value, both accept it or both refuse it. Replay with FC_SEED=<seed>.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ContentBlock } from '../../../src/core/events.js';
import { wellFormedBlock } from '../../../src/acp/prompt-content.js';
import { fcRuns, fcSeed } from '../../support/fc-seed.js';

const seed = fcSeed('prompt-blocks');

// Field values of every JSON-ish kind, strings most often (a well-formed block needs them).
const value = fc.oneof(
  { weight: 10, arbitrary: fc.string() },
  { weight: 1, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.oneof(fc.integer(), fc.double(), fc.constant(2 ** 60), fc.constant(-1)) },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.dictionary(fc.string(), fc.string(), { maxKeys: 2 }) },
);
// Sizes near the edges: negative, zero, fractional, unsafe and non-finite numbers.
const size = fc.oneof(fc.integer({ min: -3, max: 3 }), fc.constantFrom(Number.MAX_SAFE_INTEGER, 2 ** 60, Number.NaN, Infinity, 1.5), value);
// Absent or any value: a key missing and a key set to undefined are both "not given" to zod.
const field = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });

const block = fc.oneof(
  fc.record({ type: fc.constant('text'), text: field(value) }, { requiredKeys: ['type'] }),
  fc.record({ type: fc.constant('image'), data: field(value), mimeType: field(value), uri: field(value) }, { requiredKeys: ['type'] }),
  fc.record(
    { type: fc.constant('resource_link'), uri: field(value), name: field(value), title: field(value), description: field(value), mimeType: field(value), size: field(size) },
    { requiredKeys: ['type'] },
  ),
  fc.record({
    type: fc.constant('resource'),
    resource: fc.oneof(
      fc.record({ uri: field(value), text: field(value), mimeType: field(value) }, { requiredKeys: [] }),
      fc.record({ uri: field(value), blob: field(value), mimeType: field(value) }, { requiredKeys: [] }),
      fc.record({ uri: field(value), text: field(value), blob: field(value) }, { requiredKeys: [] }),
    ),
  }),
);

test('wellFormedBlock accepts exactly the blocks the event schema accepts', () => {
  let accepted = 0;
  fc.assert(
    fc.property(block, (b) => {
      const bySchema = ContentBlock.safeParse(b).success;
      if (bySchema) accepted++;
      assert.equal(wellFormedBlock(b as ContentBlock), bySchema, JSON.stringify(b));
    }),
    { seed, numRuns: fcRuns(3000) },
  );
  // Both sides of the equivalence were exercised.
  assert.ok(accepted > 100, `only ${accepted} well-formed blocks generated`);
});
