// A prompt's content through troupe serve, as the clients attached to its session see it.
// - A prompt of several blocks makes several updates with one seq: the relay sent only the first of
//   them, live and in a load's replay, until it told them apart (RelaySession.place).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { daemonWithClients, tempDir, waitFor } from '../../support/daemon.js';

test('a prompt of several blocks is shown whole to every client: live, in a load on a new connection, and in a load on a connection that saw it live', async (t) => {
  const { d, a: http, b: ws } = await daemonWithClients(t, { script: { replies: [{ when: 'look', items: [{ text: 'Looked.' }] }] } });
  const cwd = tempDir();
  const sessionId = (await http.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
  await ws.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  const prompt = [
    { type: 'text', text: 'look at these' },
    { type: 'resource_link', uri: 'file:///a.txt', name: 'a.txt' },
    { type: 'resource', resource: { uri: 'file:///b.txt', text: 'embedded', mimeType: 'text/plain' } },
    { type: 'text', text: 'and tell me' },
  ];
  assert.equal(((await http.agent.request('session/prompt', { sessionId, prompt } as never)) as any).stopReason, 'end_turn');
  const blocks = (c: typeof http) =>
    c.updatesFor(sessionId, 'user_message_chunk').map((u) => [u.content.type, u.content.text ?? u.content.uri ?? u.content.resource?.text, u._meta.troupe.seq]);
  const seq = blocks(http)[0]?.[2];
  const whole = [
    ['text', 'look at these', seq],
    ['resource_link', 'file:///a.txt', seq],
    ['resource', 'embedded', seq],
    ['text', 'and tell me', seq],
  ];
  assert.deepEqual(blocks(http), whole, 'the prompting client');
  await waitFor('the attached client to see the answer', () => ws.updatesFor(sessionId, 'agent_message_chunk').length > 0);
  assert.deepEqual(blocks(ws), whole, 'the attached client');

  const late = d.connect('ws');
  t.after(() => late.close());
  await late.init();
  await late.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  assert.deepEqual(blocks(late), whole, 'a new connection loading it');

  // The prompting client loads again: its replay repeats the history, the prompt's blocks once each.
  const before = http.updatesFor(sessionId, 'user_message_chunk').length;
  await http.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  assert.deepEqual(blocks(http).slice(before), whole, 'the replay on a connection that saw it live');
});
