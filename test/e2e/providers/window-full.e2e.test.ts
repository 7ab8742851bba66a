// A reply that fills the context window, through troupe acp, each vendor's SDK and the replay server:
// recent Claude models end it with the stop reason `model_context_window_exceeded` (a 200 stream)
// where older ones refused the request with a 400, and Mistral with the finish_reason `model_length`.
// troupe takes it as that overflow: it compacts and the same step goes on from what the cut reply
// said (which the client has shown, and the log keeps), or, with nothing to compact, the turn ends
// context_overflow saying so. Until 2026-12-07 the turn ended `max_tokens` (Anthropic) or `end_turn`
// (Mistral), as if the output limit had been reached or the model had finished. OpenAI's Responses API
// (incomplete_details.reason `max_output_tokens`) and vLLM (finish_reason `length`) say so with the
// signal of the output limit: troupe tells the window by the counts the reply reports (fewer tokens
// than asked for, the window reached with its input); until 2026-12-07 the turn ended `max_tokens`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CUT_REPLY_NOTE } from '../../../src/actors/conversation.js';
import { AcpChild } from '../../support/acp-child.js';
import { fixture, startReplayServer, type ReplayServer } from '../../support/replay-server.js';
import { providerHome } from '../../support/provider-home.js';

const SUMMARY = 'The user greeted the assistant; no files were touched yet.';
const CUT = 'Here is the report. Part one: the launch code is ';
const REST = '4242. Part two: nothing else is pending.';

/** The text of a message's content, a string or a list of parts. */
const textOfContent = (content: any): string => (typeof content === 'string' ? content : content.map((b: any) => b.text ?? `<${b.type}>`).join(''));

const vendors = [
  {
    name: 'anthropic',
    section: 'anthropic',
    model: 'anthropic/claude-sonnet-5-5',
    env: (url: string) => ({ ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: 'sk-ant-e2e-test' }),
    streamPath: /^\/v1\/messages(\?|$)/,
    // Preflight counts a prompt the model has not measured: the session's first.
    count: [{ json: { input_tokens: 1_250 } }],
    sse: (name: string) => ({ sse: fixture(`e2e-anthropic-${name}.sse`) }),
    stop: 'model_context_window_exceeded',
    used: 1_000_000,
  },
  {
    name: 'openai-compatible (Mistral)',
    section: 'openai-compatible',
    model: 'openai-compatible/mistral-small-latest',
    env: (url: string) => ({ OPENAI_BASE_URL: `${url}/v1` }),
    streamPath: /^\/v1\/chat\/completions/,
    count: [],
    sse: (name: string) => ({ sse: fixture(name.startsWith('window-full') ? `e2e-mistral-${name}.sse` : `e2e-openai-chat-${name}.sse`) }),
    stop: 'model_length',
    used: 32_000,
  },
  {
    name: 'openai (Responses)',
    section: 'openai',
    model: 'openai/gpt-5',
    env: (url: string) => ({ OPENAI_BASE_URL: `${url}/v1`, OPENAI_API_KEY: 'sk-e2e-test' }),
    streamPath: /^\/v1\/responses(\?|$)/,
    count: [{ json: { object: 'response.input_tokens', input_tokens: 1_250 } }],
    sse: (name: string) => ({ sse: fixture(`e2e-openai-responses-${name}.sse`) }),
    // gpt-5's window is 400,000 tokens; the reply wrote 3,500 of the 128,000 asked for.
    stop: 'incomplete_details.reason max_output_tokens',
    used: 400_000,
  },
  {
    name: 'openai-compatible (vLLM)',
    section: 'openai-compatible',
    model: 'openai-compatible/qwen3',
    env: (url: string) => ({ OPENAI_BASE_URL: `${url}/v1` }),
    streamPath: /^\/v1\/chat\/completions/,
    count: [],
    sse: (name: string) => ({ sse: fixture(name.startsWith('window-full') ? `e2e-vllm-${name}.sse` : `e2e-openai-chat-${name}.sse`) }),
    // The fallback window of 32,768 tokens; the reply wrote 768 of the 4,096 asked for.
    stop: 'finish_reason length',
    used: 32_768,
  },
];
type Vendor = (typeof vendors)[number];

/** The messages of a request (Responses: its input's) but its system prompt, as [role, text] pairs. */
const said = (body: any): [string, string][] => (body.messages ?? body.input).filter((m: any) => m.role && m.role !== 'system').map((m: any) => [m.role, textOfContent(m.content)]);
const modelCalls = (v: Vendor, server: ReplayServer) => server.requests.filter((r) => v.streamPath.test(r.url));

async function start(v: Vendor, t: { after(fn: () => unknown): void }) {
  const server = await startReplayServer();
  t.after(() => server.close());
  const { home, configHome } = providerHome({ [v.section]: { maxRetries: 0 } });
  const env = { XDG_CONFIG_HOME: configHome, TROUPE_MODEL: v.model, ...v.env(server.url) };
  const cwd = mkdtempSync(join(tmpdir(), 'troupe-e2e-ws-'));
  const child = AcpChild.start({ home, env });
  t.after(() => child.close());
  await child.initialize();
  const sessionId = await child.newSession(cwd);
  return { server, child, sessionId, home, env, cwd };
}

const textOf = (updates: any[], turnId: string) =>
  updates.filter((u) => u.sessionUpdate === 'agent_message_chunk' && u._meta?.troupe?.turnId === turnId).map((u) => u.content.text).join('');

for (const v of vendors) {
  test(`${v.name}: a reply stopped by ${v.stop} compacts, and the same step goes on from what it said, once`, async (t) => {
    const { server, child, sessionId, home, env, cwd } = await start(v, t);
    const sse = v.sse;
    // The first prompt is answered (counted first where the vendor counts); the second (measured by
    // the first's usage) fills the window mid-reply, troupe summarizes the first turn, and the
    // retried step finishes the reply.
    server.enqueue(...v.count, sse('answer'), sse('window-full'), sse('summary'), sse('window-full-rest'));
    assert.equal((await child.prompt(sessionId, 'hello there')).stopReason, 'end_turn', child.stderr.slice(-2000));
    const res = await child.prompt(sessionId, 'write the report');
    assert.equal(res.stopReason, 'end_turn', child.stderr.slice(-2000));
    const turnId = (res._meta as any)?.troupe?.turnId;

    const calls = modelCalls(v, server);
    assert.equal(calls.length, 4, 'answer, the cut reply, the summary, the retried step');
    assert.ok(JSON.stringify(calls[2]!.body).includes('Summarize the conversation above'), 'a summarization request');
    // The retried step: the summary in place of the first turn, the prompt, the cut reply as the
    // model's, and the note asking it to go on from there.
    const retried = said(calls[3]!.body);
    assert.ok(JSON.stringify(retried).includes(SUMMARY) && JSON.stringify(retried).includes('write the report') && !JSON.stringify(retried).includes('hello there'), JSON.stringify(retried));
    assert.deepEqual(retried.slice(-2), [
      ['assistant', CUT],
      ['user', CUT_REPLY_NOTE],
    ]);

    // The client was shown the cut reply and its continuation, nothing twice, and the cut call's usage.
    const updates = child.updatesFor(sessionId);
    assert.equal(textOf(updates, turnId), CUT + REST);
    assert.ok(updates.some((u) => u.sessionUpdate === 'usage_update' && u.used === v.used), 'the cut call was billed and is shown');
    const notes = child.updatesFor(sessionId, 'agent_thought_chunk').map((u) => u.content.text);
    assert.ok(notes.some((n) => /Compacting the conversation: overflow/.test(n)), JSON.stringify(notes));

    // The log holds what the client saw: a new process replays the same text, and its next request
    // carries the same history (folded from the log) before the next prompt.
    await child.close();
    const again = AcpChild.start({ home, env });
    t.after(() => again.close());
    await again.initialize();
    await again.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
    assert.equal(textOf(again.updatesFor(sessionId), turnId), CUT + REST, 'replay shows what was streamed live');
    server.enqueue(sse('answer'));
    assert.equal((await again.prompt(sessionId, 'thanks')).stopReason, 'end_turn', again.stderr.slice(-2000));
    assert.deepEqual(said(modelCalls(v, server).at(-1)!.body).slice(-4), [
      ['assistant', CUT],
      ['user', CUT_REPLY_NOTE],
      ['assistant', REST],
      ['user', 'thanks'],
    ]);
    assert.deepEqual([...child.schemaErrors, ...again.schemaErrors], []);
  });

  test(`${v.name}: a reply cut again after the overflow compaction ends the turn context_overflow, saying compacting could not make it fit`, async (t) => {
    const { server, child, sessionId } = await start(v, t);
    server.enqueue(...v.count, v.sse('answer'), v.sse('window-full'), v.sse('summary'), v.sse('window-full'));
    assert.equal((await child.prompt(sessionId, 'hello there')).stopReason, 'end_turn', child.stderr.slice(-2000));
    await assert.rejects(child.prompt(sessionId, 'write the report'), (e: any) => {
      assert.equal(e.data?.code, 'context_overflow', JSON.stringify(e));
      assert.match(String(e.message), /the model's reply filled the window and was cut off, and compacting the conversation could not make it fit/, e.message);
      return true;
    });
    // One compaction a turn: the second cut ends it, with no further call.
    assert.equal(modelCalls(v, server).length, 4, 'answer, the cut reply, the summary, the retried step cut again');
    assert.deepEqual(child.schemaErrors, []);
  });

  test(`${v.name}: ${v.stop} with nothing to compact ends the turn context_overflow, keeping what streamed, without a second call`, async (t) => {
    const { server, child, sessionId } = await start(v, t);
    server.enqueue(...v.count, v.sse('window-full'));
    await assert.rejects(child.prompt(sessionId, 'write the report'), (e: any) => {
      assert.equal(e.code, -32040, JSON.stringify(e));
      assert.equal(e.data?.code, 'context_overflow');
      assert.match(String(e.message), /the model's reply filled the window and was cut off, and nothing earlier in the session could be compacted/, e.message);
      assert.ok(String(e.data?.vendorMessage).includes(v.stop), e.data?.vendorMessage);
      return true;
    });
    assert.equal(modelCalls(v, server).length, 1, 'nothing could be compacted: the request was not sent again');
    assert.equal(child.updatesFor(sessionId, 'agent_message_chunk').map((u) => u.content.text).join(''), CUT, 'what streamed stays shown');
    assert.ok(child.updatesFor(sessionId, 'usage_update').some((u) => u.used === v.used), 'the cut call was billed and is shown');
    const notes = child.updatesFor(sessionId, 'agent_thought_chunk').map((u) => u.content.text);
    assert.ok(!notes.some((n) => /Compact/.test(n)), `no compaction was made: ${JSON.stringify(notes)}`);
    assert.deepEqual(child.schemaErrors, []);
  });
}

for (const v of vendors.filter((v) => v.name === 'openai (Responses)' || v.name === 'openai-compatible (vLLM)')) {
  test(`${v.name}: ${v.stop} with every token asked for written is the output limit: the turn ends max_tokens, nothing compacted`, async (t) => {
    const { server, child, sessionId } = await start(v, t);
    // The same cut reply, its counts those of a reply that wrote all it was allowed.
    const atLimit = v.sse('window-full').sse
      .replace('"input_tokens":396500,"input_tokens_details":{"cached_tokens":0},"output_tokens":3500', '"input_tokens":2000,"input_tokens_details":{"cached_tokens":0},"output_tokens":128000')
      .replace('"prompt_tokens":32000,"total_tokens":32768,"completion_tokens":768', '"prompt_tokens":2000,"total_tokens":6096,"completion_tokens":4096');
    assert.notEqual(atLimit, v.sse('window-full').sse);
    server.enqueue(...v.count, { sse: atLimit });
    assert.equal((await child.prompt(sessionId, 'write the report')).stopReason, 'max_tokens', child.stderr.slice(-2000));
    assert.equal(modelCalls(v, server).length, 1);
    const notes = child.updatesFor(sessionId, 'agent_thought_chunk').map((u) => u.content.text);
    assert.ok(!notes.some((n) => /Compact/.test(n)), `no compaction was made: ${JSON.stringify(notes)}`);
    assert.deepEqual(child.schemaErrors, []);
  });
}
