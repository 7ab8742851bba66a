// A session's event feed (`GET /v1/sessions/:id/events`) against a real daemon, under load: bursts
// of events larger than a watcher's queue, and readers that fall behind.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { request, type IncomingMessage } from 'node:http';
import { daemonWithSession, feedSeqsOfText, seqOfFeedId, waitFor } from '../../support/daemon.js';
import { readSse, type SseMessage } from '../../../src/cli/sse.reader.js';
import { sessionLogPath, sessionsDir } from '../../../src/store/paths.js';

/** One turn that streams `n` chunks as fast as the scripted model can. */
const burst = (n: number) => ({ replies: [{ when: 'burst', items: Array.from({ length: n }, (_, i) => ({ text: `w${i} ` })) }] });
/** One turn of `n` chunks of 32 KiB: more than the socket's buffers hold, in a few events. */
const bulky = (n: number) => ({ replies: [{ when: 'bulky', items: Array.from({ length: n }, (_, i) => ({ text: `${i} `.padEnd(32 * 1024, 'x') })) }] });

/** A watcher's live queue bound in bytes (spec/daemon.md §Management API). */
const FEED_QUEUE_BYTES = 8 * 1024 * 1024;
/** One turn of `n` chunks of 1 MB (tool outputs come that large): far more than a watcher's byte bound in a few dozen events. */
const large = (n: number) => ({ replies: [{ when: 'large', items: Array.from({ length: n }, (_, i) => ({ text: `${i} `.padEnd(1_000_000, 'x') })) }] });

/** One turn of `n` chunks of 256 KB. */
const quarterMegs = (n: number) => ({ replies: [{ when: 'large', items: Array.from({ length: n }, (_, i) => ({ text: `${i} `.padEnd(256 * 1024, 'x') })) }] });

/** Reads the stream until a turn_completed event or its end. */
async function untilTurnCompleted(res: Response): Promise<SseMessage[]> {
  const out: SseMessage[] = [];
  const signal = AbortSignal.timeout(60_000);
  for await (const m of readSse(res.body!, signal)) {
    out.push(m);
    if (m.event !== 'event' || JSON.parse(m.data).type === 'turn_completed') break;
  }
  return out;
}

test('a live watcher of a turn that reports thousands of events at once gets every one, in order, with no error', async (t) => {
  // The child reports its events once durable, all of a group commit in one message: here bursts of
  // thousands, more than a watcher's queue (4096) holds. Until 2026-12-06 the watcher overflowed and
  // its stream ended in `event: error` (event_overflow) after the first two events, though its
  // reader was reading; `troupe watch` then failed with "the event stream failed".
  const n = 10_000;
  const { d, c, sessionId } = await daemonWithSession(t, 'ws', { script: burst(n) });
  const res = await fetch(`${d.url}/v1/sessions/${sessionId}/events?after=0`, { headers: d.headers });
  assert.equal(res.status, 200);
  const read = untilTurnCompleted(res);
  await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'burst' }] });
  const got = await read;
  assert.deepEqual(got.filter((m) => m.event !== 'event').map((m) => m.data), [], 'no error event');
  assert.deepEqual(got.map((m) => seqOfFeedId(m.id)), got.map((_, i) => i + 1), 'every seq from 1, once, in order');
  const chunks = got.map((m) => JSON.parse(m.data)).filter((e) => e.type === 'agent_message_chunk');
  assert.equal(chunks.length, n);
  assert.equal(chunks.at(-1).text, `w${n - 1} `);
});

test('a session deleted while its watcher is behind: the stream ends after every event it was going to send, none dropped', async (t) => {
  const { d, c, sessionId } = await daemonWithSession(t, 'ws', { script: bulky(400) });
  await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'bulky' }] });
  // The turn's end is durable (a client hears of it before the log has it).
  const whole = await untilTurnCompleted(await fetch(`${d.url}/v1/sessions/${sessionId}/events?after=0`, { headers: d.headers }));
  const lastSeq = seqOfFeedId(whole.at(-1)!.id);
  // A reader that does not read for now: the socket fills and the daemon holds the rest.
  const res = await new Promise<IncomingMessage>((resolve, reject) => request(`${d.url}/v1/sessions/${sessionId}/events?after=0`, { headers: d.headers }, resolve).on('error', reject).end());
  res.pause();
  await waitFor('the daemon holding output for the socket', async () => (await d.metric('troupe_sse_queued_bytes')) > 0);
  assert.equal((await d.api('DELETE', `/v1/sessions/${sessionId}`)).status, 200);
  // Until 2026-12-06 the end of the stream dropped what still waited for the socket (up to 1 MiB).
  res.setEncoding('utf8');
  let text = '';
  res.on('data', (x: string) => (text += x));
  res.resume();
  await new Promise((resolve) => res.on('end', resolve));
  const ids = feedSeqsOfText(text);
  assert.equal(ids.length, lastSeq, 'every event of the session');
  assert.deepEqual(ids, ids.map((_, i) => i + 1), 'in order, once');
});

test('a slow reader of large events: its live queue holds at most the byte bound, and it still gets every event in order', async (t) => {
  // Until 2026-12-06 the queue was bounded by count only (4096): these 32 events of 1 MB all waited
  // in it for a reader that did not read, and 4096 of them would have been 4 GiB.
  const n = 32;
  const { d, c, sessionId } = await daemonWithSession(t, 'ws', { script: large(n) });
  const res = await new Promise<IncomingMessage>((resolve, reject) => request(`${d.url}/v1/sessions/${sessionId}/events?after=0`, { headers: d.headers }, resolve).on('error', reject).end());
  t.after(() => res.destroy());
  assert.equal(res.statusCode, 200);
  // Not read from now on: the socket's buffers fill, then the stream's, then the watcher's queue.
  res.pause();
  assert.equal((await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'large' }] })).stopReason, 'end_turn');
  await d.untilDurable(sessionId, Math.max(...c.seqs(sessionId)));
  const queued = await d.metric('troupe_event_feed_queued_bytes');
  // Measured while the stream is open (a stream cut off would hold nothing and prove nothing).
  assert.equal(await d.metric('troupe_sse_streams'), 1, 'the slow stream is still open');
  assert.ok(queued <= FEED_QUEUE_BYTES, `the watcher's queue holds ${queued} bytes`);
  // The overflow cost the reader nothing: read now, the stream carries on from the log.
  await readsEveryEvent(res, n);
});

test('a feed opened on a long log while its session streams on: every event from the first, once, in order, through the end of the streaming turn', async (t) => {
  // 40 MB of log: the scan that opens a feed goes in several slices (SCAN_SLICE_BYTES, 8 MiB), the
  // daemon's loop serving others between them, and the child appends meanwhile. Until 2026-12-06 it
  // went in one go; now the feed must still start exactly where the scan ended, live events after it.
  const n = 2_000;
  const script = { replies: [...large(40).replies, ...burst(n).replies] };
  const { d, c, sessionId } = await daemonWithSession(t, 'ws', { script });
  assert.equal((await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'large' }] })).stopReason, 'end_turn');
  await d.untilDurable(sessionId, Math.max(...c.seqs(sessionId)));
  assert.ok(statSync(sessionLogPath(sessionsDir(d.home), sessionId)).size > 40_000_000);
  const streaming = c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'burst' }] });
  const res = await fetch(`${d.url}/v1/sessions/${sessionId}/events?after=0`, { headers: d.headers });
  assert.equal(res.status, 200);
  const got: SseMessage[] = [];
  let turns = 0;
  for await (const m of readSse(res.body!, AbortSignal.timeout(120_000))) {
    got.push(m);
    if (m.event !== 'event' || (JSON.parse(m.data).type === 'turn_completed' && ++turns === 2)) break;
  }
  assert.equal((await streaming).stopReason, 'end_turn');
  assert.deepEqual(got.filter((m) => m.event !== 'event').map((m) => m.data), [], 'no error event');
  assert.deepEqual(got.map((m) => seqOfFeedId(m.id)), got.map((_, i) => i + 1), 'every seq from 1, once, in order');
  const chunks = got.map((m) => JSON.parse(m.data)).filter((e) => e.type === 'agent_message_chunk');
  assert.equal(chunks.length, 40 + n);
  assert.equal(chunks.at(-1).text, `w${n - 1} `);
});

test("HEAD of a session's events answers as its GET does (200, 404, 400 invalid_cursor) without reading the session's log", async (t) => {
  // A log of 16 MB: reading it (the scan that opens a feed) shows in the bytes the daemon reads.
  const { d, c, sessionId } = await daemonWithSession(t, 'ws', { script: large(16) });
  assert.equal((await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'large' }] })).stopReason, 'end_turn');
  await d.untilDurable(sessionId, Math.max(...c.seqs(sessionId)));
  const lastSeq: number = (await d.api('GET', `/v1/sessions/${sessionId}`)).json.lastSeq;
  const logBytes = statSync(sessionLogPath(sessionsDir(d.home), sessionId)).size;
  assert.ok(logBytes > 16_000_000);
  // Bytes the daemon process has read through read(2) and the like, files and sockets alike (proc(5)).
  const bytesRead = () => Number(/^rchar: (\d+)$/m.exec(readFileSync(`/proc/${d.proc.pid}/io`, 'utf8'))![1]);
  const ask = (method: 'GET' | 'HEAD', query = '', headers: Record<string, string> = {}, id = sessionId) =>
    fetch(`${d.url}/v1/sessions/${id}/events${query}`, { method, headers: { ...d.headers, ...headers } });

  const before = bytesRead();
  const heads = [await ask('HEAD'), await ask('HEAD', `?after=${lastSeq}`), await ask('HEAD', '?after=1', { 'Last-Event-ID': String(lastSeq) })];
  const readByHeads = bytesRead() - before;
  for (const head of heads) {
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('content-type'), 'text/event-stream');
    assert.equal(head.headers.get('content-length'), null, "an SSE route's HEAD names no length");
    assert.equal(await head.text(), '');
  }
  // Until 2026-12-06 each HEAD opened the feed, scanning the whole log (48 MB read by these three).
  assert.ok(readByHeads < logBytes / 4, `the HEADs read ${readByHeads} bytes (the log is ${logBytes})`);
  assert.equal(await d.metric('troupe_event_feeds_open'), 0);
  // No gap here (every report reached the daemon): nothing was filled from the log.
  assert.deepEqual([await d.metric('troupe_event_feed_gap_fill_events_total'), await d.metric('troupe_event_feed_gap_fill_bytes_total')], [0, 0]);

  // The GET they stand for opens the feed, which reads the log: what the HEADs were spared.
  const readBefore = bytesRead();
  const get = await ask('GET', `?after=${lastSeq}`);
  assert.equal(get.status, 200);
  await get.body!.cancel();
  assert.ok(bytesRead() - readBefore >= logBytes, 'the GET scanned the log');

  // Refusals: the status a GET gets, and nothing streamed.
  for (const [query, headers, id, status, code] of [
    ['', {}, 'no-such-session', 404, 'session_not_found'],
    ['?after=x', {}, sessionId, 400, 'invalid_cursor'],
    ['', { 'Last-Event-ID': '-1' }, sessionId, 400, 'invalid_cursor'],
    [`?after=${lastSeq + 1}`, {}, sessionId, 400, 'invalid_cursor'],
    // Two cursors are none (until 2026-12-07 the first was taken).
    [`?after=1&after=${lastSeq}`, {}, sessionId, 400, 'invalid_cursor'],
  ] as const) {
    const got = await ask('GET', query, headers, id);
    // A stream opened where a refusal was due would never end: its status is enough to fail.
    if (got.status !== status) await got.body!.cancel();
    assert.equal(got.status, status, `GET ${query} ${JSON.stringify(headers)} ${id}`);
    assert.equal(((await got.json()) as any).error.code, code, `GET ${query} ${JSON.stringify(headers)} ${id}`);
    const head = await ask('HEAD', query, headers, id);
    assert.equal(head.status, status, `HEAD ${query} ${JSON.stringify(headers)} ${id}`);
    assert.equal(await head.text(), '');
  }
});

test('slow readers of many streams: their queues together hold at most --feed-queue-mb, a reader keeping up is served, and none loses an event', async (t) => {
  // Each watcher's queue is bounded (8 MiB), but until 2026-12-06 nothing bounded them together:
  // 256 streams (--max-streams) of slow readers could make the daemon hold 2 GiB. Here two slow
  // readers of 32 events of 256 KB queued about 5.5 MB together (8 MB each, less what the sockets'
  // buffers and the SSE stream take: about 5 MB) without the shared budget of 2 MiB. More events
  // would overflow their own bounds (8 MiB), which drops their queues, and prove nothing.
  const budget = 2 * 1024 * 1024;
  const n = 32;
  const { d, c, sessionId } = await daemonWithSession(t, 'ws', { script: quarterMegs(n), args: ['--feed-queue-mb', '2'] });
  const slow = await Promise.all(
    [0, 1].map(() => new Promise<IncomingMessage>((resolve, reject) => request(`${d.url}/v1/sessions/${sessionId}/events?after=0`, { headers: d.headers }, resolve).on('error', reject).end())),
  );
  for (const res of slow) t.after(() => res.destroy()), res.pause();
  // A reader that keeps up, on the same session's feed.
  const done = new AbortController();
  const keepingUp = untilTurnCompleted(await fetch(`${d.url}/v1/sessions/${sessionId}/events?after=0`, { headers: d.headers, signal: done.signal }));
  assert.equal((await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'large' }] })).stopReason, 'end_turn');
  const got = await keepingUp;
  assert.deepEqual(got.map((m) => seqOfFeedId(m.id)), got.map((_, i) => i + 1), 'the reader keeping up got every seq from 1, in order');
  assert.equal(got.filter((m) => m.event === 'event' && JSON.parse(m.data).type === 'agent_message_chunk').length, n);
  done.abort();
  await d.untilDurable(sessionId, Math.max(...c.seqs(sessionId)));
  await waitFor('the daemon to close the stream read to its end', async () => (await d.metric('troupe_sse_streams')) === 2);
  const queued = await d.metric('troupe_event_feed_queued_bytes');
  assert.ok(queued <= budget, `the watchers' queues hold ${queued} bytes in all`);
  // The budget cost the slow readers nothing: read now, their streams carry on from the log.
  for (const res of slow) await readsEveryEvent(res, n);
});

test('--feed-queue-mb must be a whole number of MiB from 1', async () => {
  const { spawnSync } = await import('node:child_process');
  for (const bad of ['0', '1.5', 'x']) {
    const r = spawnSync(process.execPath, ['bin/troupe.js', 'serve', '--port', '0', '--feed-queue-mb', bad], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '', TROUPE_HOME: '/nonexistent/never-made' } });
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /--feed-queue-mb must be an integer from 1 to/);
  }
});

/**
 * Reads a paused SSE response of a turn of `n` chunks to its end: every seq from 1, once, in order,
 * no `event: error`, and all `n` chunks (a stream that lost its place in the live queue carries on
 * from the log).
 */
async function readsEveryEvent(res: IncomingMessage, n: number): Promise<void> {
  res.setEncoding('utf8');
  let text = '';
  res.on('data', (x: string) => (text += x));
  res.resume();
  await waitFor('the turn_completed event', async () => text.includes('"type":"turn_completed"'), 60_000);
  const ids = feedSeqsOfText(text);
  assert.deepEqual(ids, ids.map((_, i) => i + 1), 'every seq from 1, once, in order');
  assert.doesNotMatch(text, /^event: error$/m);
  assert.equal([...text.matchAll(/"type":"agent_message_chunk"/g)].length, n);
}
