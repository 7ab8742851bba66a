// Tool call names as OpenAI-compatible servers stream them, through troupe acp, the openai SDK and
// the replay server. Chat Completions streams `function.name` as a delta like the arguments: a name
// may come in pieces, and some servers (MiniMax on NVIDIA NIM) send the whole name again in every
// delta. Either way the call must run under its whole name, once, and go back to the model so.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AcpChild } from '../../support/acp-child.js';
import { fixture, startReplayServer } from '../../support/replay-server.js';
import { providerHome } from '../../support/provider-home.js';

const NOTES = 'launch code: 4242\n';

test('openai-compatible: a tool name streamed in pieces, and one repeated in every delta, both run as read_file', async (t) => {
  const server = await startReplayServer();
  t.after(() => server.close());
  const { home, configHome } = providerHome({ 'openai-compatible': { maxRetries: 0 } });
  const child = AcpChild.start({ home, env: { XDG_CONFIG_HOME: configHome, TROUPE_MODEL: 'openai-compatible/qwen3-coder', OPENAI_BASE_URL: `${server.url}/v1` } });
  t.after(() => child.close());
  await child.initialize();
  const cwd = mkdtempSync(join(tmpdir(), 'troupe-e2e-ws-'));
  writeFileSync(join(cwd, 'notes.txt'), NOTES);
  const sessionId = await child.newSession(cwd);
  await child.agent.request('session/set_mode', { sessionId, modeId: 'bypass' });
  server.enqueue({ sse: fixture('e2e-openai-chat-tool-names.sse') }, { sse: fixture('e2e-openai-chat-answer.sse') });

  const res = await child.prompt(sessionId, 'What does notes.txt say?');
  assert.equal(res.stopReason, 'end_turn', child.stderr.slice(-2000));
  const calls = child.updatesFor(sessionId, 'tool_call');
  assert.deepEqual(calls.map((c) => [c.toolCallId, c.kind, c.rawInput]), [
    ['call_e2eSplitName01', 'read', { path: 'notes.txt' }],
    ['call_e2eRepeatName02', 'read', { path: 'notes.txt' }],
  ]);
  const done = child.updatesFor(sessionId, 'tool_call_update').filter((u) => u.status === 'completed' || u.status === 'failed');
  assert.deepEqual(done.map((u) => [u.toolCallId, u.status, u.rawOutput?.output]), [
    ['call_e2eSplitName01', 'completed', NOTES],
    ['call_e2eRepeatName02', 'completed', NOTES],
  ]);
  // The next request carries both calls under their whole name.
  const next = server.requests.filter((r) => /^\/v1\/chat\/completions(\?|$)/.test(r.url))[1]!.body;
  const assistant = next.messages.find((m: any) => m.role === 'assistant');
  assert.deepEqual(assistant.tool_calls.map((c: any) => [c.id, c.function.name]), [
    ['call_e2eSplitName01', 'read_file'],
    ['call_e2eRepeatName02', 'read_file'],
  ]);
  assert.deepEqual(child.schemaErrors, []);
});
