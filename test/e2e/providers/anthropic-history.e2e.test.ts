// What troupe acp sends Anthropic on later requests must pass the Messages API's own checks on the
// history, or the session is stuck: the offending message stays in the log and every later request
// carries it again. Through the real Anthropic SDK against the replay server; `refusal` below states
// the API's 400s ("text content blocks must contain non-whitespace text", "content cannot be empty if
// `is_error` is true", an image media_type other than the four it takes, a tool_use id outside
// `^[a-zA-Z0-9_-]+$`), which the replay server does not enforce itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { AcpChild } from '../../support/acp-child.js';
import { fixture, startReplayServer, type ReplayServer } from '../../support/replay-server.js';
import { TWO_PHOTOS_PROMPT } from './provider-e2e.js';
import { providerHome } from '../../support/provider-home.js';

const MCP_SERVER = resolve('dist/test/support/mcp-test-server.js');
const answer = () => ({ sse: fixture('e2e-anthropic-answer.sse') });
const modelCalls = (server: ReplayServer) => server.requests.filter((r) => /^\/v1\/messages(\?|$)/.test(r.url));

/** The 400 Anthropic answers `body` with, for the history rules these tests are about; undefined if none. */
function refusal(body: any): string | undefined {
  for (const [i, m] of (body.messages ?? []).entries()) {
    for (const b of Array.isArray(m.content) ? m.content : []) {
      if (b.type === 'text' && b.text.trim() === '') return `messages.${i}: text content blocks must contain non-whitespace text`;
      const empty = typeof b.content === 'string' ? b.content.trim() === '' : !b.content?.length;
      if (b.type === 'tool_result' && b.is_error && empty) return `messages.${i}: tool_result: content cannot be empty if \`is_error\` is true`;
      const id = b.type === 'tool_use' ? b.id : b.type === 'tool_result' ? b.tool_use_id : undefined;
      if (id !== undefined && !/^[a-zA-Z0-9_-]+$/.test(id)) return `messages.${i}: ${b.type}.id: String should match pattern '^[a-zA-Z0-9_-]+$'`;
      if (b.type === 'image' && !['image/jpeg', 'image/png', 'image/gif', 'image/webp'].includes(b.source?.media_type)) {
        return `messages.${i}: image.source.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'`;
      }
    }
  }
  return undefined;
}

async function start(t: { after(fn: () => unknown): void }, server: ReplayServer, model = 'anthropic/claude-sonnet-5-5'): Promise<{ child: AcpChild; cwd: string }> {
  const { home, configHome } = providerHome({ anthropic: { maxRetries: 0 } });
  const child = AcpChild.start({
    home,
    // An OpenAI-compatible server on the same replay server, for the switch from one.
    env: { XDG_CONFIG_HOME: configHome, TROUPE_MODEL: model, ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'sk-ant-e2e-test', OPENAI_BASE_URL: `${server.url}/v1` },
  });
  t.after(() => child.close());
  await child.initialize();
  return { child, cwd: mkdtempSync(join(tmpdir(), 'troupe-e2e-ws-')) };
}

test('anthropic: a reply of nothing but blank lines is not sent back as a text block, so the next prompt is not refused', async (t) => {
  const server = await startReplayServer();
  t.after(() => server.close());
  const { child, cwd } = await start(t, server);
  const sessionId = await child.newSession(cwd);
  // The first prompt is counted, then answered "\n\n"; the second goes by that call's usage.
  server.enqueue({ json: { input_tokens: 1_250 } }, { sse: fixture('e2e-anthropic-blank.sse') }, answer());

  assert.equal((await child.prompt(sessionId, 'hello there')).stopReason, 'end_turn', child.stderr.slice(-2000));
  assert.equal((await child.prompt(sessionId, 'are you there?')).stopReason, 'end_turn', child.stderr.slice(-2000));

  const second = modelCalls(server)[1]!.body;
  assert.equal(refusal(second), undefined, JSON.stringify(second.messages));
  // Nothing of the blank reply is left, and the roles still alternate: both prompts go as one user turn.
  assert.deepEqual(
    second.messages.map((m: any) => [m.role, m.content.map((b: any) => b.text)]),
    [['user', ['hello there', 'are you there?']]],
  );
  assert.deepEqual(child.schemaErrors, []);
});

test('anthropic: a tool that fails without output goes back as an error result that says so, and the turn goes on', async (t) => {
  const server = await startReplayServer();
  t.after(() => server.close());
  const { child, cwd } = await start(t, server);
  // An MCP server whose tool reports isError with an empty text.
  const mcpServers = [{ name: 'test', command: process.execPath, args: [MCP_SERVER], env: [{ name: 'MCP_TEST_FAIL_TEXT', value: '' }] }];
  const sessionId = ((await child.agent.request('session/new', { cwd, mcpServers })) as { sessionId: string }).sessionId;
  await child.agent.request('session/set_mode', { sessionId, modeId: 'bypass' });
  server.enqueue({ json: { input_tokens: 1_250 } }, { sse: fixture('e2e-anthropic-mcp-fail.sse') }, answer());

  const res = await child.prompt(sessionId, 'Run the fail tool.');
  assert.equal(res.stopReason, 'end_turn', child.stderr.slice(-2000));
  const failed = child.updatesFor(sessionId, 'tool_call_update').find((u) => u.status === 'failed');
  assert.equal(failed?.rawOutput?.output, '', 'the tool did fail without a word');

  const next = modelCalls(server)[1]!.body;
  assert.equal(refusal(next), undefined, JSON.stringify(next.messages));
  const result = next.messages.at(-1).content.find((b: any) => b.type === 'tool_result');
  assert.deepEqual([result?.tool_use_id, result?.is_error], ['toolu_01E2eMcpFail3Jd8Rw5Tq2Xb', true]);
  assert.match(result.content, /failed without saying why/);
  assert.deepEqual(child.schemaErrors, []);
});

test('anthropic: an image labelled image/jpg goes as image/jpeg, and a HEIC photo as a line saying it was left out', async (t) => {
  const server = await startReplayServer();
  t.after(() => server.close());
  const { child, cwd } = await start(t, server);
  const sessionId = await child.newSession(cwd);
  server.enqueue({ json: { input_tokens: 3_400 } }, answer(), answer());
  const res: any = await child.agent.request('session/prompt', { sessionId, prompt: TWO_PHOTOS_PROMPT });
  assert.equal(res.stopReason, 'end_turn', child.stderr.slice(-2000));
  // The next turn sends the same history again, from the log.
  assert.equal((await child.prompt(sessionId, 'and now?')).stopReason, 'end_turn', child.stderr.slice(-2000));

  const [count, first, second] = server.requests;
  for (const r of [count!, first!, second!]) assert.equal(refusal(r.body), undefined, JSON.stringify(r.body.messages).slice(0, 2000));
  assert.deepEqual(
    first!.body.messages[0].content.map((b: any) => (b.type === 'image' ? [b.type, b.source.media_type, b.source.data] : [b.type, b.text])),
    [
      ['text', 'Compare these two photos.'],
      ['image', 'image/jpeg', '/9j/4AAQSkZJRgABAQ=='],
      ['text', '[image file:///photos/IMG_0001.HEIC (image/heic) omitted: Anthropic takes JPEG, PNG, GIF and WebP images and PDF documents only]'],
    ],
  );
  assert.deepEqual(child.schemaErrors, []);
});

test('anthropic: after a switch from a server whose call ids Anthropic refuses (Kimi: functions.read_file:0), the calls go with ids it takes, each paired with its result', async (t) => {
  const server = await startReplayServer();
  t.after(() => server.close());
  const { child, cwd } = await start(t, server, 'openai-compatible/kimi-k2');
  writeFileSync(join(cwd, 'notes.txt'), 'launch code: 4242\n');
  const sessionId = await child.newSession(cwd);
  await child.agent.request('session/set_mode', { sessionId, modeId: 'bypass' });
  const KIMI_ID = 'functions.read_file:0';
  // The compatible server (no count endpoint) calls read_file under Kimi's id, then answers.
  server.enqueue({ sse: fixture('e2e-openai-chat-tool.sse').replaceAll('call_e2eReadNotes42', KIMI_ID) }, { sse: fixture('e2e-openai-chat-answer.sse') });
  assert.equal((await child.prompt(sessionId, 'What does notes.txt say?')).stopReason, 'end_turn', child.stderr.slice(-2000));

  await child.prompt(sessionId, '/model anthropic/claude-sonnet-5-5');
  server.enqueue({ json: { input_tokens: 1_250 } }, answer());
  assert.equal((await child.prompt(sessionId, 'and the owner?')).stopReason, 'end_turn', child.stderr.slice(-2000));

  const [count, call] = server.requests.slice(-2);
  for (const r of [count!, call!]) assert.equal(refusal(r.body), undefined, JSON.stringify(r.body.messages).slice(0, 2000));
  const blocks = call!.body.messages.flatMap((m: any) => m.content);
  const use = blocks.find((b: any) => b.type === 'tool_use');
  const result = blocks.find((b: any) => b.type === 'tool_result');
  assert.equal(use?.name, 'read_file');
  assert.equal(result?.tool_use_id, use?.id, 'the result names its call');
  assert.match(use.id, /^functions_read_file_0_[0-9a-f]{8}$/);
  assert.deepEqual(child.schemaErrors, []);
});
