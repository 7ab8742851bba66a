// Compaction under a context window that is really enforced: the model here refuses any request
// whose size (its own count, ~4 characters a token times a density) exceeds the window of the model
// asked for, with Anthropic's "prompt is too long" error, as a vendor does. Sessions over their limit
// must always be compacted or continued, never wedged.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { ProviderError, type ModelCapabilities, type ModelMessage, type ModelProvider, type ModelRequest } from '../../../src/core/provider.js';
import { DEFAULT_LIMITS, type EngineLimits } from '../../../src/actors/engine-core.js';
import { fitForSummary, SUMMARY_INSTRUCTION } from '../../../src/actors/compaction.effect.js';
import { estimateTokens } from '../../../src/core/provider.js';
import type { ScriptItem } from '../../../src/providers/scripted/script-items.js';
import { makeHarness, text, type Harness } from '../../support/engine-harness.js';
import { fcRuns, fcSeed } from '../../support/fc-seed.js';

const CAPS: ModelCapabilities = { contextWindow: 100_000, maxOutputTokens: 1_000, tools: true, thinking: false, images: false };

/** The model's own token count: independent of troupe's estimator, scaled by `density`. */
const vendorCount = (r: ModelRequest, density: number) => Math.ceil((JSON.stringify({ s: r.system, m: r.messages, t: r.tools }).length / 4) * density);

interface Setup extends Harness {
  /** Every request the model received (accepted or refused), in order. */
  requests: { request: ModelRequest; refused: boolean }[];
}

/**
 * An engine on real parts (in-memory log, workspace tools in a temp dir, bypass mode) whose model
 * enforces its window. `windows` maps model names (`scripted/<name>`) to context windows; turn replies
 * come from a scripted/replay script, summaries from the scripted model. `compactionDensity` says how
 * many more tokens the model counts in summarization requests than ~4 characters a token.
 */
function setup(replies: ScriptItem[][], opts: { windows: Record<string, number>; model: string; compactionDensity?: number; limits?: Partial<EngineLimits> }): Setup {
  const requests: Setup['requests'] = [];
  const caps = (model: string): ModelCapabilities => ({ ...CAPS, contextWindow: opts.windows[model]! });
  const h = makeHarness(replies, {
    mode: 'bypass',
    model: `scripted/${opts.model}`,
    ...(opts.limits ? { limits: opts.limits } : {}),
    wrapProvider: (inner): ModelProvider => ({
      id: 'scripted',
      capabilities: caps,
      async *stream(request, signal) {
        const window = caps(request.model).contextWindow;
        const used = vendorCount(request, request.purpose === 'compaction' ? (opts.compactionDensity ?? 1) : 1);
        requests.push({ request: structuredClone(request), refused: used > window });
        if (used > window) throw new ProviderError('context_overflow', `prompt is too long: ${used} tokens > ${window} maximum`, { status: 400 });
        yield* inner.stream({ ...request, model: 'replay' }, signal);
      },
    }),
  });
  return { ...h, requests };
}

const lines = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag} line ${i} ${'x'.repeat(60)}`).join('\n') + '\n';
const readFile = (path: string): ScriptItem[] => [{ tool_call: { name: 'read_file', input: { path } } }];
const summaryRequests = (s: Setup) => s.requests.filter((r) => r.request.purpose === 'compaction');
const lastUserText = (r: ModelRequest) => JSON.stringify(r.messages.at(-1));

/**
 * Three turns that each read a ~30k-character file and send a 12k-character prompt on a model with a
 * 100k window, then a switch to a 6k window: the older history alone is larger than the new window.
 */
async function bigHistoryThenSmallModel(s: Setup): Promise<void> {
  for (let i = 1; i <= 3; i++) {
    writeFileSync(join(s.dir, `f${i}.txt`), lines(400, `file${i}`));
    const r = await s.engine.prompt(text(`turn ${i}: read f${i}.txt ${'please '.repeat(1700)}`)).result;
    assert.equal(r.stopReason, 'end_turn');
  }
  s.engine.configure({ model: 'scripted/small' });
}
const threeTurns: ScriptItem[][] = [readFile('f1.txt'), [{ text: 'read 1' }], readFile('f2.txt'), [{ text: 'read 2' }], readFile('f3.txt'), [{ text: 'read 3' }]];
const windows = { big: 100_000, small: 6_000 };

test('the summarization request is cut to fit a window the history no longer fits, and the turn goes on', async () => {
  const s = setup([...threeTurns, [{ text: 'continuing on the small model' }]], { windows, model: 'big' });
  await bigHistoryThenSmallModel(s);
  const before = s.requests.length;
  const r = await s.engine.prompt(text('go on')).result;
  assert.equal(r.stopReason, 'end_turn', `turn failed: ${r.errorCode} ${r.message}`);
  const summaries = summaryRequests(s).filter((_, i, all) => s.requests.indexOf(all[i]!) >= before);
  assert.ok(summaries.length >= 1, 'a summary was asked for');
  for (const { request, refused } of summaries) {
    assert.equal(refused, false, 'the summarization request fitted the window');
    assert.ok(estimateTokens(request) <= 0.6 * windows.small, `summary input ${estimateTokens(request)} tokens is within 60% of the window`);
    assert.match(lastUserText(request), /Summarize the conversation above/);
    assert.match(JSON.stringify(request.messages), /characters removed by compaction/, 'long content was cut');
  }
  const done = s.ofType('compaction_completed');
  assert.ok(done.every((e) => e.status === 'completed'));
  assert.ok(done.some((e) => e.summary), 'the older turns were summarized');
  assert.deepEqual(s.schemaErrors, []);
});

test('a summary call the vendor still refuses is retried once with half the budget', async () => {
  // Every completed turn is summarized (keepTurns 0), and the vendor counts that text 3.2× denser
  // than troupe's estimate: a first request fitted to 60% is refused, one within 30% is not.
  const s = setup([...threeTurns, [{ text: 'continuing' }]], { windows, model: 'big', compactionDensity: 3.2, limits: { keepTurns: 0 } });
  await bigHistoryThenSmallModel(s);
  const r = await s.engine.prompt(text('go on')).result;
  assert.equal(r.stopReason, 'end_turn', `turn failed: ${r.errorCode} ${r.message}`);
  const [first, second, ...rest] = summaryRequests(s);
  assert.equal(rest.length, 0, 'one compaction, two attempts');
  assert.equal(first!.refused, true);
  assert.equal(second!.refused, false);
  assert.ok(estimateTokens(second!.request) <= 0.3 * windows.small, `the retry fits half the budget (${estimateTokens(second!.request)})`);
  const done = s.ofType('compaction_completed').at(-1)!;
  assert.equal(done.status, 'completed');
  assert.match(done.summary ?? '', /^Summary of the earlier conversation/, 'the model wrote the summary');
});

test('when even half the budget is refused, an outline stands in for the summary and the session goes on', async () => {
  const s = setup([...threeTurns, [{ text: 'continuing' }], [{ text: 'and again' }]], { windows, model: 'big', compactionDensity: 50, limits: { keepTurns: 0 } });
  await bigHistoryThenSmallModel(s);
  const r = await s.engine.prompt(text('go on')).result;
  assert.equal(r.stopReason, 'end_turn', `turn failed: ${r.errorCode} ${r.message}`);
  assert.equal(summaryRequests(s).length, 2, 'exactly two attempts, no loop');
  const done = s.ofType('compaction_completed').at(-1)!;
  assert.equal(done.status, 'completed');
  assert.match(done.summary ?? '', /^\[No model summary could be made/);
  assert.match(done.summary ?? '', /The user wrote: turn 1: read f1\.txt/);
  assert.match(done.summary ?? '', /read_file \{"path":"f1\.txt"\}/);
  assert.equal((await s.engine.prompt(text('next')).result).stopReason, 'end_turn', 'not wedged');
  assert.deepEqual(s.schemaErrors, []);
});

test('a turn whose one tool output is larger than the window: overflow, compaction cuts it, the retry fits', async () => {
  // 2,500 tokens: the tool specs take ~1,600, so even the default 4,000-character cut would not fit.
  const s = setup([readFile('huge.txt'), [{ text: 'the file is long' }]], { windows: { small: 2_500 }, model: 'small' });
  writeFileSync(join(s.dir, 'huge.txt'), lines(1_500, 'huge'));
  const r = await s.engine.prompt(text('read huge.txt')).result;
  assert.deepEqual([r.stopReason, r.steps], ['end_turn', 2], `turn failed: ${r.errorCode} ${r.message}`);
  assert.deepEqual(s.ofType('compaction_started').map((e) => e.reason), ['overflow']);
  assert.equal(summaryRequests(s).length, 0, 'nothing older to summarize: only the output is cut');
  const [done] = s.ofType('compaction_completed');
  assert.equal(done!.status, 'completed');
  assert.ok(done!.toolOutputLimit! < DEFAULT_LIMITS.toolOutputLimit, 'the cut is sized to the small window');
  const turnRequests = s.requests.filter((q) => q.request.purpose === 'turn');
  assert.deepEqual(turnRequests.map((q) => q.refused), [false, true, false]);
  const output = (q: { request: ModelRequest }) => (q.request.messages.at(-1) as Extract<ModelMessage, { role: 'tool' }>).results[0]!.output;
  assert.ok(output(turnRequests[1]!).length > 90_000, 'the refused request carried the whole file');
  assert.ok(output(turnRequests[2]!).startsWith('huge line 0'));
  assert.match(output(turnRequests[2]!), /characters removed by compaction\]$/);
  assert.ok(output(turnRequests[2]!).length < done!.toolOutputLimit! + 100);
});

test('after a prompt too large for the window even compacted, the next prompt runs no compaction that has nothing to compact', async () => {
  // Turn 1 reads a file (its output is cut by the overflow compaction), turns 2 and 3 are short;
  // then a 40,000-character prompt on a 6,000-token window: refused before and after its compaction.
  const s = setup([readFile('f1.txt'), [{ text: 'read 1' }], [{ text: 'two' }], [{ text: 'three' }], [{ text: 'after' }]], { windows: { small: 6_000 }, model: 'small' });
  writeFileSync(join(s.dir, 'f1.txt'), lines(80, 'file1'));
  for (const p of ['read f1.txt', 'two', 'three']) assert.equal((await s.engine.prompt(text(p)).result).stopReason, 'end_turn');
  const failed = await s.engine.prompt(text('x'.repeat(40_000))).result;
  assert.deepEqual([failed.stopReason, failed.errorCode], ['error', 'context_overflow']);
  assert.deepEqual(s.ofType('compaction_started').map((e) => e.reason), ['preflight', 'overflow'], 'the failed turn compacted what it could');
  const [seen, requests] = [s.events.length, s.requests.length];

  // Every completed turn is summarized already, and the two the preflight compaction keeps are the
  // ones the summary covers: a preflight compaction would summarize nothing and cut nothing.
  const next = await s.engine.prompt(text('small')).result;
  assert.equal(next.stopReason, 'end_turn', `turn failed: ${next.errorCode} ${next.message}`);
  const started = s.events.slice(seen).filter((e) => e.type === 'compaction_started');
  assert.deepEqual(started.map((e) => e.reason), ['overflow'], 'no preflight compaction; the overflow one summarizes the too-large prompt');
  const done = s.events.slice(seen).filter((e) => e.type === 'compaction_completed');
  assert.ok(done.every((e) => e.status === 'completed' && e.summary !== undefined), 'every compaction summarized something');
  assert.deepEqual(s.requests.slice(requests).map((q) => [q.request.purpose, q.refused]), [['turn', true], ['compaction', false], ['turn', false]]);
  assert.deepEqual(s.schemaErrors, []);
});

test('a session\'s first prompt too large by itself: one refused request, no compaction, context_overflow; the next prompt compacts it and goes on', async () => {
  const s = setup([[{ text: 'after' }]], { windows: { small: 6_000 }, model: 'small' });
  const failed = await s.engine.prompt(text('x'.repeat(40_000))).result;
  assert.deepEqual([failed.stopReason, failed.errorCode, failed.steps], ['error', 'context_overflow', 1]);
  assert.match(failed.vendorMessage!, /prompt is too long/);
  // Nothing to summarize (no completed turn) and no tool output to cut: until 2026-12-06 a
  // compaction that did nothing was made, and the identical request sent again, refused again.
  assert.deepEqual(s.requests.map((q) => [q.request.purpose, q.refused]), [['turn', true]], 'one request, not sent again');
  assert.deepEqual([s.ofType('compaction_started'), s.ofType('compaction_completed')], [[], []]);

  // The failed turn is an earlier turn now: the next prompt's overflow summarizes it, and fits.
  const next = await s.engine.prompt(text('small')).result;
  assert.equal(next.stopReason, 'end_turn', `turn failed: ${next.errorCode} ${next.message}`);
  assert.deepEqual(s.ofType('compaction_started').map((e) => e.reason), ['overflow']);
  assert.deepEqual(s.requests.slice(1).map((q) => [q.request.purpose, q.refused]), [['turn', true], ['compaction', false], ['turn', false]]);
  assert.deepEqual(s.schemaErrors, []);
});

test('fitForSummary: any history fits any budget, starts with the user, keeps the previous summary and the newest message', () => {
  const seed = fcSeed('fitForSummary');
  const big = fc.string({ maxLength: 3_000 });
  const turn = fc.tuple(big, big, fc.boolean(), big).map(([user, said, tool, output]): ModelMessage[] => [
    { role: 'user', content: [{ type: 'text', text: `ask ${user}` }] },
    { role: 'assistant', text: said, toolCalls: tool ? [{ id: 'c1', name: 'write_file', input: { path: 'a', content: output } }] : [], thinking: said, reasoning: [{ provider: 'x', kind: 'r', data: said }] },
    ...(tool ? [{ role: 'tool' as const, results: [{ toolCallId: 'c1', name: 'write_file', output, isError: false }] }, { role: 'assistant' as const, text: 'done', toolCalls: [] }] : []),
  ]);
  fc.assert(
    fc.property(fc.array(turn, { minLength: 1, maxLength: 12 }), fc.option(big, { nil: undefined }), fc.integer({ min: 400, max: 8_000 }), (turns, previous, budget) => {
      const history = turns.flat();
      const out = fitForSummary(history, previous, budget, 4_000);
      assert.ok(estimateTokens({ system: 'You write summaries of coding sessions.', messages: out, tools: [] }) <= budget);
      assert.equal(out[0]!.role, 'user');
      const last = out.at(-1)!;
      assert.ok(last.role === 'user' && last.content.some((b) => b.type === 'text' && b.text === SUMMARY_INSTRUCTION));
      for (let i = 1; i < out.length; i++) assert.ok(!(out[i]!.role === 'user' && out[i - 1]!.role === 'user'), 'roles alternate');
      out.forEach((m, i) => {
        if (m.role === 'tool') assert.equal(out[i - 1]?.role, 'assistant', 'tool results follow their calls');
        if (m.role === 'assistant') assert.equal(m.reasoning ?? m.thinking, undefined, 'no reasoning is sent to the summarizer');
      });
      if (previous !== undefined) assert.match(JSON.stringify(out[0]), /\[Summary of the earlier conversation\]/);
      const newest = history.at(-1)!;
      if (newest.role === 'assistant') assert.ok(out.some((m) => m.role === 'assistant' && m.text.startsWith(newest.text.slice(0, 200))), 'the newest message is kept');
    }),
    { seed, numRuns: fcRuns(60) },
  );
});

test('fitForSummary leaves the oldest messages out behind a marker when cutting is not enough', () => {
  const history: ModelMessage[] = [];
  for (let i = 0; i < 60; i++) history.push({ role: 'user', content: [{ type: 'text', text: `request ${i} ${'r'.repeat(500)}` }] }, { role: 'assistant', text: `answer ${i}`, toolCalls: [] });
  const out = fitForSummary(history, 'what happened before', 2_000, 4_000);
  const all = JSON.stringify(out);
  assert.match(all, /earlier messages were left out here to fit the context window/);
  assert.match(all, /what happened before/, 'the previous summary stays');
  assert.doesNotMatch(all, /request 0 /, 'the oldest went first');
  assert.match(all, /request 59 /, 'the newest stayed');
  assert.ok(estimateTokens({ system: 'You write summaries of coding sessions.', messages: out, tools: [] }) <= 2_000);
});
