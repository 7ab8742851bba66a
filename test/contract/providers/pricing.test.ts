// costOf: usage × catalogue prices, with cache reads and writes at their own rates.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { costOf } from '../../../src/providers/pricing.js';

test('every token class is charged at its rate per million', () => {
  const cost = costOf({ inputTokens: 1_000_000, outputTokens: 500_000, cacheReadTokens: 2_000_000, cacheWriteTokens: 100_000 }, { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 });
  assert.deepEqual(cost, { amount: 3 + 7.5 + 0.6 + 0.375, currency: 'USD' });
});

test('cache tokens fall back to the input rate when the vendor publishes none', () => {
  assert.deepEqual(costOf({ inputTokens: 0, outputTokens: 0, cacheReadTokens: 1_000_000, cacheWriteTokens: 1_000_000 }, { input: 2, output: 8 }), { amount: 4, currency: 'USD' });
});

test('no pricing, no cost', () => {
  assert.equal(costOf({ inputTokens: 10, outputTokens: 10 }, undefined), undefined);
});
