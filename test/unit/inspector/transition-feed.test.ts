// The inspector's feed of machine transitions over a real HttpServer: ids per transition, resume
// after the last id (Last-Event-ID or ?after), a plain replay_gap when what was missed is gone or
// comes from another daemon run, the session filter, and bad cursors refused.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { MachineHub } from '../../../src/daemon/machine-hub.js';
import { TransitionFeed } from '../../../src/daemon/inspector/transition-feed.js';
import { startHarness, type Harness } from '../../support/transport/harness.js';

interface Frame {
  id?: string;
  event?: string;
  data: any;
}

/** Opens the feed and collects frames until `count` have arrived, then disconnects. */
async function read(h: Harness, query: string, count: number, headers: Record<string, string> = {}): Promise<Frame[]> {
  const abort = new AbortController();
  const res = await h.fetch(`/v1/inspect/transitions${query}`, { headers: { Accept: 'text/event-stream', ...headers }, signal: abort.signal });
  assert.equal(res.status, 200);
  const frames: Frame[] = [];
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
        if (f.data !== undefined) frames.push(f as Frame);
      }
      if (frames.length >= count) break;
    }
  } finally {
    abort.abort();
  }
  return frames;
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
