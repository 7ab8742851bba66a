// A session/load that does not succeed leaves its connection as it was before it (spec/daemon.md
// §Relay, "Several connections per session"): one the load alone attached is not attached any more
// (not counted in GET /v1/sessions/:id, sent none of the session's updates while another client's
// turn streams), one attached before stays attached. Here: a load the session's process answers with
// an error (a damaged log; another directory), one lost with its process (kill -9 while the load is
// in it), and one refused by the daemon (queued for a restart that never serves: session_failed). A
// withdrawn load: daemon-withdrawn-loads.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, writeFileSync } from 'node:fs';
import { Packr } from 'msgpackr';
import { breakableStart, Daemon, daemonWithClient, daemonWithClients, printDaemonIfFailed, tempDir, waitFor, type AcpClient } from '../../support/daemon.js';
import { scanLogFile, sessionLogPath, sessionsDir } from '../../../src/store/index.js';
import { frameRecord } from '../../../src/store/record-frame.codec.js';

const script = { replies: [{ when: 'hello', items: [{ text: 'hello back' }] }] };
const prompt = (c: AcpClient, sessionId: string) => c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello' }] });
const connections = async (d: Daemon, sessionId: string): Promise<number> => (await d.api('GET', `/v1/sessions/${sessionId}`)).json.connections;

/** A daemon, its client `a` (HTTP) with a session that ran a turn, and a second client `b` on `transport`. */
async function sessionAndSecondClient(t: { after(f: () => unknown): void }, transport: 'http' | 'ws', args: string[] = [], env?: Record<string, string>) {
  const { d, a, b } = await daemonWithClients(t, { script, args, ...(env ? { env } : {}) }, { b: transport });
  const cwd = tempDir();
  const sessionId: string = (await a.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
  assert.equal((await prompt(a, sessionId)).stopReason, 'end_turn');
  return { d, a, b, cwd, sessionId };
}

/** `b` loads the session, and has what the load sends after its answer (the session's commands). */
async function loaded(b: AcpClient, sessionId: string, cwd: string): Promise<void> {
  await b.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  await b.until(() => b.updatesFor(sessionId, 'available_commands_update').length > 0, 'the commands announced after the load');
}

/**
 * A's next turn, while `b` does (`attached`) or does not follow the session: `b` is sent the turn, or
 * nothing of the session (checked after a round trip of `b`'s own: over WebSocket what the daemon sent
 * it before that answer came before it).
 */
async function nextTurnSeenBy(a: AcpClient, b: AcpClient, sessionId: string, attached: boolean): Promise<void> {
  const before = b.updatesFor(sessionId).length;
  assert.equal((await prompt(a, sessionId)).stopReason, 'end_turn');
  if (attached) return b.until(() => b.updatesFor(sessionId, 'agent_message_chunk').length > 0 && b.updatesFor(sessionId).length > before, "B sent A's turn");
  await b.agent.request('session/list', {});
  assert.deepEqual(b.updatesFor(sessionId).slice(before), [], 'B, whose load failed, was sent nothing of the session after it');
}

for (const transport of ['ws', 'http'] as const) {
  for (const before of [false, true]) {
    test(`${transport}: a load the process refuses (another directory) leaves B ${before ? 'attached, as it was' : 'unattached, as it was'}`, async (t) => {
      const { d, a, b, cwd, sessionId } = await sessionAndSecondClient(t, transport);
      if (before) await loaded(b, sessionId, cwd);
      const sent = b.seqs(sessionId).length;
      await assert.rejects(b.agent.request('session/load', { sessionId, cwd: tempDir(), mcpServers: [] }), (e: any) => e.code !== -32800 && e.data?.code !== undefined);
      assert.equal(b.seqs(sessionId).length, sent, 'the refused load replayed nothing');
      assert.equal(await connections(d, sessionId), before ? 2 : 1);
      await nextTurnSeenBy(a, b, sessionId, before);
      assert.equal(await connections(d, sessionId), before ? 2 : 1);
    });

    test(`${transport}: a load lost with its process (kill -9 while the load is in it) leaves B ${before ? 'attached, as it was' : 'unattached, as it was'}`, async (t) => {
      const { d, a, b, cwd, sessionId } = await sessionAndSecondClient(t, transport, ['--heartbeat-timeout-ms', '600000']);
      if (before) await loaded(b, sessionId, cwd);
      const child = async () => (await d.api('GET', `/v1/sessions/${sessionId}`)).json.child;
      const { pid, restarts } = await child();
      // Stopped, the process takes the load (written to its stdin) and answers nothing of it.
      process.kill(pid, 'SIGSTOP');
      const load = b.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
      const outcome = load.then(() => 'loaded', (e) => e);
      // Answered once the daemon took the load and sent it (a connection's messages are taken in order).
      await b.agent.request('session/list', {});
      const sent = b.seqs(sessionId).length;
      process.kill(pid, 'SIGKILL');
      const e = (await outcome) as any;
      assert.equal(e?.data?.code, 'agent_crashed', JSON.stringify(e));
      await waitFor('the restarted process to serve', async () => {
        const c = await child();
        return c.restarts === restarts + 1 && c.state === 'ready';
      });
      // (The restarted process announces the session's commands to who is attached: no history.)
      assert.equal(b.seqs(sessionId).length, sent, 'the lost load replayed nothing');
      assert.equal(await connections(d, sessionId), before ? 2 : 1);
      await nextTurnSeenBy(a, b, sessionId, before);
      assert.equal(await connections(d, sessionId), before ? 2 : 1);
    });
  }
}

test('a prompt that fails from a client that never loaded the session leaves it attached: only a load or resume is on trial', async (t) => {
  const { d, a, b, sessionId } = await sessionAndSecondClient(t, 'ws');
  // Refused by the process (its prompt is not a list of content blocks): answered with an error.
  await assert.rejects(b.agent.request('session/prompt', { sessionId, prompt: 'not a list' }), (e: any) => e.code === -32602);
  assert.equal(await connections(d, sessionId), 2, 'B, which prompted the session, still follows it');
  await nextTurnSeenBy(a, b, sessionId, true);
});

test('a load of a damaged log, answered log_corrupt, leaves its client unattached: the session holds no connection', { timeout: 120_000 }, async (t) => {
  const first = await daemonWithClient(t, 'http', { script });
  const cwd = tempDir();
  const { sessionId } = await first.c.agent.request('session/new', { cwd, mcpServers: [] });
  assert.equal((await prompt(first.c, sessionId)).stopReason, 'end_turn');
  first.c.close();
  await first.d.stop();
  // A checksummed record that does not decode, as daemon-damaged-log.test.ts makes one: the session does not open.
  const path = sessionLogPath(sessionsDir(first.d.home), sessionId);
  appendFileSync(path, frameRecord(new Packr().pack([scanLogFile(path).lastSeq + 1, 1, 'not a list of events'])));

  const d = await Daemon.start({ script, home: first.d.home });
  printDaemonIfFailed(t, d);
  t.after(() => d.stop());
  for (const transport of ['ws', 'http'] as const) {
    const b = d.connect(transport);
    t.after(() => b.close());
    await b.init();
    await assert.rejects(b.agent.request('session/load', { sessionId, cwd, mcpServers: [] }), (e: any) => e.data?.code === 'log_corrupt');
    assert.equal(await connections(d, sessionId), 0, `${transport}: the failed load attached no client`);
  }
});

test('a load queued for a restart that never serves, refused session_failed once the restarts are spent, leaves its client unattached', async (t) => {
  // A process that dies at every start once `broken` exists.
  const { env, broken } = breakableStart();
  const { d, b, cwd, sessionId } = await sessionAndSecondClient(t, 'ws', ['--pool', '0', '--restart-intensity', '1', '--restart-period-ms', '600000'], env);
  const child = async () => (await d.api('GET', `/v1/sessions/${sessionId}`)).json.child;
  writeFileSync(broken, '');
  // The spawner held stopped: the restart after the kill waits for a process, with B's load queued for it.
  const spawner = d.spawnerPid()!;
  process.kill(spawner, 'SIGSTOP');
  let outcome: Promise<unknown>;
  try {
    process.kill((await child()).pid, 'SIGKILL');
    await waitFor('the restart to wait for a process', async () => (await child()).state === 'restarting');
    outcome = b.agent.request('session/load', { sessionId, cwd, mcpServers: [] }).then(() => 'loaded', (e) => e);
    // Answered once the daemon took the load (a connection's messages are taken in order).
    await b.agent.request('session/list', {});
    assert.equal(await connections(d, sessionId), 2, 'B is attached while its load waits');
  } finally {
    process.kill(spawner, 'SIGCONT');
  }
  const e = (await outcome) as any;
  assert.equal(e?.data?.code, 'session_failed', JSON.stringify(e));
  assert.equal(await connections(d, sessionId), 1, 'A alone: the refused load left B as it was');
  assert.deepEqual(b.updatesFor(sessionId), []);
});
