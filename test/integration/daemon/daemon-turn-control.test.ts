// The management API's turn control (what `troupe cancel` and `troupe steer` send) against a real
// daemon: POST /v1/sessions/:id/cancel cancels a prompt the daemon has taken even while no process of
// the session runs it yet (a prompt that wakes an idle-stopped session waits for the new process, and
// a cancel meanwhile must reach that process behind it, as ACP's session/cancel does, spec/daemon.md
// §Relay); a steer whose process dies or is deleted under it is answered with a typed error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { daemonWithSession, waitFor, type AcpClient, type Daemon } from '../../support/daemon.js';
import { FileEventLog, sessionLogPath, sessionsDir } from '../../../src/store/index.js';

const script = { replies: [{ when: 'ping', items: [{ text: 'pong' }] }, { when: 'hang', items: [{ text: 'hanging' }, { hang: true }] }] };

/**
 * A prompt sent while `pid` is stopped (SIGSTOP), then, once the daemon has taken it, what `meanwhile`
 * checks, then a management cancel, then what `afterCancel` checks of the prompt's answer to come;
 * `pid` is continued (SIGCONT) whatever happens. Returns the prompt's stop reason (or error) to come,
 * and the cancel's answer.
 */
async function cancelWhileStopped(d: Daemon, c: AcpClient, sessionId: string, pid: number, meanwhile: () => Promise<void>, afterCancel: (prompt: Promise<unknown>) => Promise<void> = async () => undefined): Promise<{ prompt: Promise<unknown>; cancel: { status: number; json: any } }> {
  process.kill(pid, 'SIGSTOP');
  try {
    const prompt = c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'ping' }] }).then((r) => r.stopReason, (e) => e);
    // Answered once the daemon took the prompt (a connection's messages are taken in order).
    await c.agent.request('session/list', {});
    await meanwhile();
    const cancel = await d.api('POST', `/v1/sessions/${sessionId}/cancel`);
    await afterCancel(prompt);
    return { prompt, cancel };
  } finally {
    process.kill(pid, 'SIGCONT');
  }
}

test('a cancel while a prompt waits for its idle-stopped session to wake cancels that prompt', async (t) => {
  const { d, c, sessionId } = await daemonWithSession(t, 'http', { script, args: ['--pool', '0', '--idle-ms', '300'] });
  const child = async () => (await d.api('GET', `/v1/sessions/${sessionId}`)).json.child;
  await waitFor('the idle stop', async () => (await child())?.state === 'idleStopped');
  // The spawner held stopped: the wake waits for a process, with the prompt queued for it.
  const { prompt, cancel } = await cancelWhileStopped(
    d,
    c,
    sessionId,
    d.spawnerPid()!,
    async () => {
      await waitFor('the wake to wait for a process', async () => (await child())?.state === 'spawning');
    },
    // Answered by the daemon while no process can exist yet (the spawner stopped): the prompt never
    // reaches one. Sent behind it, the cancel reached the new process after a short turn had begun,
    // and the prompt ran to its end on a loaded machine (until 2026-12-07).
    async (answer) => {
      let stop: unknown;
      void answer.then((r) => (stop = r));
      await waitFor('the prompt answered while the spawner is stopped', () => stop !== undefined);
      assert.equal(stop, 'cancelled', 'answered before any process had the prompt');
    },
  );
  assert.deepEqual([cancel.status, cancel.json], [200, { sessionId, cancelled: true }], 'the waiting prompt is the turn cancelled');
  assert.equal(await prompt, 'cancelled', 'the prompt did not run to its end');
  assert.deepEqual((await d.api('POST', `/v1/sessions/${sessionId}/cancel`)).json, { sessionId, cancelled: false }, 'nothing left to cancel');
});

test('a cancel right after a prompt, before the session\'s process says its turn runs, cancels it', async (t) => {
  const { d, c, sessionId } = await daemonWithSession(t, 'ws', { script });
  const { pid } = (await d.api('GET', `/v1/sessions/${sessionId}`)).json.child;
  // The process stopped (SIGSTOP): it has the prompt in its pipe and has not started the turn.
  const { prompt, cancel } = await cancelWhileStopped(d, c, sessionId, pid, async () => {
    assert.equal((await d.api('GET', `/v1/sessions/${sessionId}`)).json.machines.session, 'idle', 'no turn runs yet');
  });
  assert.deepEqual([cancel.status, cancel.json], [200, { sessionId, cancelled: true }]);
  assert.equal(await prompt, 'cancelled');
});

/**
 * A steer sent to the session's process while it is stopped (SIGSTOP: it reads nothing), once the
 * daemon has taken the whole request (its body counted in /metrics: the route has sent the steer by
 * then), and then what `end` does to the process; returns the steer's answer.
 */
async function steerInFlight(d: Daemon, c: AcpClient, sessionId: string, end: (pid: number) => Promise<unknown>): Promise<{ status: number; json: any }> {
  void c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hang' }] }).catch(() => undefined);
  const turnId = await waitFor('the running turn', async () => (await d.api('GET', `/v1/sessions/${sessionId}`)).json.turnId);
  const { pid } = (await d.api('GET', `/v1/sessions/${sessionId}`)).json.child;
  const received = await receivedBytes(d);
  const body = JSON.stringify({ expectedTurnId: turnId, text: 'go on' });
  process.kill(pid, 'SIGSTOP');
  const steer = d.api('POST', `/v1/sessions/${sessionId}/steer`, JSON.parse(body));
  await waitFor('the daemon to take the steer', async () => (await receivedBytes(d)) >= received + body.length);
  await end(pid);
  return steer;
}

async function receivedBytes(d: Daemon): Promise<number> {
  const text = await (await fetch(`${d.url}/metrics`, { headers: d.headers })).text();
  return Number(/^troupe_management_bytes_total\{direction="received"\} (\S+)$/m.exec(text)?.[1] ?? 0);
}

test('a steer whose session process dies under it is answered agent_crashed (502), not a 500', async (t) => {
  const { d, c, sessionId } = await daemonWithSession(t, 'http', { script });
  const steer = await steerInFlight(d, c, sessionId, async (pid) => process.kill(pid, 'SIGKILL'));
  assert.deepEqual([steer.status, steer.json.error?.code, steer.json.error?.data?.sessionId], [502, 'agent_crashed', sessionId], JSON.stringify(steer.json));
  assert.doesNotMatch(d.stderr, /Route handler failed/, 'no bug logged: a crash is not one');
});

test('a steer whose session is deleted under it is answered session_not_found (deleted), as its prompt is', async (t) => {
  const { d, c, sessionId } = await daemonWithSession(t, 'http', { script });
  let deleted: { status: number; json: any } | undefined;
  const steer = await steerInFlight(d, c, sessionId, async (pid) => {
    const del = d.api('DELETE', `/v1/sessions/${sessionId}`);
    // The delete stops the process (which, stopped, would take its grace periods to go): killed once it is stopping.
    await waitFor('the delete to stop the process', async () => (await d.api('GET', `/v1/sessions/${sessionId}`)).json.child?.state === 'stopping');
    process.kill(pid, 'SIGKILL');
    deleted = await del;
  });
  assert.equal(deleted?.status, 200);
  assert.deepEqual([steer.status, steer.json.error?.code, steer.json.error?.data], [404, 'session_not_found', { sessionId, deleted: true }], JSON.stringify(steer.json));
});

test('a management request body over 1 MiB (a steer) is 413 payload_too_large, and one under it is read', async (t) => {
  const { d, c, sessionId } = await daemonWithSession(t, 'http', { script });
  void c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hang' }] }).catch(() => undefined);
  const turnId = await waitFor('the running turn', async () => (await d.api('GET', `/v1/sessions/${sessionId}`)).json.turnId);
  const over = await d.api('POST', `/v1/sessions/${sessionId}/steer`, { expectedTurnId: turnId, text: 'x'.repeat(1024 * 1024) });
  assert.deepEqual([over.status, over.json.error?.code], [413, 'payload_too_large']);
  const under = await d.api('POST', `/v1/sessions/${sessionId}/steer`, { expectedTurnId: turnId, text: 'x'.repeat(1000 * 1024) });
  assert.equal(under.status, 200, JSON.stringify(under.json).slice(0, 200));
});

test('a steer\'s body gives text or prompt, exactly one: each other body is refused saying what was wrong', async (t) => {
  const { d, sessionId } = await daemonWithSession(t, 'http', { script });
  // Read before the session's turn is looked at: no turn needs to run for these.
  const bodies: [body: Record<string, unknown>, said: string][] = [
    // Until 2026-12-07: "steer needs text (a string) or prompt (content blocks)", the text given.
    [{ prompt: [], text: 'go on' }, 'steer takes text or prompt, not both'],
    [{ prompt: [{ type: 'text', text: 'a' }], text: 'b' }, 'steer takes text or prompt, not both'],
    // Until 2026-12-07 a prompt that was not an array was passed over for the text.
    [{ prompt: 'go on' }, 'steer prompt must be an array of content blocks'],
    [{ prompt: [] }, 'steer prompt is empty (give at least one content block)'],
    [{ text: 7 }, 'steer text must be a string'],
    [{}, 'steer needs text (a string) or prompt (content blocks)'],
  ];
  for (const [body, said] of bodies) {
    const res = await d.api('POST', `/v1/sessions/${sessionId}/steer`, { expectedTurnId: 'turn_x', ...body });
    assert.deepEqual([res.status, res.json.error?.code, res.json.error?.message], [400, 'invalid_params', said], JSON.stringify(body));
  }
  // Either alone is taken, and goes on to the turn check (no turn runs).
  for (const body of [{ text: 'go on' }, { prompt: [{ type: 'text', text: 'go on' }] }]) {
    const res = await d.api('POST', `/v1/sessions/${sessionId}/steer`, { expectedTurnId: 'turn_x', ...body });
    assert.notEqual(res.json.error?.code, 'invalid_params', JSON.stringify(res.json));
  }
});

test('a command a daemon stop cuts off is recorded as cut off by the shutdown, not as cancelled by the user', async (t) => {
  const replies = [{ when: 'run', items: [{ tool_call: { name: 'run_command', input: { command: 'touch started; sleep 1000' } } }] }];
  const { d, c, sessionId, cwd } = await daemonWithSession(t, 'ws', { script: { replies } });
  await c.agent.request('session/set_mode', { sessionId, modeId: 'bypass' });
  const prompt = c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'run' }] }).catch((e) => e);
  await waitFor('the command running', () => existsSync(join(cwd, 'started')));
  assert.equal(await d.stop(), 0);
  await prompt;
  const log = await FileEventLog.open(sessionLogPath(sessionsDir(d.home), sessionId), { readOnly: true });
  const events: any[] = (await log.readAfter(0)).events;
  await log.close();
  const call = events.find((e) => e.type === 'tool_call_updated' && e.status === 'failed');
  const end = events.find((e) => e.type === 'turn_completed');
  // Until 2026-12-07: "Cancelled by the user while running.", and the turn's end said nothing.
  assert.deepEqual([call?.errorCode, call?.output], ['request_cancelled', 'Cancelled while running: the daemon is shutting down.']);
  assert.deepEqual([end?.stopReason, end?.message], ['cancelled', 'cancelled: the daemon is shutting down']);
});
