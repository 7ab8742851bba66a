// A token holder that asks for a large response and never reads it must not hold the daemon's
// memory: what waits for its socket stays bounded, and a client that takes nothing is cut off, its
// stream and what it held let go (uWS closes an HTTP socket whose output has not moved for about
// 10 s: spec/transport.md §7). Others are served meanwhile.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import net from 'node:net';
import { daemonWithSession, waitFor } from '../../support/daemon.js';

const CHUNK = 1_000_000;
// About 10 MB of events: more than the socket buffers of a client that never reads (the kernel's
// send buffer tops out at a few MiB) plus what the SSE stream queues (1 MiB).
const script = { replies: [{ when: 'big', items: Array.from({ length: 10 }, (_, i) => ({ text: String(i).repeat(CHUNK) })) }] };
const SSE_MAX_BUFFERED = 1024 * 1024;

/** A raw socket that sends one GET and never reads a byte of the answer. */
async function stalledGet(url: string, path: string, headers: Record<string, string>): Promise<net.Socket> {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  await once(socket, 'connect');
  socket.pause();
  const lines = Object.entries({ Host: `${hostname}:${port}`, ...headers }).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  socket.write(`GET ${path} HTTP/1.1\r\n${lines}\r\n`);
  return socket;
}

test('a client that never reads its event stream holds at most the stream buffer, and is cut off', async (t) => {
  const { d, c, sessionId } = await daemonWithSession(t, 'http', { script });
  const r = await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'big' }] });
  assert.equal(r.stopReason, 'end_turn');
  const lastSeq = Math.max(...c.seqs(sessionId));
  await d.untilDurable(sessionId, lastSeq);

  const socket = await stalledGet(d.url, `/v1/sessions/${sessionId}/events?after=0`, { ...d.headers, Accept: 'text/event-stream' });
  t.after(() => socket.destroy());
  // The stream filled the socket and queued the rest, up to its limit (plus the one event that crossed it).
  const queued = await waitFor('the stalled stream to queue output', async () => {
    const n = await d.metric('troupe_sse_queued_bytes');
    return n > 0 && n;
  });
  assert.ok(queued <= SSE_MAX_BUFFERED + 2 * CHUNK, `queued ${queued} bytes`);
  assert.equal(await d.metric('troupe_event_feeds_open'), 1);
  // Served meanwhile.
  assert.equal((await d.api('GET', `/v1/sessions/${sessionId}`)).status, 200);
  // Cut off: its stream, its queue and its session's event feed are gone.
  await waitFor('the stalled stream to be closed', async () => (await d.metric('troupe_sse_streams')) === 0, 60_000);
  assert.equal(await d.metric('troupe_sse_queued_bytes'), 0);
  assert.equal(await d.metric('troupe_event_feeds_open'), 0);
});
