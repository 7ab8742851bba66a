// A client's `$/cancel_request` for its session/load while the load waits in the daemon for another
// load of the session (loads go to a session's process one at a time: src/daemon/relay/load-turns.ts):
// answered -32800 (request_cancelled) at once, never sent to the process, and its client is left as
// it was before the load: not attached if the load alone attached it (sent nothing of the session),
// attached if it was before (sent the session's updates from then on). And one withdrawn while it waits for the
// session's process to start (a cold revival, a wake after an idle stop): answered -32800 at once,
// never sent, its client not attached by it, and the process it started serves the session and
// stops idle as any other.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { daemonWithClients, tempDir, waitFor, type AcpClient, type Daemon } from '../../support/daemon.js';

const script = { replies: [{ when: 'hello', items: [{ text: 'hello back' }] }] };

for (const [[first, second], before] of [[['http', 'ws'], false], [['ws', 'http'], false], [['http', 'ws'], true], [['ws', 'http'], true]] as const) {
  test(`${second}: a load withdrawn while it waits for another's turn is answered cancelled, and leaves its client ${before ? 'following the session, as it did' : 'not following the session, as it did not'}`, async (t) => {
    // The session's process is held stopped (SIGSTOP) while the first load is in it: no heartbeat
    // timeout may take it for hung meanwhile.
    const { d, a, b } = await daemonWithClients(t, { script, args: ['--heartbeat-timeout-ms', '600000'] }, { a: first, b: second });
    const cwd = tempDir();
    const sessionId = (await a.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
    assert.equal((await a.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello' }] })).stopReason, 'end_turn');
    // B follows the session before its withdrawn load, or not.
    if (before) await b.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
    const history = b.updatesFor(sessionId, 'user_message_chunk').length;
    const { pid } = (await d.api('GET', `/v1/sessions/${sessionId}`)).json.child;
    process.kill(pid, 'SIGSTOP');
    try {
      const aLoad = a.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
      // Answered by the daemon after it took A's load (a connection's messages are taken in order): the load is in flight.
      await a.agent.request('session/list', {});
      const cancel = new AbortController();
      const bLoad = b.agent.request('session/load', { sessionId, cwd, mcpServers: [] }, { cancellationSignal: cancel.signal });
      cancel.abort();
      // B's cancel was taken once this is answered; the process may go on then (a load the cancel
      // missed would be answered with a result now).
      await b.agent.request('session/list', {});
      process.kill(pid, 'SIGCONT');
      await assert.rejects(bLoad, (e: any) => e.code === -32800 && e.data?.code === 'request_cancelled');
      await aLoad;
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    assert.equal((await d.api('GET', `/v1/sessions/${sessionId}`)).json.connections, before ? 2 : 1);
    const sent = b.updatesFor(sessionId).length;
    assert.equal((await a.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello' }] })).stopReason, 'end_turn');
    if (before) {
      // B is not held for a load that will never come: it is sent A's next turn.
      await b.until(() => b.updatesFor(sessionId, 'agent_message_chunk').length > history, "B sent A's next turn");
      assert.equal(b.updatesFor(sessionId, 'user_message_chunk').length, history + 1, 'B was sent none of the history it withdrew its load of, only the new prompt');
    } else {
      // Until 2026-12-07 (this test said so) B was sent the session's updates from then on, as a client
      // that had loaded it: a load that did not succeed attached it all the same.
      await b.agent.request('session/list', {});
      assert.deepEqual(b.updatesFor(sessionId).slice(sent), [], 'B, whose only load it withdrew, was sent nothing of the session');
    }
    assert.equal((await d.api('GET', `/v1/sessions/${sessionId}`)).json.connections, before ? 2 : 1);
  });
}

const cancelled = (e: any) => e.code === -32800 && e.data?.code === 'request_cancelled';

/**
 * `b` loads the session while the daemon's spawner is held stopped (SIGSTOP: no process can start,
 * so the session's child stays `spawning` with the load queued for it), and withdraws the load. The
 * spawner goes on once the cancel was taken; the load's outcome is returned.
 */
async function loadWithdrawnWhileStarting(d: Daemon, b: AcpClient, sessionId: string, cwd: string): Promise<unknown> {
  const spawner = d.spawnerPid();
  assert.ok(spawner, 'the spawner runs (it started the session\'s first process)');
  process.kill(spawner, 'SIGSTOP');
  try {
    const cancel = new AbortController();
    const load = b.agent.request('session/load', { sessionId, cwd, mcpServers: [] }, { cancellationSignal: cancel.signal });
    const outcome = load.then(() => 'loaded', (e) => e);
    // Answered once the daemon took the load (a connection's messages are taken in order).
    await b.agent.request('session/list', {});
    assert.equal((await d.api('GET', `/v1/sessions/${sessionId}`)).json.child.state, 'spawning', 'the load waits for a process to start');
    cancel.abort();
    // The cancel was taken once this is answered; a load it missed is answered as loaded once the process starts.
    await b.agent.request('session/list', {});
    process.kill(spawner, 'SIGCONT');
    return await outcome;
  } finally {
    process.kill(spawner, 'SIGCONT');
  }
}

for (const transport of ['http', 'ws'] as const) {
  test(`${transport}: a load withdrawn while its session's process starts is answered cancelled and leaves nothing attached; the process serves the session`, async (t) => {
    const { d, a, b } = await daemonWithClients(t, { script, args: ['--pool', '0'] }, { b: transport });
    const cwd = tempDir();
    const sessionId = (await a.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
    assert.equal((await a.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello' }] })).stopReason, 'end_turn');
    // Closed by its only client: its process stops, and the daemon lets the session go (it rests).
    await a.agent.request('session/close', { sessionId });
    await waitFor('the closed session to rest', async () => (await d.api('GET', `/v1/sessions/${sessionId}`)).json.child === null);

    assert.ok(cancelled(await loadWithdrawnWhileStarting(d, b, sessionId, cwd)), 'answered -32800 (request_cancelled)');
    assert.equal((await d.api('GET', `/v1/sessions/${sessionId}`)).json.connections, 0, 'the withdrawn load attached no client');
    // The process started for the load opened the session all the same: a prompt to it is served.
    assert.equal((await a.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello' }] })).stopReason, 'end_turn');
    assert.equal((await d.api('GET', `/v1/sessions/${sessionId}`)).json.connections, 1);
    assert.deepEqual(b.updatesFor(sessionId), [], 'B, which loaded nothing, was sent nothing of the session');
  });
}

test('a load withdrawn while it wakes an idle-stopped session leaves its process to stop idle again', async (t) => {
  const { d, a, b } = await daemonWithClients(t, { script, args: ['--pool', '0', '--idle-ms', '300'] });
  const cwd = tempDir();
  const sessionId = (await a.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
  assert.equal((await a.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello' }] })).stopReason, 'end_turn');
  const child = async () => (await d.api('GET', `/v1/sessions/${sessionId}`)).json.child;
  await waitFor('the session to stop idle', async () => (await child()).state === 'idleStopped');

  assert.ok(cancelled(await loadWithdrawnWhileStarting(d, b, sessionId, cwd)), 'answered -32800 (request_cancelled)');
  // The process woken for it does not stay busy with a load it never had: it stops idle again.
  await waitFor('the woken process to stop idle again', async () => {
    const c = await child();
    return c.wakes === 1 && c.state === 'idleStopped';
  });
  assert.equal((await d.api('GET', `/v1/sessions/${sessionId}`)).json.connections, 1, 'A alone is attached');
});

test('the process started for a withdrawn load resumes the session with the MCP servers it had', async (t) => {
  const mcpScript = { replies: [{ when: 'env', items: [{ tool_call: { name: 'mcp__test__env', input: {} } }] }, [{ text: 'seen' }]] };
  const { d, a, b } = await daemonWithClients(t, { script: mcpScript, args: ['--pool', '0'] });
  const cwd = tempDir();
  const mcpServers = [{ name: 'test', command: process.execPath, args: [resolve('dist/test/support/mcp-test-server.js')], env: [{ name: 'MCP_TEST_VAR', value: 'kept' }] }];
  const { sessionId } = (await a.agent.request('session/new', { cwd, mcpServers })) as { sessionId: string };
  await a.agent.request('session/close', { sessionId });
  await waitFor('the closed session to rest', async () => (await d.api('GET', `/v1/sessions/${sessionId}`)).json.child === null);

  // B's load names no servers: had it run, the session would have none from then on.
  assert.ok(cancelled(await loadWithdrawnWhileStarting(d, b, sessionId, cwd)), 'answered -32800 (request_cancelled)');
  assert.equal((await a.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'env' }] })).stopReason, 'end_turn');
  const done = a.updatesFor(sessionId, 'tool_call_update').at(-1);
  assert.equal(done?.status, 'completed', JSON.stringify(done?.rawOutput));
  assert.equal(JSON.parse(done.rawOutput.output).MCP_TEST_VAR, 'kept', "the session's server serves it");
});
