// Additional directories through `troupe serve`: the daemon advertises them, session/list (answered
// by the daemon from its index) reports them, and a child the daemon starts again on its own (after
// an idle stop, after a crash) keeps the session's list: no client asked to change it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Daemon, processAlive, tempDir, waitFor } from '../../support/daemon.js';

async function childOf(d: Daemon, sessionId: string): Promise<{ pid: number; state: string; restarts: number }> {
  return (await d.api('GET', `/v1/sessions/${sessionId}`)).json.child;
}

test('the daemon reports a session additional directories, and keeps them when it starts its child again', async (t) => {
  const extra = realpathSync(tempDir());
  writeFileSync(join(extra, 'notes.txt'), 'kept\n');
  const script = {
    replies: [{ when: 'read notes', items: [{ tool_call: { name: 'read_file', input: { path: join(extra, 'notes.txt') } } }] }, ...Array.from({ length: 10 }, () => [{ text: 'read' }])],
  };
  const d = await Daemon.start({ script, args: ['--idle-ms', '300'] });
  t.after(() => d.stop());
  const c = d.connect('http');
  t.after(() => c.close());
  const init = (await c.agent.request('initialize', { protocolVersion: 1, clientCapabilities: {} })) as { agentCapabilities: { sessionCapabilities: Record<string, unknown> } };
  assert.deepEqual(init.agentCapabilities.sessionCapabilities.additionalDirectories, {});
  const cwd = realpathSync(tempDir());
  const sessionId = (await c.agent.request('session/new', { cwd, additionalDirectories: [extra], mcpServers: [] })).sessionId;

  const readsNotes = async () => {
    const before = c.updatesFor(sessionId, 'tool_call_update').length;
    assert.equal((await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'read notes' }] })).stopReason, 'end_turn');
    const last = c.updatesFor(sessionId, 'tool_call_update').slice(before).at(-1);
    return last.status === 'completed' ? 'completed' : String(last.rawOutput?.errorCode);
  };
  assert.equal(await readsNotes(), 'completed');
  const listed = async () => (await c.agent.request('session/list', { cwd })).sessions.find((s) => s.sessionId === sessionId);
  assert.deepEqual((await listed())?.additionalDirectories, [extra]);
  assert.deepEqual((await d.api('GET', `/v1/sessions/${sessionId}`)).json.additionalDirectories, [extra]);

  // Stopped idle, then started again by the next prompt.
  const idle = (await childOf(d, sessionId)).pid;
  await waitFor('idle stop', async () => (await childOf(d, sessionId)).state === 'idleStopped');
  await waitFor('the idle process to exit', () => !processAlive(idle));
  assert.equal(await readsNotes(), 'completed');

  // Killed, then restarted by the supervisor.
  const crashed = (await childOf(d, sessionId)).pid;
  process.kill(crashed, 'SIGKILL');
  await waitFor('the restarted child', async () => {
    const child = await childOf(d, sessionId);
    return child.pid !== crashed && child.state !== 'crashed' && child.state !== 'backoff' && child.state !== 'restarting' && child.state !== 'idleStopped';
  });
  assert.equal(await readsNotes(), 'completed');
  assert.deepEqual((await listed())?.additionalDirectories, [extra]);
});
