// A reply that fills the context window, through troupe acp, @anthropic-ai/sdk and the replay server:
// recent Claude models end it with the stop reason `model_context_window_exceeded` (a 200 stream)
// where older ones refused the request with a 400. troupe takes it as that overflow: it compacts and
// the same step goes on from what the cut reply said (which the client has shown, and the log keeps),
// or, with nothing to compact, the turn ends context_overflow saying so. Until 2026-12-07 the turn
// ended `max_tokens`, as if the output limit had been reached.
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
const sse = (name: string) => ({ sse: fixture(`e2e-anthropic-${name}.sse`) });
const COUNT = { json: { input_tokens: 1_250 } };

/** The messages of a request, as [role, text] pairs. */
const said = (body: any): [string, string][] => body.messages.map((m: any) => [m.role, m.content.map((b: any) => b.text ?? `<${b.type}>`).join('')]);
const modelCalls = (server: ReplayServer) => server.requests.filter((r) => /^\/v1\/messages(\?|$)/.test(r.url));

async function start(t: { after(fn: () => unknown): void }) {
  const server = await startReplayServer();
  t.after(() => server.close());
  const { home, configHome } = providerHome({ anthropic: { maxRetries: 0 } });
  const env = { XDG_CONFIG_HOME: configHome, TROUPE_MODEL: 'anthropic/claude-sonnet-5-5', ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'sk-ant-e2e-test' };
  const cwd = mkdtempSync(join(tmpdir(), 'troupe-e2e-ws-'));
  const child = AcpChild.start({ home, env });
  t.after(() => child.close());
  await child.initialize();
  const sessionId = await child.newSession(cwd);
  return { server, child, sessionId, home, env, cwd };
}

const textOf = (updates: any[], turnId: string) =>
  updates.filter((u) => u.sessionUpdate === 'agent_message_chunk' && u._meta?.troupe?.turnId === turnId).map((u) => u.content.text).join('');

test('anthropic: a reply stopped by model_context_window_exceeded compacts, and the same step goes on from what it said, once', async (t) => {
  const { server, child, sessionId, home, env, cwd } = await start(t);
  // The first prompt is counted and answered; the second (measured by the first's usage) fills the
  // window mid-reply, troupe summarizes the first turn, and the retried step finishes the reply.
  server.enqueue(COUNT, sse('answer'), sse('window-full'), sse('summary'), sse('window-full-rest'));
  assert.equal((await child.prompt(sessionId, 'hello there')).stopReason, 'end_turn', child.stderr.slice(-2000));
  const res = await child.prompt(sessionId, 'write the report');
  assert.equal(res.stopReason, 'end_turn', child.stderr.slice(-2000));
  const turnId = (res._meta as any)?.troupe?.turnId;

  const calls = modelCalls(server);
  assert.equal(calls.length, 4, 'answer, the cut reply, the summary, the retried step');
  assert.ok(JSON.stringify(calls[2]!.body).includes('Summarize the conversation above'), 'a summarization request');
  // The retried step: the summary in place of the first turn, the prompt, the cut reply as the
  // model's, and the note asking it to go on from there.
  const retried = said(calls[3]!.body);
  assert.ok(retried[0]![1].includes(SUMMARY) && retried[0]![1].includes('write the report') && !JSON.stringify(retried).includes('hello there'), JSON.stringify(retried));
  assert.deepEqual(retried.slice(1), [
    ['assistant', CUT],
    ['user', CUT_REPLY_NOTE],
  ]);

  // The client was shown the cut reply and its continuation, nothing twice, and the cut call's usage.
  const updates = child.updatesFor(sessionId);
  assert.equal(textOf(updates, turnId), CUT + REST);
  assert.ok(updates.some((u) => u.sessionUpdate === 'usage_update' && u.used === 1_000_000), 'the cut call was billed and is shown');
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
  assert.deepEqual(said(modelCalls(server).at(-1)!.body).slice(1), [
    ['assistant', CUT],
    ['user', CUT_REPLY_NOTE],
    ['assistant', REST],
    ['user', 'thanks'],
  ]);
  assert.deepEqual([...child.schemaErrors, ...again.schemaErrors], []);
});

test('anthropic: model_context_window_exceeded with nothing to compact ends the turn context_overflow, keeping what streamed, without a second call', async (t) => {
  const { server, child, sessionId } = await start(t);
  server.enqueue(COUNT, sse('window-full'));
  await assert.rejects(child.prompt(sessionId, 'write the report'), (e: any) => {
    assert.equal(e.code, -32040, JSON.stringify(e));
    assert.equal(e.data?.code, 'context_overflow');
    assert.match(String(e.message), /the model's reply filled the window and was cut off, and nothing earlier in the session could be compacted/, e.message);
    assert.match(String(e.data?.vendorMessage), /model_context_window_exceeded/);
    return true;
  });
  assert.equal(modelCalls(server).length, 1, 'nothing could be compacted: the request was not sent again');
  assert.equal(child.updatesFor(sessionId, 'agent_message_chunk').map((u) => u.content.text).join(''), CUT, 'what streamed stays shown');
  assert.ok(child.updatesFor(sessionId, 'usage_update').some((u) => u.used === 1_000_000), 'the cut call was billed and is shown');
  const notes = child.updatesFor(sessionId, 'agent_thought_chunk').map((u) => u.content.text);
  assert.ok(!notes.some((n) => /Compact/.test(n)), `no compaction was made: ${JSON.stringify(notes)}`);
  assert.deepEqual(child.schemaErrors, []);
});
