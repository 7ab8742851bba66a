// DeepSeek's thinking mode through troupe acp, the openai SDK and the replay server: the model's
// thoughts stream as `reasoning_content`, and the next request of the turn (after its tool call) must
// carry them back on the assistant message, or DeepSeek refuses it (400 "The `reasoning_content` in
// the thinking mode must be passed back to the API"). The replay server does not enforce that rule;
// `refusal` below states it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AcpChild } from '../../support/acp-child.js';
import { startReplayServer } from '../../support/replay-server.js';
import { providerHome } from '../../support/provider-home.js';

const chunk = (delta: object, finish: string | null = null, usage?: object) =>
  `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1777000000, model: 'deepseek-v4-pro', choices: [{ index: 0, delta, finish_reason: finish }], ...(usage ? { usage } : {}) })}\n\n`;

const THOUGHT = 'The user wants the launch code. I should read notes.txt.';
const toolStep =
  chunk({ role: 'assistant', content: null, reasoning_content: 'The user wants the launch code. ' }) +
  chunk({ reasoning_content: 'I should read notes.txt.' }) +
  chunk({ tool_calls: [{ index: 0, id: 'call_00_ds', type: 'function', function: { name: 'read_file', arguments: '{"path":"notes.txt"}' } }] }) +
  chunk({}, 'tool_calls', { prompt_tokens: 300, completion_tokens: 30, total_tokens: 330 }) +
  'data: [DONE]\n\n';
const answerStep =
  chunk({ role: 'assistant', content: null, reasoning_content: 'The file says 4242.' }) +
  chunk({ content: 'The launch code is 4242.' }) +
  chunk({}, 'stop', { prompt_tokens: 360, completion_tokens: 12, total_tokens: 372 }) +
  'data: [DONE]\n\n';

/** DeepSeek's rule: an assistant message with tool calls, in thinking mode, carries its reasoning_content. */
function refusal(body: any): string | undefined {
  const index = body.messages.findIndex((m: any) => m.role === 'assistant' && m.tool_calls && typeof m.reasoning_content !== 'string');
  return index < 0 ? undefined : `Missing \`reasoning_content\` field in the assistant message at message index ${index}`;
}

test('deepseek (openai-compatible): a tool call in thinking mode goes back with its reasoning_content, so the turn can go on', async (t) => {
  const server = await startReplayServer();
  t.after(() => server.close());
  const { home, configHome } = providerHome({ 'openai-compatible': { maxRetries: 0 } });
  const cwd = mkdtempSync(join(tmpdir(), 'troupe-e2e-ws-'));
  writeFileSync(join(cwd, 'notes.txt'), 'launch code: 4242\n');
  const child = AcpChild.start({ home, env: { XDG_CONFIG_HOME: configHome, TROUPE_MODEL: 'openai-compatible/deepseek-v4-pro', OPENAI_BASE_URL: `${server.url}/v1` } });
  t.after(() => child.close());
  await child.initialize();
  const sessionId = await child.newSession(cwd);
  await child.agent.request('session/set_mode', { sessionId, modeId: 'bypass' });
  server.enqueue({ sse: toolStep }, { sse: answerStep });

  assert.equal((await child.prompt(sessionId, 'What is the launch code?')).stopReason, 'end_turn', child.stderr.slice(-2000));
  const second = server.requests[1]!.body;
  assert.equal(refusal(second), undefined, JSON.stringify(second.messages));
  const call = second.messages.find((m: any) => m.role === 'assistant');
  assert.equal(call.reasoning_content, THOUGHT);
  assert.deepEqual(child.schemaErrors, []);
});
