// The daemon through the SDK's own HTTP and WebSocket clients, unchanged: sessions on one and on
// separate connections, permissions, cancel, queue and steer, and session/load after a reconnect.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Daemon, daemonWithSession, tempDir, waitFor } from '../../support/daemon.js';

/** The session's events from its log (the management SSE), up to the first of type `until`. */
async function readEvents(d: Daemon, sessionId: string, until: string): Promise<any[]> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), 10_000);
  const res = await fetch(`${d.url}/v1/sessions/${sessionId}/events?after=0`, { headers: d.headers, signal: abort.signal });
  const events: any[] = [];
  let buf = '';
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buf += Buffer.from(chunk).toString('utf8');
      for (const line of buf.split('\n').slice(0, -1)) if (line.startsWith('data: ')) events.push(JSON.parse(line.slice(6)));
      buf = buf.slice(buf.lastIndexOf('\n') + 1);
      if (events.some((e) => e.type === until)) break;
    }
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
  return events;
}

const script = {
  replies: [
    // Long enough that a loaded machine has read the turn's id and steered it before the step ends.
    { when: 'slow', items: [{ text: 'slow start ' }, { delay_ms: 2000 }, { tool_call: { name: 'list_dir', input: {} } }] },
    { when: 'hang', items: [{ text: 'hanging' }, { hang: true }] },
    { when: 'write', items: [{ tool_call: { name: 'write_file', input: { path: 'w.txt', content: 'x' } } }] },
    { when: 'hello', items: [{ text: 'hello back' }] },
    { when: 'wrote', items: [{ text: 'written' }] },
    [{ text: 'after tools' }],
    [{ text: 'after tools again' }],
    [{ text: 'after tools thrice' }],
  ],
};


for (const transport of ['http', 'ws'] as const) {
  test(`${transport}: two sessions on one connection, one on another; permission round trip`, async (t) => {
    const d = await Daemon.start({ script });
    t.after(() => d.stop());
    const a = d.connect(transport);
    const b = d.connect(transport);
    t.after(() => (a.close(), b.close()));
    await a.init();
    await b.init();
    const cwd = tempDir();
    const s1 = (await a.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
    const s2 = (await a.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
    const s3 = (await b.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
    assert.equal(new Set([s1, s2, s3]).size, 3);
    const [r1, r2, r3] = await Promise.all([
      a.agent.request('session/prompt', { sessionId: s1, prompt: [{ type: 'text', text: 'hello' }] }),
      a.agent.request('session/prompt', { sessionId: s2, prompt: [{ type: 'text', text: 'please write' }] }),
      b.agent.request('session/prompt', { sessionId: s3, prompt: [{ type: 'text', text: 'hello' }] }),
    ]);
    assert.deepEqual([r1.stopReason, r2.stopReason, r3.stopReason], ['end_turn', 'end_turn', 'end_turn']);
    assert.equal(a.permissions.length, 1, 'the permission prompt went to the prompting connection');
    assert.equal(a.permissions[0]!.sessionId, s2);
    assert.equal(b.permissions.length, 0);
    assert.ok(a.updatesFor(s1, 'agent_message_chunk').some((u) => u.content.text === 'hello back'));
    assert.equal(b.updatesFor(s1).length, 0, 'no cross-talk between connections');
    // Three sessions, three children.
    const sessions = (await d.api('GET', '/v1/sessions')).json.sessions;
    assert.equal(new Set(sessions.map((s: any) => s.child?.pid)).size, 3);
  });

  test(`${transport}: a client that leaves while the child asks it for permission does not leave the turn waiting for it`, async (t) => {
    const d = await Daemon.start({ script });
    t.after(() => d.stop());
    // This client is asked and never answers: it goes away instead.
    const a = d.connect(transport, { permission: () => new Promise(() => undefined) });
    await a.init();
    const sessionId = (await a.agent.request('session/new', { cwd: tempDir(), mcpServers: [] })).sessionId;
    void a.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'please write' }] }).catch(() => undefined);
    await a.until(() => a.permissions.length === 1, 'the permission request');
    a.close();
    // The child's request is answered for the client that is gone (denied), and the turn goes on to its end
    // instead of waiting out the permission timeout (5 minutes).
    const detail = await waitFor('the turn ended', async () => {
      const json = (await d.api('GET', `/v1/sessions/${sessionId}`)).json;
      return json.machines?.session === 'idle' && !json.turnId ? json : undefined;
    }, 10_000);
    assert.equal(detail.turnId, undefined);
    const events = await readEvents(d, sessionId, 'turn_completed');
    assert.ok(events.some((e) => e.type === 'tool_call_updated' && e.status === 'failed'), 'the tool call was not run');
  });

  test(`${transport}: cancel, queue and steer`, async (t) => {
    const { c, sessionId } = await daemonWithSession(t, transport, { script });
    const hanging = c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hang' }] });
    const queued = c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello' }] });
    await c.until(() => c.updatesFor(sessionId, 'agent_message_chunk').length > 0, 'first chunk');
    await c.agent.notify('session/cancel', { sessionId });
    assert.equal((await hanging).stopReason, 'cancelled');
    assert.equal((await queued).stopReason, 'cancelled', 'cancel drops the queue too');
    const slow = c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'slow' }] });
    await c.until(() => c.updatesFor(sessionId, 'agent_message_chunk').some((u) => u.content.text === 'slow start '), 'slow turn');
    const state: any = await c.agent.request('_troupe/session_state', { sessionId });
    const steer: any = await c.agent.request('_troupe/steer', { sessionId, expectedTurnId: state.turnId, prompt: [{ type: 'text', text: 'steer me' }] });
    assert.match(steer.steerId, /^steer_/);
    assert.equal((await slow).stopReason, 'end_turn');
    await assert.rejects(
      c.agent.request('_troupe/steer', { sessionId, expectedTurnId: state.turnId, prompt: [{ type: 'text', text: 'late' }] }),
      (e: any) => e.data?.code === 'no_active_turn',
    );
  });

  test(`${transport}: $/cancel_request of one prompt reaches its child, which answers it cancelled; the next prompt runs`, async (t) => {
    const { c, sessionId } = await daemonWithSession(t, transport, { script });
    const withdrawn = new AbortController();
    const hanging = c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hang' }] }, { cancellationSignal: withdrawn.signal });
    const queued = c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello' }] });
    await c.until(() => c.updatesFor(sessionId, 'agent_message_chunk').length > 0, 'first chunk');
    withdrawn.abort();
    assert.equal((await hanging).stopReason, 'cancelled');
    assert.equal((await queued).stopReason, 'end_turn', 'only the withdrawn prompt was cancelled');
  });

  test(`${transport}: session/load after a reconnect replays everything before its response`, async (t) => {
    const d = await Daemon.start({ script });
    t.after(() => d.stop());
    const cwd = tempDir();
    const first = d.connect(transport);
    await first.init();
    const sessionId = (await first.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
    for (const text of ['hello', 'hello', 'hello']) await first.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text }] });
    const seen = first.seqs(sessionId);
    first.close();
    const second = d.connect(transport);
    t.after(() => second.close());
    await second.init();
    let atResponse = -1;
    await second.agent.request('session/load', { sessionId, cwd, mcpServers: [] }).then(() => (atResponse = second.seqs(sessionId).length));
    // What the first client saw, and the prompts it sent, which it was not sent back.
    const prompts = second.updatesFor(sessionId, 'user_message_chunk').map((u) => u._meta.troupe.seq);
    assert.equal(prompts.length, 3);
    assert.deepEqual(second.seqs(sessionId), [...seen, ...prompts].sort((x, y) => x - y), 'the same updates, in the same order, and the prompts');
    assert.equal(atResponse, second.seqs(sessionId).length, 'every replayed update arrived before the load response');
    assert.equal((await second.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello' }] })).stopReason, 'end_turn');
  });
}

test('session/load while another client\'s turn streams replays the whole history to the loading client, then the rest of the turn, each update once', async (t) => {
  const d = await Daemon.start({
    script: {
      replies: [
        { when: 'first', items: Array.from({ length: 1500 }, (_, i) => ({ text: `a${i} ` })) },
        { when: 'more', items: Array.from({ length: 1500 }, (_, i) => ({ text: `b${i} ` })) },
      ],
    },
  });
  t.after(() => d.stop());
  const a = d.connect('ws');
  t.after(() => a.close());
  await a.init();
  const cwd = tempDir();
  const sessionId = (await a.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
  await a.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'first' }] });
  const history = Array.from({ length: 1500 }, (_, i) => `a${i} `);
  // The replay (more than one page of the log) and the live turn's updates reach the daemon mixed;
  // a few rounds, since how they mix depends on timing.
  for (const transport of ['ws', 'http', 'ws', 'http'] as const) {
    const b = d.connect(transport);
    await b.init();
    const before = a.updatesFor(sessionId, 'agent_message_chunk').length;
    const more = a.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'more' }] });
    await a.until(() => a.updatesFor(sessionId, 'agent_message_chunk').length > before + 20, 'the live turn streaming');
    await b.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
    const replayed = b.updatesFor(sessionId, 'agent_message_chunk').map((u) => u.content.text).filter((x: string) => x.startsWith('a'));
    assert.deepEqual(replayed, history, `${transport}: the first turn, whole and once, before the load's answer`);
    assert.equal((await more).stopReason, 'end_turn');
    // Then the rest of the running turn, live: all in all the history as a load after it shows it,
    // each update once and in order (before 2026-12-02 the updates sent before the child began its
    // replay came again in it, hundreds on a busy run, ahead of the history they follow).
    const after = d.connect('ws');
    await after.init();
    await after.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
    const whole = after.updatesFor(sessionId).filter((u) => u._meta?.troupe?.seq !== undefined);
    await b.until(() => b.seqs(sessionId).at(-1) === whole.at(-1)._meta.troupe.seq, 'the loading client has the end of the turn');
    assert.deepEqual(b.updatesFor(sessionId).filter((u) => u._meta?.troupe?.seq !== undefined), whole, `${transport}: what the loading client was sent is the history, once and in order`);
    b.close();
    after.close();
  }
  // Two clients loading at once: each gets the history once, not its own replay and the other's.
  const [e, f] = [d.connect('ws'), d.connect('http')];
  t.after(() => (e.close(), f.close()));
  await Promise.all([e.init(), f.init()]);
  await Promise.all([e, f].map((x) => x.agent.request('session/load', { sessionId, cwd, mcpServers: [] })));
  for (const x of [e, f]) {
    assert.deepEqual(x.updatesFor(sessionId, 'agent_message_chunk').map((u) => u.content.text).filter((s: string) => s.startsWith('a')), history);
  }
});

test('a second connection attached to a live session sees its updates but not a replay', async (t) => {
  const d = await Daemon.start({ script });
  t.after(() => d.stop());
  const cwd = tempDir();
  const a = d.connect('http');
  const b = d.connect('ws');
  t.after(() => (a.close(), b.close()));
  await a.init();
  await b.init();
  const sessionId = (await a.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
  await a.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello' }] });
  const before = a.seqs(sessionId).length;
  await b.agent.request('session/resume', { sessionId, cwd });
  assert.deepEqual(b.seqs(sessionId), [], 'resume does not replay');
  await b.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello' }] });
  const newOnA = a.seqs(sessionId).slice(before);
  // b sent the prompt: a is sent it, b is not.
  const prompt = a.updatesFor(sessionId, 'user_message_chunk').map((u) => u._meta.troupe.seq);
  assert.equal(prompt.length, 1);
  assert.deepEqual(b.seqs(sessionId), newOnA.filter((seq) => seq !== prompt[0]), 'both connections see the new turn, exactly once each');
  assert.ok(newOnA.length > 1);
});
