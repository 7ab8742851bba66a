// The context window of an openai-compatible model: the config's `contextWindow` where it names the
// model, else the fallback of 32,768 tokens (the server is never asked: docs/providers.md §Context
// budget and compaction). Through troupe acp against the replay server, the sizing before a turn goes
// by the configured window: each turn the server reports at 645 tokens fills 92% of a configured
// window of 700, and the first prompt with a turn to summarize compacts first; with no window
// configured (32,768) nothing is compacted.
// (A reply stopped for its length is read against the same window: window-full.test.ts.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AcpChild } from '../../support/acp-child.js';
import { fixture, startReplayServer } from '../../support/replay-server.js';
import { providerHome } from '../../support/provider-home.js';

const MODEL = 'qwen3-coder';
const summarizes = (body: unknown) => JSON.stringify(body).includes('Summarize the conversation above');

/** Four prompts on openai-compatible/qwen3-coder with `models` in its config; what each model call was. */
async function fourPrompts(t: { after(fn: () => unknown): void }, models: Record<string, unknown>): Promise<{ calls: string[]; sizes: number[]; notes: string[] }> {
  const server = await startReplayServer();
  t.after(() => server.close());
  const { home, configHome } = providerHome({ 'openai-compatible': { maxRetries: 0, models } });
  const child = AcpChild.start({ home, env: { XDG_CONFIG_HOME: configHome, TROUPE_MODEL: `openai-compatible/${MODEL}`, OPENAI_BASE_URL: `${server.url}/v1` } });
  t.after(() => child.close());
  await child.initialize();
  const sessionId = await child.newSession(mkdtempSync(join(tmpdir(), 'troupe-e2e-ws-')));
  // An answer for each call, a summary's as a turn's (any text will do for either); what is left unused is never asked for.
  server.enqueue(...Array.from({ length: 8 }, () => ({ sse: fixture('e2e-openai-chat-answer.sse') })));
  for (const prompt of ['one', 'two', 'three', 'four']) assert.equal((await child.prompt(sessionId, prompt)).stopReason, 'end_turn', child.stderr.slice(-2000));
  const sizes = child.updatesFor(sessionId, 'usage_update').map((u) => u.size as number);
  const notes = child.updatesFor(sessionId, 'agent_thought_chunk').map((u) => u.content.text as string);
  return { calls: server.requests.map((r) => (summarizes(r.body) ? 'summary' : 'turn')), sizes, notes };
}

test('openai-compatible: the configured contextWindow sizes the request before a turn: a window nearly full compacts first', async (t) => {
  const { calls, sizes, notes } = await fourPrompts(t, { [MODEL]: { contextWindow: 700 } });
  // Each turn is sized and found over the budget; the fourth prompt is the first with a turn older
  // than the last two, which a compaction summarizes (the first three had nothing it could make smaller).
  assert.deepEqual(calls, ['turn', 'turn', 'turn', 'summary', 'turn']);
  assert.ok(notes.some((n) => /Compacting the conversation: preflight/.test(n)), JSON.stringify(notes));
  assert.ok(sizes.length > 0 && sizes.every((s) => s === 700), JSON.stringify(sizes));
});

test('openai-compatible: with no contextWindow configured the fallback of 32,768 holds: the same turns compact nothing', async (t) => {
  const { calls, sizes, notes } = await fourPrompts(t, {});
  assert.deepEqual(calls, ['turn', 'turn', 'turn', 'turn']);
  assert.ok(!notes.some((n) => /Compacting/.test(n)), JSON.stringify(notes));
  assert.ok(sizes.length > 0 && sizes.every((s) => s === 32_768), JSON.stringify(sizes));
});
