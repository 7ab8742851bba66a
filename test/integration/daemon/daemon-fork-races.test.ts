// A fork through the daemon, used at once. The source session's child makes the fork and then
// unloads it; the index learns of it from that child's control channel, which may lag the fork's
// answer. A prompt sent as soon as the answer came was answered session_not_found, and a delete was
// refused session_locked (the source's child still held the log) or succeeded without deleting
// anything (the index did not know the fork yet). Found with a random request mix against a daemon.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { daemonWithClients, tempDir } from '../../support/daemon.js';

const ROUNDS = 15;

test('a fork is usable at once: a prompt sent on its answer is served, a delete deletes it', { timeout: 120_000 }, async (t) => {
  const { b: ws } = await daemonWithClients(t, { script: { replies: [{ when: 'hi', items: [{ text: 'hello' }] }, ...Array.from({ length: 2 * ROUNDS }, () => [{ text: 'again' }])] } });
  const cwd = tempDir();
  const source = (await ws.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
  await ws.agent.request('session/prompt', { sessionId: source, prompt: [{ type: 'text', text: 'hi' }] });
  for (let round = 0; round < ROUNDS; round++) {
    const prompted = ((await ws.agent.request('session/fork', { sessionId: source, cwd, mcpServers: [] })) as { sessionId: string }).sessionId;
    const answer: any = await ws.agent.request('session/prompt', { sessionId: prompted, prompt: [{ type: 'text', text: 'go on' }] }).catch((e: any) => e);
    assert.equal(answer?.stopReason, 'end_turn', `round ${round}: ${JSON.stringify(answer)}`);

    const deleted = ((await ws.agent.request('session/fork', { sessionId: source, cwd, mcpServers: [] })) as { sessionId: string }).sessionId;
    const del = await ws.agent.request('session/delete', { sessionId: deleted }).catch((e: any) => e);
    assert.deepEqual(del, {}, `round ${round}: ${JSON.stringify(del)}`);
    const load: any = await ws.agent.request('session/load', { sessionId: deleted, cwd, mcpServers: [] }).catch((e) => e);
    assert.equal(load?.data?.code, 'session_not_found', `round ${round}: the deleted fork is gone (${JSON.stringify(load)})`);
  }
  const listed = (await ws.agent.request('session/list', {})).sessions.map((s: { sessionId: string }) => s.sessionId);
  assert.equal(listed.length, 1 + ROUNDS, 'the source and the prompted forks, not the deleted ones');
});
