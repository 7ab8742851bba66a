// A prompt's content through troupe serve, as the clients attached to its session see it.
// - A prompt of several blocks makes several updates with one seq: the relay sent only the first of
//   them, live and in a load's replay, until it told them apart (UpdateFanOut). A client
//   that joins between two of them is sent none of the rest.
// - A pasted screenshot: a prompt of 3 MiB, over the log's 1 MiB event limit, sent by an SDK client
//   over WebSocket. Its session's child logs it in parts (spec/event-log.md §5.1) and shows it whole:
//   to a second client attached over HTTP, live, and to a third client's session/load, before its
//   response. The daemon relays those multi-megabyte lines like any other.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { daemonWithClients, tempDir, waitFor } from '../../support/daemon.js';

test('a 3 MiB image prompt through the daemon is answered, shown live to every attached client, and replayed whole', { timeout: 60_000 }, async (t) => {
  const { d, a: http, b: ws } = await daemonWithClients(t, { script: { replies: [{ when: 'screenshot', items: [{ text: 'I see it.' }] }] } });
  const cwd = tempDir();
  const data = randomBytes(2_400_000).toString('base64');
  const sessionId = (await ws.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
  await http.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  const child = async () => (await d.api('GET', `/v1/sessions/${sessionId}`)).json.child as { pid: number; restarts: number };
  const before = await child();

  const prompt = [
    { type: 'text', text: 'what is in this screenshot?' },
    { type: 'image', mimeType: 'image/png', data },
  ];
  const res: any = await ws.agent.request('session/prompt', { sessionId, prompt } as never);
  assert.equal(res.stopReason, 'end_turn');
  const after = await child();
  assert.deepEqual([after.pid, after.restarts], [before.pid, 0], 'served by the same child, never restarted');

  const shown = (updates: any[]) =>
    updates.filter((u) => u.sessionUpdate === 'user_message_chunk').map((u) => (u.content.type === 'image' ? [u.content.mimeType, u.content.data.length, u.content.data === data] : u.content.text));
  const whole = ['what is in this screenshot?', ['image/png', data.length, true]];
  // The attached client sees the prompt as the live update of its turn, before the answer's text
  // (on its own stream, which the answer on the prompting client's connection may overtake).
  const attached = await waitFor('the attached client to see the turn', () => {
    const seen = http.updatesFor(sessionId);
    return seen.some((u) => u.sessionUpdate === 'agent_message_chunk') && seen;
  });
  assert.deepEqual(shown(attached), whole);
  assert.deepEqual(shown(ws.updatesFor(sessionId)), [], 'the prompting client is not sent its prompt back');
  const imageAt = attached.findIndex((u) => u.content?.type === 'image');
  assert.ok(imageAt < attached.findIndex((u) => u.sessionUpdate === 'agent_message_chunk'));

  // A third client loads the session: the replay shows the prompt whole, before the load's response.
  const late = d.connect('http');
  t.after(() => late.close());
  await late.init();
  await late.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  assert.deepEqual(shown(late.updatesFor(sessionId)), whole);
  assert.equal(late.updatesFor(sessionId, 'agent_message_chunk').map((u) => u.content.text).join(''), 'I see it.');
});

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
  await waitFor('the attached client to see the answer', () => ws.updatesFor(sessionId, 'agent_message_chunk').length > 0);
  const seq = blocks(ws)[0]?.[2];
  const whole = [
    ['text', 'look at these', seq],
    ['resource_link', 'file:///a.txt', seq],
    ['resource', 'embedded', seq],
    ['text', 'and tell me', seq],
  ];
  assert.deepEqual(blocks(ws), whole, 'the attached client');
  assert.deepEqual(blocks(http), [], 'the prompting client is not sent its prompt back');

  const late = d.connect('ws');
  t.after(() => late.close());
  await late.init();
  await late.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  assert.deepEqual(blocks(late), whole, 'a new connection loading it');

  // The attached client loads again: its replay repeats the history, the prompt's blocks once each;
  // the prompting client's shows them too.
  const before = ws.updatesFor(sessionId, 'user_message_chunk').length;
  await ws.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  assert.deepEqual(blocks(ws).slice(before), whole, 'the replay on a connection that saw it live');
  await http.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  assert.deepEqual(blocks(http), whole, 'the replay on the connection that sent it');
});

test('a client that joins a session between two updates of one event is sent the next event, not the rest of that one', { timeout: 60_000 }, async (t) => {
  const { d, a: http, b: ws } = await daemonWithClients(t, { script: { replies: [{ when: 'screenshot', items: [{ text: 'I see it.' }] }] } });
  const cwd = tempDir();
  const sessionId = (await ws.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
  // A third client watches the session (the prompting one is not sent its prompt).
  const watcher = d.connect('ws');
  t.after(() => watcher.close());
  await watcher.init();
  await watcher.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  // The image's line (12 MB) takes the daemon many reads: the prompt's first block is relayed to the
  // watcher well before it. The other client joins (its first message for the session) as soon as
  // that first block is seen.
  const data = randomBytes(9_000_000).toString('base64');
  const prompt = [
    { type: 'text', text: 'a screenshot' },
    { type: 'image', mimeType: 'image/png', data },
  ];
  const answered = ws.agent.request('session/prompt', { sessionId, prompt } as never);
  await waitFor('the first block', () => watcher.updatesFor(sessionId, 'user_message_chunk').length > 0, 30_000);
  await http.agent.request('_troupe/session_state' as never, { sessionId } as never);
  assert.equal(((await answered) as any).stopReason, 'end_turn');
  await waitFor('the answer on the joined client', () => http.updatesFor(sessionId, 'agent_message_chunk').length > 0);
  // The joined client has the prompt whole or not at all: never the image alone.
  const blocks = http.updatesFor(sessionId, 'user_message_chunk').map((u) => u.content.type);
  assert.ok(blocks.length === 0 || blocks.join() === 'text,image', `the joined client got ${blocks.join() || 'nothing'} of the prompt`);
  assert.equal(http.updatesFor(sessionId, 'agent_message_chunk').map((u) => u.content.text).join(''), 'I see it.');
});

test('each client is sent the prompts of the others, not its own, also when a prompt is queued behind another client’s turn', async (t) => {
  const { d, a: http, b: ws } = await daemonWithClients(t, { script: { replies: [[{ delay_ms: 300 }, { text: 'one' }], [{ text: 'two' }]] } });
  const cwd = tempDir();
  const sessionId = (await http.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
  await ws.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  const watcher = d.connect('http');
  t.after(() => watcher.close());
  await watcher.init();
  await watcher.agent.request('session/load', { sessionId, cwd, mcpServers: [] });

  const first = http.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'first, over HTTP' }] } as never);
  await waitFor('the first turn to start', () => ws.updatesFor(sessionId, 'user_message_chunk').length > 0);
  const second = ws.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'second, over WebSocket' }] } as never);
  assert.deepEqual([((await first) as any).stopReason, ((await second) as any).stopReason], ['end_turn', 'end_turn']);
  await waitFor('every client to see the second answer', () =>
    [http, ws, watcher].every((c) => c.updatesFor(sessionId, 'agent_message_chunk').some((u) => u.content.text === 'two')),
  );

  const prompts = (c: typeof http) => c.updatesFor(sessionId, 'user_message_chunk').map((u) => u.content.text);
  assert.deepEqual(prompts(http), ['second, over WebSocket']);
  assert.deepEqual(prompts(ws), ['first, over HTTP']);
  assert.deepEqual(prompts(watcher), ['first, over HTTP', 'second, over WebSocket']);
  // The daemon's own mark of who prompted never reaches a client.
  for (const c of [http, ws, watcher]) {
    for (const u of c.updatesFor(sessionId)) assert.deepEqual(Object.keys(u._meta?.troupe ?? {}).filter((k) => k !== 'seq' && k !== 'turnId'), []);
    const seqs = c.seqs(sessionId);
    assert.deepEqual(seqs, [...seqs].sort((x, y) => x - y), 'in order');
  }
  // Each prompt's echo has the seq of its user_message, as a load shows it.
  const late = d.connect('ws');
  t.after(() => late.close());
  await late.init();
  await late.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  const seqOf = (c: typeof http, text: string) => c.updatesFor(sessionId, 'user_message_chunk').find((u) => u.content.text === text)?._meta.troupe.seq;
  assert.equal(seqOf(watcher, 'first, over HTTP'), seqOf(late, 'first, over HTTP'));
  assert.equal(seqOf(http, 'second, over WebSocket'), seqOf(late, 'second, over WebSocket'));
  assert.ok(seqOf(late, 'second, over WebSocket')! > 0);
});
