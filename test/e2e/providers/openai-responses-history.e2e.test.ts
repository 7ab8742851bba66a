// What troupe acp sends the Responses API on later requests must pass its checks on the history, or
// the session is stuck: the offending items stay in the log and every later request carries them
// again. Through the real openai SDK against the replay server; `refusal` below states the API's
// 400 "Item 'rs_…' of type 'reasoning' was provided without its required following item", which the
// replay server does not enforce itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AcpChild } from '../../support/acp-child.js';
import { fixture, startReplayServer } from '../../support/replay-server.js';

/** The 400 OpenAI answers `body` with for a reasoning item that nothing the model said follows; undefined if none. */
function refusal(body: any): string | undefined {
  const input: any[] = body.input ?? [];
  for (const [i, item] of input.entries()) {
    if (item.type !== 'reasoning') continue;
    const next = input[i + 1];
    const follows = next && (next.type === 'reasoning' || next.type === 'function_call' || (next.role === 'assistant' && next.type !== 'function_call_output'));
    if (!follows) return `Item '${item.id}' of type 'reasoning' was provided without its required following item.`;
  }
  return undefined;
}

test('openai: a reply cut by its output limit while it reasoned (reasoning, no answer) leaves no reasoning item without its following item', async (t) => {
  const server = await startReplayServer();
  t.after(() => server.close());
  const home = mkdtempSync(join(tmpdir(), 'troupe-e2e-home-'));
  const configHome = join(home, 'config');
  mkdirSync(join(configHome, 'troupe'), { recursive: true });
  writeFileSync(join(configHome, 'troupe', 'config.json'), JSON.stringify({ providers: { openai: { maxRetries: 0 } } }));
  const child = AcpChild.start({ home, env: { XDG_CONFIG_HOME: configHome, TROUPE_MODEL: 'openai/gpt-5', OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: 'sk-e2e-test' } });
  t.after(() => child.close());
  await child.initialize();
  const sessionId = await child.newSession(mkdtempSync(join(tmpdir(), 'troupe-e2e-ws-')));
  // The first prompt is counted, then spends its whole output on reasoning; the second goes by that call's usage.
  server.enqueue(
    { json: { object: 'response.input_tokens', input_tokens: 1_250 } },
    { sse: fixture('e2e-openai-responses-reasoning-only.sse') },
    { sse: fixture('e2e-openai-responses-answer.sse') },
  );

  assert.equal((await child.prompt(sessionId, 'hello there')).stopReason, 'max_tokens', child.stderr.slice(-2000));
  assert.equal((await child.prompt(sessionId, 'are you there?')).stopReason, 'end_turn', child.stderr.slice(-2000));

  const calls = server.requests.filter((r) => /^\/v1\/responses(\?|$)/.test(r.url));
  const second = calls[1]!.body;
  assert.equal(refusal(second), undefined, JSON.stringify(second.input));
  assert.deepEqual(
    second.input.map((i: any) => i.type ?? i.role),
    ['user', 'user'],
    'both prompts, and nothing of the reply that had nothing to follow its reasoning',
  );
  assert.deepEqual(child.schemaErrors, []);
});
