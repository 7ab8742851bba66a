// A vendor error in the middle of a reply, through troupe acp, each vendor's SDK and the replay
// server: the turn ends with the error, what streamed before it stays in the session, and the next
// request carries it as the model's (cut) reply, in a form the vendor takes, between the two prompts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AcpChild } from '../../support/acp-child.js';
import { fixture, sseEvents, startReplayServer } from '../../support/replay-server.js';
import { providerHome } from '../../support/provider-home.js';

/** The messages of a Chat Completions request, as [role, text] pairs. */
const chatSaid = (body: any) => body.messages.filter((m: any) => m.role !== 'system').map((m: any) => [m.role, typeof m.content === 'string' ? m.content : m.content.map((c: any) => c.text).join('')]);

const vendors = [
  {
    name: 'anthropic',
    section: 'anthropic',
    model: 'anthropic/claude-sonnet-5-5',
    env: (url: string) => ({ ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: 'sk-ant-e2e-test' }),
    count: { json: { input_tokens: 600 } },
    // message_start, content_block_start, ping, the first text delta; then Anthropic's in-stream error event.
    cut: `${sseEvents(fixture('e2e-anthropic-answer.sse')).slice(0, 4).join('')}event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n`,
    answer: fixture('e2e-anthropic-answer.sse'),
    // The messages of a request, as [role, text] pairs.
    said: (body: any) => body.messages.map((m: any) => [m.role, m.content.map((b: any) => b.text ?? `<${b.type}>`).join('')]),
  },
  {
    name: 'openai-compatible',
    section: 'openai-compatible',
    model: 'openai-compatible/qwen3-coder',
    env: (url: string) => ({ OPENAI_BASE_URL: `${url}/v1` }),
    count: undefined,
    // The role chunk and the first text delta; then an error chunk as vLLM sends one (the HTTP status as `code`).
    cut: `${sseEvents(fixture('e2e-openai-chat-answer.sse')).slice(0, 2).join('')}data: {"error":{"object":"error","message":"The engine died unexpectedly","type":"InternalServerError","param":null,"code":500}}\n\n`,
    answer: fixture('e2e-openai-chat-answer.sse'),
    said: chatSaid,
  },
  {
    name: 'openai-compatible (Ollama)',
    section: 'openai-compatible',
    model: 'openai-compatible/qwen3-coder',
    env: (url: string) => ({ OPENAI_BASE_URL: `${url}/v1` }),
    count: undefined,
    // Ollama's failure after some text: a chunk of empty content, then the body ends without a
    // finish_reason (see test/contract/providers/stream-errors.test.ts): a broken stream.
    cut: fixture('ollama-chat-error-after-text.sse'),
    code: 'provider_network',
    answer: fixture('e2e-openai-chat-answer.sse'),
    said: chatSaid,
  },
];

for (const v of vendors) {
  test(`${v.name}: a reply cut by a vendor error keeps what it said, and the next request sends it back between the prompts`, async (t) => {
    const server = await startReplayServer();
    t.after(() => server.close());
    const { home, configHome } = providerHome({ [v.section]: { maxRetries: 0 } });
    const child = AcpChild.start({ home, env: { XDG_CONFIG_HOME: configHome, TROUPE_MODEL: v.model, ...v.env(server.url) } });
    t.after(() => child.close());
    await child.initialize();
    const sessionId = await child.newSession(mkdtempSync(join(tmpdir(), 'troupe-e2e-ws-')));
    // The second prompt is measured again (the failed call reported no usage): a count before it too.
    server.enqueue(...(v.count ? [v.count] : []), { sse: v.cut }, ...(v.count ? [v.count] : []), { sse: v.answer });

    await assert.rejects(child.prompt(sessionId, 'What is the launch code?'), (err: any) => err.data?.code === (v.code ?? 'provider_overloaded'), child.stderr.slice(-2000));
    const shown = child.updatesFor(sessionId, 'agent_message_chunk').map((u) => u.content.text).join('');
    assert.ok(shown.length > 0, 'the text before the error was shown');
    assert.equal((await child.prompt(sessionId, 'Go on.')).stopReason, 'end_turn', child.stderr.slice(-2000));

    const next = server.requests.at(-1)!.body;
    assert.deepEqual(v.said(next), [
      ['user', 'What is the launch code?'],
      ['assistant', shown],
      ['user', 'Go on.'],
    ]);
    assert.deepEqual(child.schemaErrors, []);
  });
}
