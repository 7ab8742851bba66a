// A WebSocket client reading a backlog of large messages gets every one of them: the daemon's writes
// resumed after a drain are still polled for. uSockets stops polling a socket for writable after its
// writable callback unless a write made in it failed through us_socket_write; uWS sends a message of
// 16 KiB or more, with nothing buffered, through us_socket_write2, whose partial write does not count.
// Until 2026-12-06 the drain handler wrote the next message of the backlog from inside that callback:
// it went out in part, its rest waited in uWS with nothing polling, and no drain came again (the
// daemon-event-feeds hang: a prompt's answer behind megabytes of unsent updates).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { WebSocket } from 'ws';
import { startHarness, TOKEN } from '../../support/transport/harness.js';

const COUNT = 64;
const SIZE = 1024 * 1024;

test('WebSocket: a client reading a backlog of messages of a megabyte gets every one', async (t) => {
  // A connection whose output waits for a drain that never comes is closed as stalled: the test ends
  // then, rather than wait for its own timeout.
  const h = await startHarness({ acp: { maxOutputStallMs: 10_000 } });
  t.after(() => h.close());
  const ws = new WebSocket(h.acpUrl.replace(/^http/, 'ws'), { headers: { Authorization: `Bearer ${TOKEN}` } });
  t.after(() => ws.terminate());
  await once(ws, 'open');
  ws.send(JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: 1 } }));
  await once(ws, 'message');
  const record = h.agent.connections.at(-1)!;
  let updates = 0;
  const all = new Promise<'all'>((resolve) =>
    ws.on('message', (data: Buffer) => {
      if (data.length > SIZE && ++updates === COUNT) resolve('all');
    }),
  );
  ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: '_test/flood', params: { sessionId: 'flood', size: SIZE, count: COUNT } }));
  const outcome = await Promise.race([all, record.closed]);
  assert.equal(outcome, 'all', `the connection was closed (${outcome}) after ${updates} of ${COUNT} messages`);
});
