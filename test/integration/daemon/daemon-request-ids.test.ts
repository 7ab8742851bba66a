// Client request ids over Streamable HTTP are the client's: a client other than the SDK may use
// `id: 1` in two sessions at once on one connection. Each answer must reach the stream of the
// session whose request it answers; the same id twice in flight on one session is refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import WebSocket from 'ws';
import { Daemon, processAlive, tempDir, waitFor } from '../../support/daemon.js';
import { hungServer } from '../../support/hung-mcp-server.js';
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

/** A daemon and a raw HTTP connection to it, initialized, with its connection stream open. */
async function rawConnection(t: { after(f: () => unknown): void }, env: Record<string, string> = {}) {
  const d = await Daemon.start({ script, env });
  t.after(() => d.stop());
  const { h, post } = rawClient(d);
  const init = await h.fetch('/acp', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: 1, clientCapabilities: {} } }) });
  assert.equal(init.status, 200);
  const conn = init.headers.get('acp-connection-id')!;
  const main = await SseReader.open(h, conn);
  t.after(() => main.close());
  return { d, h, post, conn, main };
}

/** A raw HTTP connection with its connection stream and two sessions, each with its stream open. */
async function twoSessions(t: { after(f: () => unknown): void }, env: Record<string, string> = {}) {
  const { d, h, post, conn, main } = await rawConnection(t, env);
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
  return { d, conn, post, main, a, b, streamA, streamB, prompt, cancel };
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

const errorOn = (s: SseReader, id: unknown): any => s.events.find((e) => e.json.id === id && 'error' in e.json)?.json;

test('http: a request that is not JSON-RPC 2.0 is answered with id null, and its id is not left in flight on the connection', async (t) => {
  const { conn, post, main } = await twoSessions(t);
  assert.equal((await post(conn, { jsonrpc: '1.0', id: 9, method: 'session/list', params: {} })).status, 202);
  await until(() => errorOn(main, null) !== undefined, 'the -32600 on the connection stream', 15_000);
  assert.deepEqual([errorOn(main, null)!.error.code, errorOn(main, null)!.error.data.code], [-32600, 'invalid_request']);
  // Before 2026-12-03 the invalid request's id stayed "in flight" for the connection's life.
  const valid = await post(conn, { jsonrpc: '2.0', id: 9, method: 'session/list', params: {} });
  assert.equal(valid.status, 202, await valid.clone().text());
  await until(() => answer(main, 9) !== undefined, 'the answer to the valid id 9', 15_000);
  assert.ok(Array.isArray((answer(main, 9)!.result as { sessions: unknown[] }).sessions));
});

test("http: the id-null answer to an invalid message takes no valid id-null request's route", async (t) => {
  const { conn, post, main, a, b, streamA, streamB, prompt, cancel } = await twoSessions(t);
  // A valid request with id null, in flight on session A.
  assert.equal((await prompt(null, a, 'hang')).status, 202);
  await until(() => streamA.events.some((e) => e.json.method === 'session/update'), 'session A to start its turn', 15_000);
  // An invalid message (sent with B's header), answered -32600 with id null.
  assert.equal((await post(conn, { jsonrpc: '1.0', id: null, method: 'session/list', params: {} }, b)).status, 202);
  await until(() => errorOn(main, null) !== undefined || errorOn(streamA, null) !== undefined, 'the -32600', 15_000);
  assert.equal(errorOn(main, null)?.error.code, -32600, 'the -32600 is on the connection stream');
  assert.equal(errorOn(streamA, null), undefined, "not on A's stream, as the answer to A's request");
  assert.equal((await cancel(a)).status, 202);
  await until(() => answer(streamA, null) !== undefined || answer(streamB, null) !== undefined, "the answer to A's prompt", 15_000);
  assert.equal((answer(streamA, null)?.result as { stopReason?: string } | undefined)?.stopReason, 'cancelled', "A's answer is on A's stream");
  assert.equal(answer(streamB, null), undefined);
});

test('http: what the relay answers itself (session/list, session/new, $/cancel_request with an id) goes to the stream it came on, with the same id in flight on another session', async (t) => {
  const { conn, post, main, a, b, streamA, streamB, prompt, cancel } = await twoSessions(t);
  assert.equal((await prompt(5, a, 'hang')).status, 202);
  await until(() => streamA.events.some((e) => e.json.method === 'session/update'), 'session A to start its turn', 15_000);
  const onB = (check: (m: Record<string, unknown>) => boolean) => streamB.events.filter((e) => e.json.id === 5 && !('method' in e.json) && check(e.json)).length;
  const offB = () => [...streamA.events, ...main.events].filter((e) => e.json.id === 5 && !('method' in e.json));
  const cases: [string, unknown, (m: Record<string, unknown>) => boolean][] = [
    ['session/list', {}, (m) => Array.isArray((m.result as { sessions?: unknown } | undefined)?.sessions)],
    ['$/cancel_request', { requestId: 99 }, (m) => (m.error as { code?: number } | undefined)?.code === -32601],
    ['session/new', { cwd: tempDir(), mcpServers: [] }, (m) => typeof (m.result as { sessionId?: unknown } | undefined)?.sessionId === 'string'],
  ];
  for (const [method, params, check] of cases) {
    assert.equal((await post(conn, { jsonrpc: '2.0', id: 5, method, params }, b)).status, 202, method);
    await until(() => onB(check) === 1 || offB().length > 0, `the answer to ${method}`, 15_000);
    assert.deepEqual(offB().map((e) => e.json), [], `${method}: no answer under id 5 on A's stream or the connection stream`);
    assert.equal(onB(check), 1, `${method}: answered on B's stream`);
  }
  assert.equal((await cancel(a)).status, 202);
  await until(() => offB().length > 0 || streamB.events.filter((e) => e.json.id === 5).length > cases.length, "the answer to A's prompt", 15_000);
  assert.equal((answer(streamA, 5)?.result as { stopReason?: string } | undefined)?.stopReason, 'cancelled', "A's answer is on A's stream");
  assert.equal(streamB.events.filter((e) => e.json.id === 5).length, cases.length, "B's stream has only its own answers");
});

test("http: a $/cancel_request of a session/new sent on another session's stream, with that session's header, withdraws it (-32800)", async (t) => {
  // A hand-written client may send every request with the header of a session it holds, its
  // session/new too. The cancel names that session, which has no request of that id: it falls back to
  // the connection's session/new in flight. Until 2026-12-07 it was matched against that session only,
  // and the session/new went on (here: held by an MCP server that never answers, until its start timed out).
  const { post, conn, b, streamB, main } = await twoSessions(t, { TROUPE_MCP_START_TIMEOUT_MS: '60000' });
  const cwd = tempDir();
  const hung = hungServer(cwd);
  assert.equal((await post(conn, { jsonrpc: '2.0', id: 'n', method: 'session/new', params: { cwd, mcpServers: [hung.server] } }, b)).status, 202);
  const hungPid = await hung.pid();
  t.after(() => processAlive(hungPid) && process.kill(hungPid, 'SIGKILL'));
  assert.equal((await post(conn, { jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: 'n' } }, b)).status, 202);
  await until(() => answer(streamB, 'n') !== undefined || answer(main, 'n') !== undefined, 'the answer to the session/new', 15_000);
  const got = answer(streamB, 'n') as { error?: { code?: number; data?: { code?: string } } } | undefined;
  assert.deepEqual([got?.error?.code, got?.error?.data?.code], [-32800, 'request_cancelled'], `on B's stream: ${JSON.stringify(got)}`);
  await waitFor(`the hung server ${hungPid} to be stopped`, () => !processAlive(hungPid), 10_000);
});

test("http: a late $/cancel_request with a session's header, its request there answered, does not withdraw a session/new under the same id sent on another stream", async (t) => {
  // Ids are the client's per stream: `n` was a prompt of session A (answered), and is now a
  // session/new on the connection stream. The cancel names A, which has nothing of that id pending:
  // it finds only a session/new sent with A's header. Until 2026-12-07 it withdrew this one (-32800).
  const { post, conn, a, streamA, prompt, main } = await twoSessions(t, { TROUPE_MCP_START_TIMEOUT_MS: '60000' });
  assert.equal((await prompt('n', a, 'hello')).status, 202);
  await until(() => answer(streamA, 'n') !== undefined, "A's answer", 15_000);
  const cwd = tempDir();
  const hung = hungServer(cwd);
  assert.equal((await post(conn, { jsonrpc: '2.0', id: 'n', method: 'session/new', params: { cwd, mcpServers: [hung.server] } })).status, 202);
  const hungPid = await hung.pid();
  t.after(() => processAlive(hungPid) && process.kill(hungPid, 'SIGKILL'));
  // Its 202 comes once the relay has taken it (spec/transport.md: the 202 waits for the agent side).
  assert.equal((await post(conn, { jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: 'n' } }, a)).status, 202);
  // The server's start then fails (its process gone): the session/new goes on without it.
  process.kill(hungPid, 'SIGKILL');
  await until(() => answer(main, 'n') !== undefined, 'the answer to the session/new', 15_000);
  const got = answer(main, 'n') as { result?: { sessionId?: string }; error?: unknown };
  assert.equal(typeof got.result?.sessionId, 'string', `made, not withdrawn: ${JSON.stringify(got)}`);
  assert.equal(streamA.events.filter((e) => e.json.id === 'n').length, 1, "A's stream got only its prompt's answer");
});

test('initialize whose id is not a string or an integer troupe echoes exactly: HTTP 400 invalid_request and no connection; WebSocket close 1002', async (t) => {
  const d = await Daemon.start({ script });
  t.after(() => d.stop());
  const { h } = rawClient(d);
  for (const id of ['{}', '[1]', 'true', '1e400', '1.5', '9007199254740993']) {
    const res = await h.fetch('/acp', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: `{"jsonrpc":"2.0","id":${id},"method":"initialize","params":{"protocolVersion":1}}` });
    assert.equal(res.status, 400, `id ${id}`);
    assert.equal(res.headers.get('acp-connection-id'), null, `id ${id}: no connection`);
    assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'invalid_request', `id ${id}`);
  }
  for (const id of ['{}', 'true', '1e400', '1.5', '9007199254740993']) {
    const ws = new WebSocket(d.url.replace(/^http/, 'ws') + '/acp', ['acp'], { headers: d.headers });
    const got: unknown[] = [];
    ws.on('message', (m) => got.push(String(m)));
    await once(ws, 'open');
    ws.send(`{"jsonrpc":"2.0","id":${id},"method":"initialize","params":{"protocolVersion":1}}`);
    const [code] = await once(ws, 'close');
    assert.equal(code, 1002, `id ${id}`);
    assert.deepEqual(got, [], `id ${id}: not answered`);
  }
});

// JSON-RPC 2.0: numbers SHOULD NOT have fractional parts, and the answer MUST carry the same value;
// ACP's schema takes an integer (int64) id. A fractional id is no ACP id, and an integer past 2^53
// is read as another one (9007199254740993 as 9007199254740992): until 2026-12-07 both were
// answered, the second under an id the client never sent. Now refused as other invalid ids are.
const UNECHOABLE_IDS = ['1.5', '-0.25', '9007199254740993', '-9007199254740993'];

test('http: a request whose id is a fraction or an integer past 2^53 is answered -32600 with id null on the connection stream, never under a number', async (t) => {
  const { h, post, conn, main } = await rawConnection(t);
  for (const [i, id] of UNECHOABLE_IDS.entries()) {
    const res = await h.fetch('/acp', { method: 'POST', headers: { 'Content-Type': 'application/json', 'Acp-Connection-Id': conn }, body: `{"jsonrpc":"2.0","id":${id},"method":"session/list","params":{}}` });
    assert.equal(res.status, 202, `id ${id}`);
    await until(() => main.events.filter((e) => e.json.id === null && 'error' in e.json).length === i + 1, `the -32600 for id ${id}`, 15_000);
  }
  for (const e of main.events.filter((e) => e.json.id === null)) assert.equal((e.json.error as { code: number }).code, -32600);
  // The same request with an integer id is answered under it; nothing was ever answered under a number but it.
  assert.equal((await post(conn, { jsonrpc: '2.0', id: 2, method: 'session/list', params: {} })).status, 202);
  await until(() => answer(main, 2) !== undefined, 'the answer to id 2', 15_000);
  assert.deepEqual(main.events.filter((e) => typeof e.json.id === 'number').map((e) => e.json.id), [2]);
});

test('ws: a request whose id is a fraction or an integer past 2^53 is answered -32600 with id null, never under a number', async (t) => {
  const d = await Daemon.start({ script });
  t.after(() => d.stop());
  const ws = new WebSocket(d.url.replace(/^http/, 'ws') + '/acp', ['acp'], { headers: d.headers });
  t.after(() => ws.close());
  const got: Array<Record<string, unknown>> = [];
  ws.on('message', (m) => got.push(JSON.parse(String(m))));
  await once(ws, 'open');
  ws.send(JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: 1, clientCapabilities: {} } }));
  await until(() => got.length === 1, 'the initialize answer', 15_000);
  for (const id of UNECHOABLE_IDS) ws.send(`{"jsonrpc":"2.0","id":${id},"method":"session/list","params":{}}`);
  ws.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'session/list', params: {} }));
  await until(() => got.length === 2 + UNECHOABLE_IDS.length, 'an answer to each', 15_000);
  const answers = got.slice(1);
  assert.deepEqual(answers.filter((m) => m.id === null).map((m) => (m.error as { code: number }).code), UNECHOABLE_IDS.map(() => -32600));
  assert.deepEqual(answers.filter((m) => m.id !== null).map((m) => m.id), [2]);
});

test('http: a $/cancel_request without Acp-Session-Id for an id in flight on two sessions withdraws neither (it names no one request), and the log says so', async (t) => {
  // Ids are the client's per stream: `7` is a prompt of A and a prompt of B. A cancel with neither
  // session's header (the SDK client sends its cancels so; its ids are unique on its connection)
  // names no one of them. Until 2026-12-07 it cancelled both turns.
  const { d, post, conn, a, b, streamA, streamB, prompt, cancel } = await twoSessions(t);
  for (const [s, stream] of [[a, streamA], [b, streamB]] as const) {
    assert.equal((await prompt(7, s, 'hang')).status, 202);
    await until(() => stream.events.some((e) => e.json.method === 'session/update'), 'the turn to start', 15_000);
  }
  assert.equal((await post(conn, { jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: 7 } })).status, 202);
  await waitFor('the warning', () => /a \$\/cancel_request without a session names a request id in flight on several sessions: none withdrawn/.test(d.stderr));
  // A round trip to each session's process after the cancel: had it been sent on, each process had it first.
  for (const [s, stream] of [[a, streamA], [b, streamB]] as const) {
    assert.equal((await post(conn, { jsonrpc: '2.0', id: 8, method: 'session/set_mode', params: { sessionId: s, modeId: 'plan' } }, s)).status, 202);
    await until(() => answer(stream, 8) !== undefined, 'the set_mode answer', 15_000);
  }
  // Named with its session, a cancel withdraws only that session's turn.
  assert.equal((await cancel(a)).status, 202);
  await until(() => answer(streamA, 7) !== undefined, "A's answer", 15_000);
  assert.equal((answer(streamA, 7)!.result as { stopReason?: string }).stopReason, 'cancelled');
  assert.equal(answer(streamB, 7), undefined, "B's turn still runs");
  assert.equal((await cancel(b)).status, 202);
  await until(() => answer(streamB, 7) !== undefined, "B's answer", 15_000);
});

test('http: a $/cancel_request without Acp-Session-Id withdraws the session/new under that id sent without one (its own stream), not a prompt of a session under the same id', async (t) => {
  const { post, conn, a, streamA, prompt, cancel, main } = await twoSessions(t, { TROUPE_MCP_START_TIMEOUT_MS: '60000' });
  assert.equal((await prompt('n', a, 'hang')).status, 202);
  await until(() => streamA.events.some((e) => e.json.method === 'session/update'), "A's turn to start", 15_000);
  const cwd = tempDir();
  const hung = hungServer(cwd);
  assert.equal((await post(conn, { jsonrpc: '2.0', id: 'n', method: 'session/new', params: { cwd, mcpServers: [hung.server] } })).status, 202);
  const hungPid = await hung.pid();
  t.after(() => processAlive(hungPid) && process.kill(hungPid, 'SIGKILL'));
  assert.equal((await post(conn, { jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: 'n' } })).status, 202);
  await until(() => answer(main, 'n') !== undefined, 'the answer to the session/new', 15_000);
  const got = answer(main, 'n') as { error?: { code?: number } };
  assert.equal(got.error?.code, -32800, JSON.stringify(got));
  // A round trip to A's process after the cancel: had it been sent on, the process had it first.
  assert.equal((await post(conn, { jsonrpc: '2.0', id: 8, method: 'session/set_mode', params: { sessionId: a, modeId: 'plan' } }, a)).status, 202);
  await until(() => answer(streamA, 8) !== undefined, 'the set_mode answer', 15_000);
  assert.equal(answer(streamA, 'n'), undefined, "A's turn still runs (until 2026-12-07 the cancel withdrew it too)");
  assert.equal((await cancel(a)).status, 202);
  await until(() => answer(streamA, 'n') !== undefined, "A's answer", 15_000);
  assert.equal((answer(streamA, 'n')!.result as { stopReason?: string }).stopReason, 'cancelled');
});

test("http: a session/cancel with Acp-Session-Id but no params.sessionId cancels the turn of that session when the connection holds it; naming one it does not hold, it cancels nothing and the log names the connection", async (t) => {
  // The SDK's server routes a message by its header and hands it on as it came; the daemon's session
  // process reads the session from params. Until 2026-12-07 such a cancel reached it with none, and
  // was dropped in silence: the turn ran to its end.
  const { d, post, conn, a, streamA, prompt } = await twoSessions(t);
  const other = d.connect('http');
  t.after(() => other.close());
  await other.init();
  const { sessionId: c } = await other.agent.request('session/new', { cwd: tempDir(), mcpServers: [] });
  const theirs = other.agent.request('session/prompt', { sessionId: c, prompt: [{ type: 'text', text: 'hang' }] }).then((r) => r.stopReason);
  await other.until(() => other.updates.some((u) => u.sessionId === c), "the other connection's turn to start");
  assert.equal((await post(conn, { jsonrpc: '2.0', method: 'session/cancel', params: {} }, c)).status, 202);
  await waitFor('the warning', () => new RegExp(`a session/cancel without params\\.sessionId names a session this connection does not hold: nothing cancelled.*"connectionId":"${conn}".*"sessionId":"${c}"`).test(d.stderr));
  let settled = false;
  void theirs.then(() => (settled = true));
  // A round trip to C's process after the cancel: had it been sent on, the process had it first.
  await other.agent.request('session/set_mode', { sessionId: c, modeId: 'plan' });
  assert.equal(settled, false, "the other connection's turn still runs");
  await other.agent.notify('session/cancel', { sessionId: c });
  assert.equal(await theirs, 'cancelled');
  // Its own session, named by the header alone: cancelled.
  assert.equal((await prompt(1, a, 'hang')).status, 202);
  await until(() => streamA.events.some((e) => e.json.method === 'session/update'), "A's turn to start", 15_000);
  assert.equal((await post(conn, { jsonrpc: '2.0', method: 'session/cancel' }, a)).status, 202);
  await until(() => answer(streamA, 1) !== undefined, "A's answer", 15_000);
  assert.equal((answer(streamA, 1)!.result as { stopReason?: string }).stopReason, 'cancelled');
});
