// The inspector's feed of machine transitions over a real HttpServer: ids per transition, resume
// after the last id (Last-Event-ID or ?after), a plain replay_gap when what was missed is gone or
// comes from another daemon run, the session filter, and bad cursors refused.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import net from 'node:net';
import { MachineHub } from '../../../src/daemon/machine-hub.js';
import { TransitionFeed } from '../../../src/daemon/inspector/transition-feed.js';
import { startHarness, TOKEN, type Harness } from '../../support/transport/harness.js';

interface Frame {
  id?: string;
  event?: string;
  data: any;
}

/** Opens the feed; its frames as they come, until the stream ends or the reader stops (and disconnects). */
async function* frames(h: Harness, query: string, headers: Record<string, string> = {}): AsyncGenerator<Frame> {
  const abort = new AbortController();
  const res = await h.fetch(`/v1/inspect/transitions${query}`, { headers: { Accept: 'text/event-stream', ...headers }, signal: abort.signal });
  assert.equal(res.status, 200);
  const decoder = new TextDecoder();
  let buf = '';
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buf += decoder.decode(chunk, { stream: true });
      let sep: number;
      while ((sep = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, sep);
        buf = buf.slice(sep + 2);
        const f: Partial<Frame> = {};
        for (const line of block.split('\n')) {
          if (line.startsWith('id: ')) f.id = line.slice(4);
          else if (line.startsWith('event: ')) f.event = line.slice(7);
          else if (line.startsWith('data: ')) f.data = JSON.parse(line.slice(6));
        }
        if (f.data !== undefined) yield f as Frame;
      }
    }
  } finally {
    abort.abort();
  }
}

/** The next `count` frames of a stream (fewer if it ends first); the stream stays open. */
async function take(stream: AsyncGenerator<Frame>, count: number): Promise<Frame[]> {
  const got: Frame[] = [];
  while (got.length < count) {
    const r = await stream.next();
    if (r.done) break;
    got.push(r.value);
  }
  return got;
}

/** Opens the feed and collects frames until `count` have arrived, then disconnects. */
async function read(h: Harness, query: string, count: number, headers: Record<string, string> = {}): Promise<Frame[]> {
  const stream = frames(h, query, headers);
  try {
    return await take(stream, count);
  } finally {
    await stream.return(undefined);
  }
}

let h: Harness;
const hub = new MachineHub();
let feed: TransitionFeed;
const record = (sessionId: string, state: string) => hub.record(sessionId, { machine: 'session', state, event: `to ${state}`, at: Date.now() });

before(async () => {
  h = await startHarness();
  feed = new TransitionFeed(hub, 5);
  h.server.route('GET', '/v1/inspect/transitions', (req, res) => feed.stream(req, res));
});
after(async () => {
  feed.close();
  await h.close();
});

test('ids count every transition; a reader resumes after the last id it saw', async () => {
  record('s1', 'idle');
  record('s1', 'running');
  record('s2', 'idle');
  const all = await read(h, '', 3);
  assert.deepEqual(all.map((f) => [f.id, f.event, f.data.sessionId, f.data.state]), [
    ['1', 'transition', 's1', 'idle'],
    ['2', 'transition', 's1', 'running'],
    ['3', 'transition', 's2', 'idle'],
  ]);
  assert.deepEqual(Object.keys(all[0]!.data).sort(), ['at', 'event', 'machine', 'n', 'sessionId', 'state']);
  const resumed = read(h, '', 2, { 'Last-Event-ID': '2' });
  // Live transitions follow the backlog on the same stream.
  setTimeout(() => record('s1', 'idle'), 20);
  assert.deepEqual((await resumed).map((f) => f.id), ['3', '4']);
  assert.deepEqual((await read(h, '?after=3', 1)).map((f) => f.id), ['4'], '?after works like Last-Event-ID');
});

test('a cursor older than what is kept, or from another run, starts with replay_gap', async () => {
  for (let i = 0; i < 6; i++) record('s3', i % 2 ? 'running' : 'idle');
  // 10 transitions so far; 5 kept: 6..10.
  const gap = await read(h, '', 6, { 'Last-Event-ID': '2' });
  assert.deepEqual(gap[0], { event: 'replay_gap', data: { code: 'replay_gap', after: 2, resumedFrom: 6 } });
  assert.deepEqual(gap.slice(1).map((f) => f.id), ['6', '7', '8', '9', '10']);
  const fine = await read(h, '', 1, { 'Last-Event-ID': '5' });
  assert.equal(fine[0]!.id, '6', 'the cursor right before the oldest kept one is no gap');
  const other = await read(h, '?after=999', 6);
  assert.deepEqual(other[0]!.data, { code: 'replay_gap', after: 999, resumedFrom: 6 });
  assert.equal(other[1]!.id, '6', 'everything kept follows, as new');
});

test('?session= filters; a malformed cursor is refused before the stream starts', async () => {
  record('s4', 'idle');
  record('s5', 'idle');
  record('s4', 'running');
  const only = await read(h, '?session=s4&after=10', 2);
  assert.deepEqual(only.map((f) => [f.id, f.data.sessionId, f.data.state]), [
    ['11', 's4', 'idle'],
    ['13', 's4', 'running'],
  ]);
  const bad = await h.fetch('/v1/inspect/transitions?after=abc');
  assert.equal(bad.status, 400);
  assert.equal(((await bad.json()) as { error: { code: string } }).error.code, 'invalid_cursor');
  assert.equal((await fetch(`${h.url}/v1/inspect/transitions`)).status, 401, 'no token, no feed');
});

test('a session deleted (forgotten by the hub): its own streams end after what came before, the others go on; its transitions are not replayed any more, and leaving them makes no cursor a gap', { timeout: 30_000 }, async () => {
  // Whatever the tests before left: the numbers here are counted from the hub's.
  const base = hub.lastN;
  for (let i = 0; i < 5; i++) record('s6', i % 2 ? 'running' : 'idle'); // base+1..base+5, all kept
  const own = frames(h, `?session=s6&after=${base + 4}`);
  const all = frames(h, `?after=${base + 4}`);
  // Both streams are open once their backlog came.
  assert.deepEqual((await take(own, 1)).map((f) => f.id), [String(base + 5)]);
  assert.deepEqual((await take(all, 1)).map((f) => f.id), [String(base + 5)]);
  record('s7', 'idle'); // base+6: s6's base+1 dropped (keep 5)
  record('s6', 'closing'); // base+7: base+2 dropped
  hub.forget('s6');
  // Until 2026-12-07 a deleted session's stream stayed open, silent, for as long as its reader kept it.
  assert.deepEqual((await take(own, 10)).map((f) => [f.id, f.data.state]), [[String(base + 7), 'closing']], 'what came before the delete, then the end');
  record('s7', 'running'); // base+8
  assert.deepEqual((await take(all, 3)).map((f) => f.id), [base + 6, base + 7, base + 8].map(String), 'a stream of every session goes on');
  await all.return(undefined);
  // Kept now: s7's two. Until 2026-12-07 a reader from the start was sent s6's transitions too.
  assert.deepEqual((await read(h, '?after=0', 2)).map((f) => [f.id, f.data.sessionId]), [[String(base + 6), 's7'], [String(base + 8), 's7']]);
  // Nothing a reader at base+2 lacks was dropped for the bound: s6's base+3..base+7 went with s6.
  const resumed = await read(h, '', 2, { 'Last-Event-ID': String(base + 2) });
  assert.deepEqual(resumed.map((f) => [f.event, f.id]), [['transition', String(base + 6)], ['transition', String(base + 8)]], 'no replay_gap');
  const behind = await read(h, '', 1, { 'Last-Event-ID': String(base + 1) });
  assert.deepEqual(behind[0], { event: 'replay_gap', data: { code: 'replay_gap', after: base + 1, resumedFrom: base + 3 } }, 'base+2 was dropped for the bound: a gap');
});

test('a session named more than once is refused invalid_params, not the first taken', async () => {
  const res = await h.fetch('/v1/inspect/transitions?session=s4&session=s5');
  assert.equal(res.status, 400);
  assert.deepEqual(((await res.json()) as { error: { code: string; data: unknown } }).error, { code: 'invalid_params', message: 'session is given more than once (2 times)', data: { session: ['s4', 's5'] } });
});

test('a reader that falls more than `keep` transitions behind is cut off, not queued for without bound', async (t) => {
  // Small buffers, and a client that never reads: the stream blocks once the socket is full.
  const slow = await startHarness({ server: { sseMaxBufferedBytes: 1024 } });
  t.after(() => slow.close());
  const hub2 = new MachineHub();
  const feed2 = new TransitionFeed(hub2, 50);
  t.after(() => feed2.close());
  slow.server.route('GET', '/v1/inspect/transitions', (req, res) => feed2.stream(req, res));
  const socket = net.connect(slow.port, '127.0.0.1');
  await once(socket, 'connect');
  socket.pause();
  socket.write(`GET /v1/inspect/transitions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nAccept: text/event-stream\r\n\r\n`);
  const closed = new Promise<void>((r) => socket.once('close', () => r()));
  await new Promise((r) => setTimeout(r, 50));
  // 400 transitions of 64 KB: far more than the socket's buffers and the 50 the feed keeps.
  const big = 'x'.repeat(64 * 1024);
  for (let i = 0; i < 400; i++) {
    hub2.record('s9', { machine: 'session', state: big, event: `e${i}`, at: Date.now() });
    if (i % 20 === 19) await new Promise((r) => setImmediate(r));
  }
  // Now read what reached the socket: a stream cut off ends there; one still open never does.
  socket.resume();
  const outcome = await Promise.race([closed.then(() => 'closed'), new Promise((r) => setTimeout(() => r('still open'), 5_000))]);
  socket.destroy();
  assert.equal(outcome, 'closed', 'the server closed the stream of the reader that fell behind');
});
