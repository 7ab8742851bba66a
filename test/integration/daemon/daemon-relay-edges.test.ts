// Relay edge cases found by an audit: who a child's request goes to while prompts of two
// connections are queued, client answers whose id is not the id asked, and session methods whose
// params name no session.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import WebSocket from 'ws';
import type * as acp from '@agentclientprotocol/sdk';
import { Daemon, daemonWithClients, editorSession, tempDir, waitFor } from '../../support/daemon.js';

const script = {
  replies: [
    { when: 'write twice', items: [{ tool_call: { name: 'write_file', input: { path: 'one.txt', content: '1' } } }] },
    { when: 'hello', items: [{ text: 'hello back' }] },
    // After write twice's first tool result: a second write, which asks again.
    [{ tool_call: { name: 'write_file', input: { path: 'two.txt', content: '2' } } }],
    [{ text: 'both written' }],
  ],
};
/** One write and its report. */
const writeOnce = {
  replies: [
    { when: 'write once', items: [{ tool_call: { name: 'write_file', input: { path: 'w.txt', content: 'x' } } }] },
    { when: 'hello', items: [{ text: 'hello back' }] },
    [{ text: 'done' }],
  ],
};

/** A raw WebSocket client of /acp: every message it receives, parsed. */
async function rawWs(d: Daemon): Promise<{ ws: WebSocket; got: any[]; until(f: (m: any) => boolean, what: string): Promise<any> }> {
  const ws = new WebSocket(d.url.replace(/^http/, 'ws') + '/acp', ['acp'], { headers: d.headers });
  const got: any[] = [];
  ws.on('message', (data) => got.push(JSON.parse(String(data))));
  await new Promise((resolve, reject) => (ws.once('open', resolve), ws.once('error', reject)));
  const until = (f: (m: any) => boolean, what: string) => waitFor(what, () => got.find(f));
  ws.send(JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: 1 } }));
  await until((m) => m.id === 0, 'initialize');
  return { ws, got, until };
}

test('a permission asked in the running turn goes to the connection that prompted it, not to one whose prompt is queued behind it', async (t) => {
  let queuedB: Promise<unknown> | undefined;
  const sessionBox: { id?: string } = {};
  // A holds its first permission answer until B's prompt waits in the session's queue.
  const permission = async (): Promise<acp.RequestPermissionResponse> => {
    if (!queuedB) {
      queuedB = b.agent.request('session/prompt', { sessionId: sessionBox.id!, prompt: [{ type: 'text', text: 'hello' }] });
      await waitFor('B queued', async () => ((await a.agent.request('_troupe/session_state', { sessionId: sessionBox.id! })) as any).queue?.length === 1);
    }
    return { outcome: { outcome: 'selected', optionId: 'allow_once' } };
  };
  const { a, b } = await daemonWithClients(t, { script }, { b: 'http', handlers: { a: { permission } } });
  const cwd = tempDir();
  const sessionId = (sessionBox.id = (await a.agent.request('session/new', { cwd, mcpServers: [] })).sessionId);
  // B attaches (it sees the session's updates from here on).
  await b.agent.request('_troupe/session_state', { sessionId });
  const r = await a.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'write twice' }] });
  assert.equal(r.stopReason, 'end_turn');
  assert.equal(((await queuedB) as any).stopReason, 'end_turn');
  assert.equal(a.permissions.length, 2, 'both permissions of A turn went to A');
  assert.equal(b.permissions.length, 0, 'B, whose prompt waited behind, was asked nothing');
});

test('ws: a client answer whose id is the asked id of another type (a string for a number) is not taken as the answer', async (t) => {
  const d = await Daemon.start({ script: writeOnce });
  t.after(() => d.stop());
  const c = await rawWs(d);
  t.after(() => c.ws.close());
  const cwd = tempDir();
  c.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'session/new', params: { cwd, mcpServers: [] } }));
  const sessionId = (await c.until((m) => m.id === 1, 'session/new')).result.sessionId;
  c.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: 'write once' }] } }));
  const ask = await c.until((m) => m.method === 'session/request_permission', 'the permission request');
  assert.equal(typeof ask.id, 'number');
  // "Allow" under the id as a string, then "reject" under the id itself: only the second answers.
  c.ws.send(JSON.stringify({ jsonrpc: '2.0', id: String(ask.id), result: { outcome: { outcome: 'selected', optionId: 'allow_once' } } }));
  c.ws.send(JSON.stringify({ jsonrpc: '2.0', id: ask.id, result: { outcome: { outcome: 'selected', optionId: 'reject_once' } } }));
  assert.equal((await c.until((m) => m.id === 2 && !m.method, 'the prompt answer')).result.stopReason, 'end_turn');
  const calls = c.got.filter((m) => m.params?.update?.sessionUpdate === 'tool_call_update' && m.params.update.status);
  assert.equal(calls.at(-1).params.update.status, 'failed', 'the write was rejected, as the answer under the asked id said');
});

test('ws: a session method whose params name no session is invalid_params (-32602), not method_not_found; session/delete without one deletes nothing', async (t) => {
  const d = await Daemon.start({ script: writeOnce });
  t.after(() => d.stop());
  const c = await rawWs(d);
  t.after(() => c.ws.close());
  c.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'session/new', params: { cwd: tempDir(), mcpServers: [] } }));
  const sessionId = (await c.until((m) => m.id === 1, 'session/new')).result.sessionId;
  const cases: [string, unknown][] = [
    ['session/prompt', { prompt: [{ type: 'text', text: 'hello' }] }],
    ['session/prompt', 'not an object'],
    ['session/load', { sessionId: 5, cwd: '/', mcpServers: [] }],
    ['session/cancel', undefined],
    ['session/set_mode', { modeId: 'x' }],
    ['session/delete', {}],
    ['session/delete', { sessionId: 7 }],
  ];
  let id = 10;
  for (const [method, params] of cases) {
    const mine = id++;
    c.ws.send(JSON.stringify({ jsonrpc: '2.0', id: mine, method, ...(params === undefined ? {} : { params }) }));
    const answer = await c.until((m) => m.id === mine, method);
    assert.deepEqual([answer.error?.code, answer.error?.data?.code], [-32602, 'invalid_params'], `${method} ${JSON.stringify(params)}: ${JSON.stringify(answer)}`);
  }
  // An unknown method with no session is still method_not_found; so is $/cancel_request sent as a request (the SDK answers it so).
  c.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'nope/nothing', params: {} }));
  assert.equal((await c.until((m) => m.id === 99, 'unknown method')).error?.code, -32601);
  c.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 98, method: '$/cancel_request', params: { requestId: 1 } }));
  assert.equal((await c.until((m) => m.id === 98, '$/cancel_request with an id')).error?.code, -32601);
  // A session/cancel notification naming no session cannot be answered: the daemon's log says so (until 2026-12-07 nothing did).
  c.ws.send(JSON.stringify({ jsonrpc: '2.0', method: 'session/cancel', params: {} }));
  await waitFor('the warning', () => /a session\/cancel without params\.sessionId names no session \(no Acp-Session-Id either\): nothing cancelled/.test(d.stderr));
  c.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 100, method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: 'hello' }] } }));
  assert.equal((await c.until((m) => m.id === 100, 'a prompt')).result?.stopReason, 'end_turn', 'the session still serves');
});

test('ws: authenticate is answered by the daemon as by troupe acp: invalid_params naming the method, none being advertised (not -32601)', async (t) => {
  const d = await Daemon.start({ script: writeOnce });
  t.after(() => d.stop());
  const c = await rawWs(d);
  t.after(() => c.ws.close());
  c.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'authenticate', params: { methodId: 'api-key' } }));
  const refused = (await c.until((m) => m.id === 1, 'authenticate')).error;
  assert.deepEqual([refused?.code, refused?.data?.code, refused?.data?.methodId, refused?.data?.authMethods], [-32602, 'invalid_params', 'api-key', []], JSON.stringify(refused));
  assert.match(refused.message, /^troupe needs no authentication: it advertises no authentication methods/);
});

test("ws: a child's own check of a request's params (the SDK's) answers with data.code invalid_params, its detail kept", async (t) => {
  const d = await Daemon.start({ script: writeOnce });
  t.after(() => d.stop());
  const c = await rawWs(d);
  t.after(() => c.ws.close());
  c.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'session/new', params: 5 }));
  c.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'session/new', params: { cwd: tempDir(), mcpServers: [] } }));
  const sessionId = (await c.until((m) => m.id === 2, 'session/new')).result.sessionId;
  c.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'session/prompt', params: { sessionId, prompt: 'not an array' } }));
  for (const id of [1, 3]) {
    const error = (await c.until((m) => m.id === id, `answer ${id}`)).error;
    assert.equal(error?.code, -32602, JSON.stringify(error));
    assert.equal(error.data?.code, 'invalid_params', `id ${id}: ${JSON.stringify(error)}`);
    assert.ok(Array.isArray(error.data._errors), `id ${id}: the validation detail stays`);
  }
});

test('an unknown method for a session with no child is -32601 from the relay, and wakes no child; a known one wakes it', async (t) => {
  const d = await Daemon.start({ script: writeOnce, args: ['--pool', '0'] });
  t.after(() => d.stop());
  const c = await rawWs(d);
  t.after(() => c.ws.close());
  c.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'session/new', params: { cwd: tempDir(), mcpServers: [] } }));
  const sessionId = (await c.until((m) => m.id === 1, 'session/new')).result.sessionId;
  c.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'session/close', params: { sessionId } }));
  assert.deepEqual((await c.until((m) => m.id === 2, 'session/close')).result, {});
  await waitFor('the closed session\'s child to exit', () => d.childPids().length === 0);
  for (const [id, method] of [[3, '_troupe/no_such_method'], [4, 'session/no_such_method'], [5, 'fs/read_text_file']] as const) {
    c.ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params: { sessionId } }));
    const answer = await c.until((m) => m.id === id, method);
    assert.deepEqual([answer.error?.code, answer.error?.data?.method], [-32601, method], JSON.stringify(answer));
    assert.deepEqual(d.childPids(), [], `${method} started no child`);
  }
  c.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 6, method: '_troupe/session_state', params: { sessionId } }));
  assert.equal((await c.until((m) => m.id === 6, 'session_state')).result?.sessionId, sessionId, 'a method the agent answers wakes the session');
  assert.equal(d.childPids().length, 1);
  // With its child up, an unknown method goes to the child, which answers as the relay did.
  c.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 7, method: '_troupe/no_such_method', params: { sessionId } }));
  assert.equal((await c.until((m) => m.id === 7, 'unknown, live')).error?.code, -32601);
});

test('ws: after a restart, two clients that load every stored session at once revive each once, in turn, with its whole history; a prompt sent right after a load follows it', async (t) => {
  const first = await Daemon.start({ script: writeOnce, args: ['--pool', '0'] });
  const c = await rawWs(first);
  const ids: string[] = [];
  const cwds = [0, 1, 2, 3].map(() => tempDir());
  for (let i = 0; i < cwds.length; i++) {
    c.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1 + i, method: 'session/new', params: { cwd: cwds[i], mcpServers: [] } }));
    ids.push((await c.until((m) => m.id === 1 + i, 'session/new')).result.sessionId);
    c.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 10 + i, method: 'session/prompt', params: { sessionId: ids[i], prompt: [{ type: 'text', text: 'hello' }] } }));
    assert.equal((await c.until((m) => m.id === 10 + i, 'a prompt')).result?.stopReason, 'end_turn');
  }
  c.ws.close();
  await first.stop();
  // The relay starts each revival in a turn of its own (as it does session/new): the loads arrive
  // in a burst, each session's from both clients, and a prompt behind each of A's.
  const d = await Daemon.start({ script: writeOnce, home: first.home, args: ['--pool', '0'] });
  t.after(() => d.stop());
  const [a, b] = [await rawWs(d), await rawWs(d)];
  t.after(() => (a.ws.close(), b.ws.close()));
  const load = (id: number, i: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'session/load', params: { sessionId: ids[i], cwd: cwds[i], mcpServers: [] } });
  ids.forEach((sessionId, i) => {
    a.ws.send(load(100 + i, i));
    a.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 200 + i, method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: 'hello' }] } }));
    b.ws.send(load(100 + i, i));
  });
  for (const [name, c] of [['A', a], ['B', b]] as const) {
    for (const [i, sessionId] of ids.entries()) {
      const answered = c.got.indexOf(await c.until((m) => m.id === 100 + i && !m.method, `${name}'s load of session ${i}`));
      assert.equal(c.got[answered].result?.modes?.currentModeId, 'default', `${name}'s load of session ${i}: ${JSON.stringify(c.got[answered])}`);
      // The replay, before the answer: the first turn's prompt and reply.
      const replayed = c.got.slice(0, answered).filter((m) => m.params?.sessionId === sessionId && m.method === 'session/update');
      const texts = replayed.map((m) => m.params.update.content?.text).filter(Boolean);
      assert.ok(texts.includes('hello') && texts.includes('hello back'), `${name}, session ${i}: the history before the load's answer: ${JSON.stringify(texts)}`);
    }
  }
  for (const [i] of ids.entries()) {
    const prompt = await a.until((m) => m.id === 200 + i && !m.method, `A's prompt ${i}`);
    assert.equal(prompt.result?.stopReason, 'end_turn');
    assert.ok(a.got.indexOf(prompt) > a.got.findIndex((m) => m.id === 100 + i && !m.method), `A's prompt ${i} was answered after its load`);
  }
  assert.equal(d.childPids().length, ids.length, 'one child per session, however many loads named it');
});

test("a file read the child asks goes to an attached client that reads files when the prompting one does not: the child serves the capabilities of the client that made the session", async (t) => {
  const d = await Daemon.start({ script: { replies: [[{ tool_call: { name: 'read_file', input: { path: 'a.txt' } } }], [{ text: 'read it' }]] } });
  t.after(() => d.stop());
  // An editor that reads files through its buffers makes the session, and stays.
  const { sessionId, cwd, reads } = await editorSession(t, d, 'http');
  // Another client, which reads no files, prompts: the read is the editor's to answer (asked of the
  // prompting client it failed, method not found), the permission-free turn ends normally.
  const other = d.connect('ws');
  t.after(() => other.close());
  await other.init({});
  const r = await other.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'read a.txt' }] });
  assert.equal(r.stopReason, 'end_turn');
  const result = other.updatesFor(sessionId, 'tool_call_update').find((u) => u.rawOutput);
  assert.match(String(result?.rawOutput?.output), /in the editor buffer/, JSON.stringify(result));
  assert.deepEqual(reads, [join(cwd, 'a.txt')]);
});

test('ws: a cancel from another client, sent while a prompt waits to wake its resting session, cancels that prompt (it is not dropped for want of a process)', async (t) => {
  const slow = { replies: [{ when: 'hello', items: [{ text: 'hi' }] }, { when: 'slow', items: [{ text: 'starting' }, { delay_ms: 60_000 }, { text: 'too late' }] }] };
  const d = await Daemon.start({ script: slow, args: ['--pool', '0'] });
  t.after(() => d.stop());
  const [a, b, busy] = [await rawWs(d), await rawWs(d), await rawWs(d)];
  t.after(() => (a.ws.close(), b.ws.close(), busy.ws.close()));
  const cwd = tempDir();
  a.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'session/new', params: { cwd, mcpServers: [] } }));
  const sessionId = (await a.until((m) => m.id === 1, 'session/new')).result.sessionId;
  // Closed, its child stops: the session rests, and its next request starts a process in its turn.
  a.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'session/close', params: { sessionId } }));
  await a.until((m) => m.id === 2, 'session/close');
  await waitFor('the closed session\'s child to exit', () => d.childPids().length === 0);
  // A message of some 8 MB keeps the daemon parsing while the prompt and the cancel arrive: it reads
  // both in one turn of its loop, the prompt's start waiting for the next.
  busy.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 9, method: '_troupe/nothing', params: { pad: 'p'.repeat(8_000_000) } }));
  a.ws.send(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: 'slow' }] } }));
  b.ws.send(JSON.stringify({ jsonrpc: '2.0', method: 'session/cancel', params: { sessionId } }));
  const answer = await a.until((m) => m.id === 3, 'the prompt\'s answer');
  assert.equal(answer.result?.stopReason, 'cancelled', JSON.stringify(answer));
});
