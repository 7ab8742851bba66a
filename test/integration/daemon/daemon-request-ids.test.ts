// Client request ids over Streamable HTTP are the client's: a client other than the SDK may use
// `id: 1` in two sessions at once on one connection. Each answer must reach the stream of the
// session whose request it answers; the same id twice in flight on one session is refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Daemon, tempDir } from '../../support/daemon.js';
import { SseReader, until, type Harness } from '../../support/transport/harness.js';

const script = {
  replies: [
    { when: 'hang', items: [{ text: 'hanging' }, { hang: true }] },
    { when: 'hello', items: [{ text: 'hello back' }] },
  ],
};

/** What SseReader and raw POSTs need of a daemon: fetch with its token. */
function rawClient(d: Daemon) {
  const h = { fetch: (path: string, init: RequestInit & { headers?: Record<string, string> } = {}) => fetch(d.url + path, { ...init, headers: { ...d.headers, ...(init.headers ?? {}) } }) };
  const post = (connectionId: string, message: unknown, sessionId?: string) =>
    h.fetch('/acp', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Acp-Connection-Id': connectionId, ...(sessionId ? { 'Acp-Session-Id': sessionId } : {}) },
      body: JSON.stringify(message),
    });
  return { h: h as unknown as Harness, post };
}

/** A raw HTTP connection with its connection stream and two sessions, each with its stream open. */
async function twoSessions(t: { after(f: () => unknown): void }) {
  const d = await Daemon.start({ script });
  t.after(() => d.stop());
  const { h, post } = rawClient(d);
  const init = await h.fetch('/acp', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: 1, clientCapabilities: {} } }) });
  assert.equal(init.status, 200);
  const conn = init.headers.get('acp-connection-id')!;
  const main = await SseReader.open(h, conn);
  t.after(() => main.close());
  const cwd = tempDir();
  const sessions: string[] = [];
  for (const id of ['new-a', 'new-b']) {
    assert.equal((await post(conn, { jsonrpc: '2.0', id, method: 'session/new', params: { cwd, mcpServers: [] } })).status, 202);
    await main.waitUntil(() => main.events.some((e) => e.json.id === id));
    sessions.push((main.events.find((e) => e.json.id === id)!.json.result as { sessionId: string }).sessionId);
  }
  const [a, b] = sessions as [string, string];
  const streamA = await SseReader.open(h, conn, { sessionId: a });
  const streamB = await SseReader.open(h, conn, { sessionId: b });
  t.after(() => (streamA.close(), streamB.close()));
  const prompt = (id: unknown, sessionId: string, text: string) => post(conn, { jsonrpc: '2.0', id, method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text }] } }, sessionId);
  const cancel = (sessionId: string) => post(conn, { jsonrpc: '2.0', method: 'session/cancel', params: { sessionId } }, sessionId);
  return { conn, post, main, a, b, streamA, streamB, prompt, cancel };
}

const answer = (s: SseReader, id: unknown) => s.events.find((e) => e.json.id === id && !('method' in e.json))?.json;

test('http: the same request id in flight on two sessions of one connection: each answer goes to its own session stream', async (t) => {
  const { main, a, b, streamA, streamB, prompt, cancel } = await twoSessions(t);
  // Session A's prompt runs until cancelled; session B's, under the same id, ends by itself meanwhile.
  assert.equal((await prompt(1, a, 'hang')).status, 202);
  await until(() => streamA.events.some((e) => e.json.method === 'session/update'), 'session A to start its turn', 15_000);
  assert.equal((await prompt(1, b, 'hello')).status, 202);
  await until(() => answer(streamB, 1) !== undefined, "the answer to B on B's stream", 15_000);
  assert.equal((answer(streamB, 1)!.result as { stopReason: string }).stopReason, 'end_turn');
  assert.equal((await cancel(a)).status, 202);
  await until(() => answer(streamA, 1) !== undefined || answer(main, 1) !== undefined, 'the answer to A', 15_000);
  assert.equal((answer(streamA, 1)?.result as { stopReason?: string } | undefined)?.stopReason, 'cancelled', "A's answer is on A's stream");
  assert.equal(answer(main, 1), undefined, 'no answer went to the connection stream');
  assert.equal(streamB.events.filter((e) => e.json.id === 1).length, 1, "B's stream got only its own answer");
});

test('http: the same request id twice in flight on one session is refused with a JSON-RPC error, and the first still gets its answer', async (t) => {
  const { post, conn, a, b, streamA, streamB, prompt, cancel } = await twoSessions(t);
  assert.equal((await prompt('p', a, 'hang')).status, 202);
  await until(() => streamA.events.some((e) => e.json.method === 'session/update'), 'session A to start its turn', 15_000);
  const again = await post(conn, { jsonrpc: '2.0', id: 'p', method: 'session/set_mode', params: { sessionId: a, modeId: 'default' } }, a);
  assert.equal(again.status, 400);
  const body = await again.json();
  assert.equal(body.jsonrpc, '2.0');
  assert.equal(body.id, 'p');
  assert.equal(body.error.code, -32600);
  assert.equal(body.error.data.code, 'invalid_request');
  assert.match(body.error.message, /already in flight/);
  // Another session may use the id meanwhile.
  assert.equal((await prompt('p', b, 'hello')).status, 202);
  await until(() => answer(streamB, 'p') !== undefined, 'the answer to B', 15_000);
  assert.equal((await cancel(a)).status, 202);
  await until(() => answer(streamA, 'p') !== undefined, 'the answer to the first request of A', 15_000);
  assert.equal((answer(streamA, 'p')!.result as { stopReason: string }).stopReason, 'cancelled');
  assert.equal(streamA.events.filter((e) => e.json.id === 'p').length, 1, 'the refused request got no answer on the stream');
  // Answered: the id is free again on that session.
  assert.equal((await prompt('p', a, 'hello')).status, 202);
  await until(() => streamA.events.filter((e) => e.json.id === 'p').length === 2, 'the answer to the reused id', 15_000);
});
