// A session that switches from Claude to a Mistral model (openai-compatible) with a tool call in its
// history, through troupe acp, the Anthropic and openai SDKs and the replay server. Mistral takes only
// tool call ids of 9 letters and digits, and refuses every request that carries another (Claude's
// `toolu_…`); the replay server does not enforce that rule: `refusal` below states it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AcpChild } from '../../support/acp-child.js';
import { fixture, startReplayServer } from '../../support/replay-server.js';
import { providerHome } from '../../support/provider-home.js';

/** The 400 Mistral answers `body` with for a tool call id it does not take; undefined if none. */
function refusal(body: any): string | undefined {
  for (const m of body.messages) {
    for (const id of [...(m.tool_calls ?? []).map((c: any) => c.id), ...(m.role === 'tool' ? [m.tool_call_id] : [])]) {
      if (!/^[a-zA-Z0-9]{9}$/.test(id)) return `Tool call id was ${id} but must be a-z, A-Z, 0-9, with a length of 9.`;
    }
  }
  return undefined;
}

test('openai-compatible: after a switch from Claude to a Mistral model, Claude\'s tool call ids go as ids Mistral takes, each paired with its result', async (t) => {
  const server = await startReplayServer();
  t.after(() => server.close());
  const { home, configHome } = providerHome({ anthropic: { maxRetries: 0 }, 'openai-compatible': { maxRetries: 0 } });
  const cwd = mkdtempSync(join(tmpdir(), 'troupe-e2e-ws-'));
  writeFileSync(join(cwd, 'notes.txt'), 'launch code: 4242\n');
  const child = AcpChild.start({
    home,
    env: { XDG_CONFIG_HOME: configHome, TROUPE_MODEL: 'anthropic/claude-sonnet-5-5', ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'sk-ant-e2e-test', OPENAI_BASE_URL: `${server.url}/v1` },
  });
  t.after(() => child.close());
  await child.initialize();
  const sessionId = await child.newSession(cwd);
  await child.agent.request('session/set_mode', { sessionId, modeId: 'bypass' });
  // Claude's turn: counted, a read_file call under its toolu_ id, then the answer.
  server.enqueue({ json: { input_tokens: 1_250 } }, { sse: fixture('e2e-anthropic-tool.sse') }, { sse: fixture('e2e-anthropic-answer.sse') });
  assert.equal((await child.prompt(sessionId, 'What does notes.txt say?')).stopReason, 'end_turn', child.stderr.slice(-2000));

  await child.prompt(sessionId, '/model openai-compatible/mistral-small-latest');
  server.enqueue({ sse: fixture('e2e-openai-chat-answer.sse') }, { sse: fixture('e2e-openai-chat-answer.sse') });
  assert.equal((await child.prompt(sessionId, 'and the owner?')).stopReason, 'end_turn', child.stderr.slice(-2000));
  assert.equal((await child.prompt(sessionId, 'anything else?')).stopReason, 'end_turn', child.stderr.slice(-2000));

  const [first, second] = server.requests.slice(-2).map((r) => r.body);
  for (const body of [first, second]) assert.equal(refusal(body), undefined, JSON.stringify(body.messages).slice(0, 2000));
  const call = first.messages.find((m: any) => m.tool_calls)?.tool_calls[0];
  const result = first.messages.find((m: any) => m.role === 'tool');
  assert.equal(call?.function.name, 'read_file');
  assert.equal(result?.tool_call_id, call.id, 'the result names its call');
  assert.equal(second.messages.find((m: any) => m.tool_calls).tool_calls[0].id, call.id, 'the same id on the next request');
  assert.deepEqual(child.schemaErrors, []);
});
