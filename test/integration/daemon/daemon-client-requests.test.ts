// Requests a session's process sends a client (a permission here) that the client never answers: the
// turn was cancelled, the process crashed, the session was deleted. Each is withdrawn from the client
// (`$/cancel_request`, which the SDK client turns into its handler's aborted signal), and the daemon
// keeps nothing of it (troupe_acp_client_requests_open goes back to 0): an editor's connection lives
// all day. A late answer is dropped, and a restarted process is not sent it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { childWithdrawals, wireTapEnv } from '../../support/child-wire-tap.js';
import { type AcpClient, breakableStart, Daemon, daemonWithClients, printDaemonIfFailed, tempDir, type TestHooks, waitFor } from '../../support/daemon.js';

const script = {
  replies: [
    { when: 'write once', items: [{ tool_call: { name: 'write_file', input: { path: 'w.txt', content: 'x' } } }] },
    [{ text: 'done' }],
  ],
};

/** The permissions a client was asked, each with its signal and the answer the test gives it. */
interface Asked {
  signal: AbortSignal;
  answer(optionId: string): void;
}

/** A daemon and a client that answers a permission only when the test says (`asked`). */
async function setUp(t: TestHooks, transport: 'http' | 'ws') {
  // What its processes read and write (child-wire-tap.ts): the answers they are sent to the requests they withdrew.
  const tap = tempDir();
  const d = await Daemon.start({ script, env: wireTapEnv(tap) });
  printDaemonIfFailed(t, d);
  t.after(() => d.stop());
  const asked: Asked[] = [];
  const c = d.connect(transport, {
    permission: (_req, signal) =>
      new Promise((resolve) => asked.push({ signal, answer: (optionId) => resolve({ outcome: { outcome: 'selected', optionId } }) })),
  });
  t.after(() => c.close());
  await c.init();
  const sessionId = (await c.agent.request('session/new', { cwd: tempDir(), mcpServers: [] })).sessionId;
  return { d, c, asked, sessionId, tap };
}

const openRequests = (d: Daemon) => d.metric('troupe_acp_client_requests_open');

function prompt(c: AcpClient, sessionId: string, text: string) {
  return c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text }] });
}

/** Waits for the permission asked `n`-th, and for the daemon to count it open. */
async function askedPermission(d: Daemon, asked: Asked[], n: number): Promise<Asked> {
  const it = await waitFor(`permission ${n}`, () => asked[n - 1]);
  assert.equal(await openRequests(d), 1, 'the daemon counts the request at its client');
  return it;
}

for (const transport of ['http', 'ws'] as const) {
  test(`${transport}: a permission of a cancelled turn is withdrawn from the client, and the daemon keeps nothing of it`, async (t) => {
    const { d, c, asked, sessionId, tap } = await setUp(t, transport);
    for (let n = 1; n <= 2; n++) {
      const turn = prompt(c, sessionId, 'write once');
      const permission = await askedPermission(d, asked, n);
      await c.agent.notify('session/cancel', { sessionId });
      assert.equal((await turn).stopReason, 'cancelled');
      await waitFor('the client told of the withdrawal', () => permission.signal.aborted);
      await waitFor('no request left open at the client', async () => (await openRequests(d)) === 0);
      // Its late answer is dropped: nothing else was asked, and the session serves on.
      permission.answer('allow_once');
      // The process that withdrew it keeps nothing of it either: the relay answers it -32800, as ACP has
      // a withdrawn request answered (its SDK keeps a request until answered; until 2026-12-07 these
      // were never answered, and a long session's process held every one it withdrew).
      await waitFor("the process's withdrawn request answered", () => childWithdrawals(tap).length === n && childWithdrawals(tap).every((w) => w.answers.length > 0));
    }
    // Once each: the late answers were not passed on (the process would have been answered twice).
    assert.deepEqual(childWithdrawals(tap).map((w) => [w.method, w.answers]), [['session/request_permission', [-32800]], ['session/request_permission', [-32800]]]);
  });
}

test('http: a permission of a process that crashed is withdrawn; its late answer is not sent to the restarted process, whose own permission is answered', async (t) => {
  const { d, c, asked, sessionId } = await setUp(t, 'http');
  const turn = prompt(c, sessionId, 'write once');
  const permission = await askedPermission(d, asked, 1);
  const { pid } = (await d.api('GET', `/v1/sessions/${sessionId}`)).json.child;
  process.kill(pid, 'SIGKILL');
  await assert.rejects(turn, (e: any) => e.data?.code === 'agent_crashed');
  await waitFor('the client told of the withdrawal', () => permission.signal.aborted);
  await waitFor('no request left open at the client', async () => (await openRequests(d)) === 0);
  // The restarted process asks again; the first request's late "allow" must not answer it.
  const again = prompt(c, sessionId, 'write once');
  const second = await askedPermission(d, asked, 2);
  permission.answer('allow_once');
  second.answer('reject_once');
  assert.equal((await again).stopReason, 'end_turn');
  const statuses = c.updatesFor(sessionId, 'tool_call_update').filter((u) => u.status);
  assert.equal(statuses.at(-1).status, 'failed', 'the write was rejected, as the answer to its own request said');
  assert.equal(await openRequests(d), 0);
});

test('ws: a permission of a session deleted meanwhile is withdrawn from the client, and the daemon keeps nothing of it', async (t) => {
  const { d, c, asked, sessionId } = await setUp(t, 'ws');
  const turn = prompt(c, sessionId, 'write once');
  const permission = await askedPermission(d, asked, 1);
  const other = d.connect('http');
  t.after(() => other.close());
  await other.init();
  await other.agent.request('session/delete', { sessionId });
  await assert.rejects(turn, (e: any) => e.data?.code === 'session_not_found');
  await waitFor('the client told of the withdrawal', () => permission.signal.aborted);
  await waitFor('no request left open at the client', async () => (await openRequests(d)) === 0);
  permission.answer('allow_once');
});

test('the client asked a permission goes away before answering: another client attached to the session is asked it, and its answer is the one the turn gets', async (t) => {
  const { d, c, asked, sessionId } = await setUp(t, 'http');
  const cwd = (await d.api('GET', `/v1/sessions/${sessionId}`)).json.cwd as string;
  const watcher = d.connect('ws');
  t.after(() => watcher.close());
  await watcher.init();
  await watcher.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  void prompt(c, sessionId, 'write once').catch(() => undefined);
  await askedPermission(d, asked, 1);
  assert.equal(watcher.permissions.length, 0, 'the prompting client is asked first');
  // The editor quits while its permission dialog is open.
  c.close();
  await waitFor('the watcher asked the permission', () => watcher.permissions.length === 1);
  await waitFor('the write done', () => watcher.updatesFor(sessionId, 'tool_call_update').some((u) => u.status === 'completed'));
  assert.equal(readFileSync(join(cwd, 'w.txt'), 'utf8'), 'x');
  await waitFor('no request left open at a client', async () => (await openRequests(d)) === 0);
});

test("a prompt refused when its session failed for good is no prompt of its client's any more: after a revive, the process's permission in another client's turn goes to that client", async (t) => {
  // A process that dies at every start once `broken` exists; one restart allowed.
  const { env, broken } = breakableStart();
  const { d, a, b } = await daemonWithClients(t, { script, env, args: ['--pool', '0', '--restart-intensity', '1', '--restart-period-ms', '600000'] });
  const cwd = tempDir();
  const sessionId = (await a.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
  await b.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  const child = async () => (await d.api('GET', `/v1/sessions/${sessionId}`)).json.child;
  writeFileSync(broken, '');
  // The spawner held stopped: the restart after the kill waits for a process, with A's prompt queued for it.
  const spawner = d.spawnerPid()!;
  process.kill(spawner, 'SIGSTOP');
  let refused: Promise<unknown>;
  try {
    process.kill((await child()).pid, 'SIGKILL');
    await waitFor('the restart to wait for a process', async () => (await child()).state === 'restarting');
    refused = prompt(a, sessionId, 'write once').then(() => 'answered', (e) => e);
    // Answered once the daemon took the prompt (a connection's messages are taken in order).
    await a.agent.request('session/list', {});
  } finally {
    process.kill(spawner, 'SIGCONT');
  }
  assert.equal(((await refused) as any)?.data?.code, 'session_failed', 'the restart died too: the session failed for good, and the queued prompt with it');
  rmSync(broken);
  assert.equal((await d.api('POST', `/v1/sessions/${sessionId}/revive`)).status, 200);
  // B's turn: its process asks a permission, of the client whose prompt runs.
  assert.equal((await prompt(b, sessionId, 'write once')).stopReason, 'end_turn');
  assert.equal(b.permissions.length, 1, "B, whose turn it is, is asked");
  assert.equal(a.permissions.length, 0, 'not A, whose prompt was refused long before');
});
