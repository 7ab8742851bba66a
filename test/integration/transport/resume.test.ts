// SSE event ids, Last-Event-ID resume within retention, the explicit _troupe/replay_gap beyond it,
// and keep-alive comments (raw fetch + SSE parsing, since the SDK client has no resume).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { delay, rawInitialize, rawPost, SseReader, startHarness, until, type Harness, type SseEvent } from '../../support/transport/harness.js';

const promptMsg = (id: number, sessionId: string) => ({ jsonrpc: '2.0', id, method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: 'go' }] } });

/** `sessionId`'s stream of connection `conn` opened, a prompt (request `id`) posted to it, and the stream's first `n` events. */
async function promptedStream(h: Harness, conn: string, sessionId: string, id: number, n: number): Promise<{ stream: SseReader; events: SseEvent[] }> {
  const stream = await SseReader.open(h, conn, { sessionId });
  await rawPost(h, conn, promptMsg(id, sessionId), sessionId);
  return { stream, events: await stream.waitFor(n) };
}

describe('Last-Event-ID resume', { timeout: 20_000 }, () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ agent: { promptUpdates: 5 }, acp: { keepAliveMs: 40 } });
  });
  after(() => h.close());

  test('a session stream numbers its events 1, 2, 3, ...', async () => {
    const conn = await rawInitialize(h);
    const { stream: s, events } = await promptedStream(h, conn, 'ses_ids', 1, 6);
    assert.deepEqual(events.map((e) => e.id), ['1', '2', '3', '4', '5', '6']);
    assert.deepEqual(events[5]!.json['result'], { stopReason: 'end_turn' });
    s.close();
  });

  test('reconnecting with Last-Event-ID gets exactly the missed messages, in order', async () => {
    const conn = await rawInitialize(h);
    const { stream: first, events: seen } = await promptedStream(h, conn, 'ses_r', 1, 6);
    const original = seen.map((e) => e.data);
    first.close();
    // While no one listens, a second turn produces six more events (ids 7..12).
    assert.equal((await rawPost(h, conn, promptMsg(2, 'ses_r'), 'ses_r')).status, 202);
    await until(() => h.agent.connection(conn).received.length === 2, 'second prompt delivered');
    // The client had really processed only up to id 3 before its stream broke.
    const resumed = await SseReader.open(h, conn, { sessionId: 'ses_r', lastEventId: '3' });
    const got = await resumed.waitFor(9);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(resumed.events.length, 9, 'nothing beyond the missed messages');
    assert.deepEqual(got.map((e) => e.id), ['4', '5', '6', '7', '8', '9', '10', '11', '12']);
    assert.deepEqual(got.slice(0, 3).map((e) => e.data), original.slice(3));
    assert.deepEqual(got[8]!.json, { jsonrpc: '2.0', id: 2, result: { stopReason: 'end_turn' } });
    assert.equal(got.some((e) => e.json['method'] === '_troupe/replay_gap'), false);
    resumed.close();
  });

  test('the connection stream resumes too, and Last-Event-ID at the head replays nothing', async () => {
    const conn = await rawInitialize(h);
    const a = await SseReader.open(h, conn);
    await rawPost(h, conn, { jsonrpc: '2.0', id: 1, method: 'session/new', params: { cwd: '/tmp', mcpServers: [] } });
    await rawPost(h, conn, { jsonrpc: '2.0', id: 2, method: 'session/new', params: { cwd: '/tmp', mcpServers: [] } });
    await a.waitFor(2);
    a.close();
    const b = await SseReader.open(h, conn, { lastEventId: '1' });
    const [ev] = await b.waitFor(1);
    assert.equal(ev!.id, '2');
    assert.equal(ev!.json['id'], 2);
    b.close();
    const c = await SseReader.open(h, conn, { lastEventId: '2' });
    await rawPost(h, conn, { jsonrpc: '2.0', id: 3, method: 'session/new', params: { cwd: '/tmp', mcpServers: [] } });
    const [next] = await c.waitFor(1);
    assert.equal(next!.id, '3', 'no replay: the first event is the new one');
    c.close();
  });

  test('a session stream made again after its session was released numbers on: an id kept from the dropped stream is a gap, never a resume mid-stream', async () => {
    const conn = await rawInitialize(h);
    const { stream: a, events: firstTurn } = await promptedStream(h, conn, 'ses_again', 1, 6);
    assert.deepEqual(firstTurn.map((e) => e.id), ['1', '2', '3', '4', '5', '6']);
    a.close();
    // The session is closed (the relay releases its stream): with no receiver and nothing waiting,
    // the stream goes.
    assert.equal((await rawPost(h, conn, { jsonrpc: '2.0', id: 2, method: '_test/release', params: { release: 'ses_again' } })).status, 202);
    await until(() => h.acp.connections().find((c) => c.id === conn)?.sessionStreams === 0, 'the dropped session stream');
    // Loaded again: a new stream of the session, numbered after the dropped one.
    const { stream: b, events: secondTurn } = await promptedStream(h, conn, 'ses_again', 3, 6);
    assert.deepEqual(secondTurn.map((e) => e.id), ['7', '8', '9', '10', '11', '12']);
    b.close();
    // A client that kept id 3 of the dropped stream (it had not processed 4..6) is told of the gap.
    // Numbered from 1 again, the new stream took 3 for its own and sent 4..6 of the new turn as the rest.
    const c = await SseReader.open(h, conn, { sessionId: 'ses_again', lastEventId: '3' });
    const [gap] = await c.waitFor(1);
    assert.deepEqual(gap!.json, { jsonrpc: '2.0', method: '_troupe/replay_gap', params: { sessionId: 'ses_again', lastEventId: 3, firstAvailableId: 7 } });
    c.close();
  });

  test('a released session stream goes once its receiver leaves with its last answer taken (the relay answers session/close on that stream, then releases it)', async () => {
    const conn = await rawInitialize(h);
    const a = await SseReader.open(h, conn, { sessionId: 'ses_closed' });
    const close = { jsonrpc: '2.0', id: 1, method: '_test/release', params: { sessionId: 'ses_closed', release: 'ses_closed', answerFirst: true } };
    assert.equal((await rawPost(h, conn, close, 'ses_closed')).status, 202);
    const [answer] = await a.waitFor(1);
    assert.deepEqual(answer!.json, { jsonrpc: '2.0', id: 1, result: {} });
    a.close();
    // Kept, every closed session's stream would count against maxSessionStreams for the connection's
    // life: an editor's one long-lived connection could open no more than 1024 sessions.
    await until(() => h.acp.connections().find((c) => c.id === conn)?.sessionStreams === 0, 'the released session stream dropped');
  });

  test('a released session stream that takes output again is kept: the session was opened again', async () => {
    const conn = await rawInitialize(h);
    const a = await SseReader.open(h, conn, { sessionId: 'ses_reopened' });
    const close = { jsonrpc: '2.0', id: 1, method: '_test/release', params: { sessionId: 'ses_reopened', release: 'ses_reopened', answerFirst: true } };
    assert.equal((await rawPost(h, conn, close, 'ses_reopened')).status, 202);
    await rawPost(h, conn, promptMsg(2, 'ses_reopened'), 'ses_reopened');
    assert.deepEqual((await a.waitFor(7)).map((e) => e.id), ['1', '2', '3', '4', '5', '6', '7']);
    a.close();
    // Once the server has seen the first receiver go (until then the stream is taken: 409), the
    // stream is still there, its new output kept for resume, as before a release: dropped, a new
    // stream would answer this Last-Event-ID with a replay gap.
    let b: SseReader | undefined;
    while (!b) b = await SseReader.open(h, conn, { sessionId: 'ses_reopened', lastEventId: '5' }).catch(async (err: Error) => (assert.match(err.message, /409/), await delay(10), undefined));
    assert.deepEqual((await b.waitFor(2)).map((e) => e.id), ['6', '7']);
    assert.equal(h.acp.connections().find((c) => c.id === conn)?.sessionStreams, 1);
    b.close();
  });

  test('an idle stream gets keep-alive comments', async () => {
    const conn = await rawInitialize(h);
    const s = await SseReader.open(h, conn);
    await s.waitUntil(() => s.comments >= 3);
    assert.equal(s.events.length, 0);
    s.close();
  });
});

describe('replay gap', { timeout: 20_000 }, () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ agent: { promptUpdates: 19 }, acp: { retainEvents: 5 } });
  });
  after(() => h.close());

  test('beyond retention the stream first says _troupe/replay_gap, then sends what it still has', async () => {
    const conn = await rawInitialize(h);
    const { stream: first } = await promptedStream(h, conn, 'ses_g', 1, 20);
    first.close();
    const again = await SseReader.open(h, conn, { sessionId: 'ses_g', lastEventId: '2' });
    const got = await again.waitFor(6);
    const gap = got[0]!;
    assert.equal(gap.id, undefined, 'the notice carries no id, so the client keeps its own Last-Event-ID');
    assert.deepEqual(gap.json, { jsonrpc: '2.0', method: '_troupe/replay_gap', params: { sessionId: 'ses_g', lastEventId: 2, firstAvailableId: 16 } });
    assert.deepEqual(got.slice(1).map((e) => e.id), ['16', '17', '18', '19', '20']);
    again.close();
  });

  test('the connection stream reports a gap without a sessionId; a nonsense id is a gap too', async () => {
    const conn = await rawInitialize(h);
    const s = await SseReader.open(h, conn);
    for (let i = 1; i <= 8; i++) await rawPost(h, conn, { jsonrpc: '2.0', id: i, method: 'session/new', params: { cwd: '/tmp', mcpServers: [] } });
    await s.waitFor(8);
    s.close();
    const r = await SseReader.open(h, conn, { lastEventId: '1' });
    const [gap] = await r.waitFor(1);
    assert.deepEqual(gap!.json['params'], { lastEventId: 1, firstAvailableId: 4 });
    r.close();
    const bogus = await SseReader.open(h, conn, { lastEventId: '999' });
    const [g2] = await bogus.waitFor(1);
    assert.equal(g2!.json['method'], '_troupe/replay_gap');
    assert.deepEqual(g2!.json['params'], { lastEventId: 999, firstAvailableId: 4 });
    bogus.close();
  });
});

describe('Last-Event-ID takes a stream over', { timeout: 20_000 }, () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ agent: { promptUpdates: 5 }, acp: { idleTimeoutMs: 300 } });
  });
  after(() => h.close());

  test('a GET with Last-Event-ID resumes a stream whose receiver the server still holds: that one is closed; without it, 409 as before', async () => {
    const conn = await rawInitialize(h);
    // The first receiver stays open on the server's side, as a stream lost on the way (a network
    // change) does until TCP gives up on it, some 15 minutes.
    const { stream: lost } = await promptedStream(h, conn, 'ses_t', 1, 6);
    await assert.rejects(SseReader.open(h, conn, { sessionId: 'ses_t' }), /409/, 'a second receiver without Last-Event-ID is refused, as the SDK refuses it');
    const resumed = await SseReader.open(h, conn, { sessionId: 'ses_t', lastEventId: '3' });
    assert.deepEqual((await resumed.waitFor(3)).map((e) => e.id), ['4', '5', '6']);
    await lost.waitEnd();
    assert.equal(lost.ended, true, 'the receiver taken over is closed');
    // The stream goes on with its new receiver.
    await rawPost(h, conn, promptMsg(2, 'ses_t'), 'ses_t');
    // It was sent 4–6 from the cursor, then this prompt's six.
    assert.deepEqual((await resumed.waitFor(9)).slice(3).map((e) => e.id), ['7', '8', '9', '10', '11', '12']);
    assert.equal(lost.events.length, 6, 'nothing more went to the closed receiver');
    // The receiver taken over holds nothing of the connection: with the new one gone too, it is idle
    // and reaped (idleTimeoutMs), as any connection with no stream and no request.
    resumed.close();
    await until(() => !h.acp.connections().some((c) => c.id === conn), 'the idle connection reaped', 10_000);
  });
});
