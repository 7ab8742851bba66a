// POST /v1/sessions/:id/cancel (what `troupe cancel` sends) cancels a prompt the daemon has taken
// even while no process of the session runs it yet: a prompt that wakes an idle-stopped session waits
// for the new process, and a cancel meanwhile must reach that process behind it, as ACP's
// session/cancel does (spec/daemon.md §Relay), not be answered `cancelled: false` and dropped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { daemonWithSession, waitFor } from '../../support/daemon.js';

const script = { replies: [{ when: 'ping', items: [{ text: 'pong' }] }] };

test('a cancel while a prompt waits for its idle-stopped session to wake cancels that prompt', async (t) => {
  const { d, c, sessionId } = await daemonWithSession(t, 'http', { script, args: ['--pool', '0', '--idle-ms', '300'] });
  const child = async () => (await d.api('GET', `/v1/sessions/${sessionId}`)).json.child;
  await waitFor('the idle stop', async () => (await child())?.state === 'idleStopped');
  // The spawner held stopped: the wake waits for a process, with the prompt queued for it.
  const spawner = d.spawnerPid()!;
  process.kill(spawner, 'SIGSTOP');
  let prompt: Promise<unknown>;
  let cancel: { status: number; json: any };
  try {
    prompt = c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'ping' }] }).then((r) => r.stopReason, (e) => e);
    // Answered once the daemon took the prompt (a connection's messages are taken in order).
    await c.agent.request('session/list', {});
    await waitFor('the wake to wait for a process', async () => (await child())?.state === 'spawning');
    cancel = await d.api('POST', `/v1/sessions/${sessionId}/cancel`);
  } finally {
    process.kill(spawner, 'SIGCONT');
  }
  assert.deepEqual([cancel.status, cancel.json], [200, { sessionId, cancelled: true }], 'the waiting prompt is the turn cancelled');
  assert.equal(await prompt, 'cancelled', 'the prompt did not run to its end');
  assert.deepEqual((await d.api('POST', `/v1/sessions/${sessionId}/cancel`)).json, { sessionId, cancelled: false }, 'nothing left to cancel');
});
