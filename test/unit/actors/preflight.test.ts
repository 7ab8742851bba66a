// Preflight asks the vendor to count the prompt only when the model's own last measure (the usage of
// its last call) plus what was added since could be near the budget: the count is a network round
// trip before every turn's first token otherwise.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ModelProvider } from '../../../src/core/provider.js';
import type { ScriptItem } from '../../../src/providers/scripted/script-items.js';
import type { EngineLimits } from '../../../src/actors/engine-core.js';
import { makeHarness, text } from '../../support/engine-harness.js';

const WINDOW = 10_000; // budget: 0.8 × 10,000 = 8,000 tokens (the default compactThreshold)

function setup(replies: ScriptItem[][], limits: Partial<EngineLimits> = {}) {
  const counted: number[] = [];
  let vendorCount = 500;
  const h = makeHarness(replies, {
    capabilities: { contextWindow: WINDOW },
    limits,
    wrapProvider: (inner): ModelProvider => ({
      ...inner,
      stream: (request, signal) => inner.stream(request, signal),
      capabilities: (model) => inner.capabilities(model),
      async countTokens() {
        counted.push(vendorCount);
        return vendorCount;
      },
    }),
  });
  return { ...h, counted, setVendorCount: (n: number) => (vendorCount = n) };
}

const reply = (input: number): ScriptItem[] => [{ text: 'ok' }, { usage: { input, output: 10 } }];

test('the vendor counts the first prompt, not the next ones far inside the budget', async () => {
  const s = setup([reply(1_000), reply(1_200), reply(1_400)]);
  for (const p of ['one', 'two', 'three']) assert.equal((await s.engine.prompt(text(p)).result).stopReason, 'end_turn');
  assert.equal(s.counted.length, 1, 'only the first prompt, before any usage, was counted');
  assert.deepEqual(s.ofType('compaction_started'), []);
});

test('near the budget the vendor counts, and its count decides the compaction', async () => {
  // One turn kept: by the third prompt there is a turn to summarize (a compaction with nothing to
  // make smaller is not made, over the budget or not).
  const s = setup([reply(7_900), reply(2_000), reply(2_000)], { keepTurns: 1 });
  await s.engine.prompt(text('first')).result;
  assert.equal(s.counted.length, 1);
  // 7,910 measured + 200 characters at 2 per token > 8,000: counted. The vendor says it fits.
  s.setVendorCount(7_000);
  assert.equal((await s.engine.prompt(text('x'.repeat(200))).result).stopReason, 'end_turn');
  assert.equal(s.counted.length, 2);
  assert.deepEqual(s.ofType('compaction_started'), [], 'the count said it fits');
  // The last call measured 2,010, but a 14,000-character prompt could be 7,000 tokens: counted again,
  // and this time the vendor's count is over the budget.
  s.setVendorCount(9_000);
  assert.equal((await s.engine.prompt(text('y'.repeat(14_000))).result).stopReason, 'end_turn');
  assert.equal(s.counted.length, 3);
  assert.deepEqual(s.ofType('compaction_started').map((e) => e.reason), ['preflight']);
});

test('after a compaction or a change of model the measure is gone, and the vendor counts again', async () => {
  const s = setup([reply(1_000), reply(1_000), reply(1_000), reply(1_000)]);
  await s.engine.prompt(text('one')).result;
  await s.engine.prompt(text('two')).result;
  assert.equal(s.counted.length, 1);
  s.engine.configure({ model: 'scripted/other' });
  await s.engine.prompt(text('three')).result;
  assert.equal(s.counted.length, 2, 'another model, another tokenizer');
  await s.engine.compactNow();
  assert.equal(s.ofType('compaction_completed').at(-1)?.status, 'completed');
  await s.engine.prompt(text('four')).result;
  assert.equal(s.counted.length, 3, 'the compacted conversation was never measured');
});

test('without a vendor count, the model measure decides too: the offline estimate is not made while it is far inside the budget', async () => {
  // No countTokens: the scripted model alone, with a window of 100,000 (budget 80,000). The estimate
  // is 4 characters a token, plus the system prompt and the tools (under 2,000 tokens here). 240,000
  // characters are about 62,000 by it, under the budget; the model then reports it used 1,000. A
  // 100,000-character prompt takes the estimate to about 87,000, over the budget, but the measure to
  // 1,010 + 50,000, well under it.
  const s = makeHarness([reply(1_000), reply(1_200)], { capabilities: { contextWindow: 100_000 } });
  assert.equal((await s.engine.prompt(text('a'.repeat(240_000))).result).stopReason, 'end_turn');
  assert.deepEqual(s.ofType('compaction_started'), [], 'the estimate fits the first prompt');
  assert.equal((await s.engine.prompt(text('b'.repeat(100_000))).result).stopReason, 'end_turn');
  assert.deepEqual(s.ofType('compaction_started'), [], 'the model measured far less than the estimate says');
});

test('without a vendor count, the offline estimate still decides when the measure comes near the budget', async () => {
  const s = makeHarness([reply(7_500), reply(1_000), reply(1_000)], { capabilities: { contextWindow: WINDOW }, limits: { keepTurns: 1 } });
  await s.engine.prompt(text('first')).result;
  // 7,510 measured + 2,000 characters at 2 a token > 8,000: estimated, and the short conversation
  // (about 500 tokens, plus the system prompt and tools) fits.
  await s.engine.prompt(text('c'.repeat(2_000))).result;
  assert.deepEqual(s.ofType('compaction_started'), [], 'the estimate decides, and it fits');
  // Over the measure and the estimate both: 36,000 characters are about 9,000 tokens.
  await s.engine.prompt(text('d'.repeat(36_000))).result;
  assert.deepEqual(s.ofType('compaction_started').map((e) => e.reason), ['preflight']);
});

test('an image counts as 1,600 tokens, not as its base64 text: a screenshot does not compact a window it fits in', async () => {
  // No count endpoint: the offline estimate sizes the prompt, and the offline model reports it as usage.
  const run = async (withImage: boolean) => {
    const h = makeHarness([[{ text: 'a cat' }], [{ text: 'still a cat' }]], { capabilities: { contextWindow: WINDOW, images: true } });
    const data = Buffer.alloc(300_000, 7).toString('base64'); // 400,000 characters: 100,000 tokens as text
    const prompt = [{ type: 'text' as const, text: 'what is this?' }, ...(withImage ? [{ type: 'image' as const, mimeType: 'image/png', data }] : [])];
    assert.equal((await h.engine.prompt(prompt).result).stopReason, 'end_turn');
    assert.equal((await h.engine.prompt(text('and now?')).result).stopReason, 'end_turn');
    assert.deepEqual(h.ofType('compaction_started'), []);
    return h.ofType('usage').map((u) => u.inputTokens);
  };
  const [withImage, without] = [await run(true), await run(false)];
  // The image's share of each estimate: 1,600 tokens, and its block's few other characters.
  const share = withImage.map((n, i) => n - without[i]!);
  assert.ok(share.every((n) => n >= 1_600 && n < 1_630), `the image counted ${share} tokens`);
});

test('over the budget, preflight compacts only what a compaction can make smaller: a long tool output not yet cut, never nothing', async () => {
  const s = setup([
    [{ tool_call: { name: 'read_file', input: { path: 'big.txt' } } }],
    [{ text: 'read it' }, { usage: { input: 7_900, output: 10 } }],
    reply(7_900),
    reply(7_900),
  ]);
  writeFileSync(join(s.dir, 'big.txt'), `${'z'.repeat(99)}\n`.repeat(100)); // 10,000 characters
  s.setVendorCount(9_000); // always over the budget of 8,000
  const compactions = () => s.ofType('compaction_completed');
  assert.equal((await s.engine.prompt(text(`read big.txt ${'x'.repeat(400)}`)).result).stopReason, 'end_turn');
  assert.deepEqual(compactions(), [], 'over the budget, but no earlier turn and no tool output: nothing to compact');
  assert.equal((await s.engine.prompt(text('y'.repeat(400))).result).stopReason, 'end_turn');
  assert.deepEqual(s.ofType('compaction_started').map((e) => e.reason), ['preflight'], 'the long tool output can be cut');
  const [cut] = compactions();
  assert.deepEqual([cut!.status, cut!.summary, cut!.toolOutputLimit], ['completed', undefined, 4_000]);
  assert.equal((await s.engine.prompt(text('w'.repeat(400))).result).stopReason, 'end_turn');
  assert.equal(compactions().length, 1, 'the output is cut already, and the two turns are the ones kept: nothing more to compact');
  assert.equal(s.counted.length, 3, 'every prompt was sized');
  assert.deepEqual(s.schemaErrors, []);
});
