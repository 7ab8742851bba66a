// sendNotifications: notifications already in JSON text (the relay's unparsed session/update lines)
// get the same stream, SSE ids, resume and limits as send(); and a sender that never waits (as the
// relay does not) is cut off at twice maxBufferedBytes or by the stall timeout, memory bounded.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { delay, rawInitialize, SseReader, stalledSseSocket, startHarness, type Harness } from '../../support/transport/harness.js';

const note = (sessionId: string, i: number) => JSON.stringify({ jsonrpc: '2.0', method: 'session/update', params: { sessionId, update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: `n${i} "id": ${i}` } } } });
const batch = (sessionId: string, from: number, n: number) => Array.from({ length: n }, (_, i) => note(sessionId, from + i));

describe('notifications sent as JSON text', { timeout: 20_000 }, () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ acp: { maxBufferedBytes: 64 * 1024, maxOutputStallMs: 300 } });
  });
  after(() => h.close());

  test('keep order with send(), get contiguous ids on the session stream, are buffered before the GET, and resume', async () => {
    const conn = await rawInitialize(h);
    const channel = h.agent.connection(conn).channel;
    assert.equal(channel.sendNotifications('s1', batch('s1', 0, 50)), true);
    const reader = await SseReader.open(h, conn, { sessionId: 's1' });
    await channel.send(JSON.parse(note('s1', 50)));
    channel.sendNotifications('s1', batch('s1', 51, 149));
    const events = await reader.waitFor(200);
    assert.deepEqual(events.map((e) => e.id), Array.from({ length: 200 }, (_, i) => String(i + 1)));
    assert.deepEqual(events.map((e) => e.data), batch('s1', 0, 200));
    reader.close();
    await delay(50);
    const again = await SseReader.open(h, conn, { sessionId: 's1', lastEventId: '150' });
    const resumed = await again.waitFor(50);
    assert.deepEqual(resumed.map((e) => e.id), Array.from({ length: 50 }, (_, i) => String(i + 151)));
    assert.deepEqual(resumed.map((e) => e.data), batch('s1', 150, 50));
    again.close();
  });

  test('a sender that never waits on a client that never reads: bounded, then closed', async () => {
    const conn = await rawInitialize(h);
    const socket = await stalledSseSocket(h, conn, 'flood');
    await delay(50);
    const record = h.agent.connection(conn);
    const chunk = batch('flood', 0, 20).map((j) => j + ' '.repeat(1000));
    const chunkBytes = chunk.reduce((a, j) => a + j.length, 0);
    let peak = 0;
    let sent = 0;
    while (!record.closedReason && sent < 100_000) {
      record.channel.sendNotifications('flood', chunk);
      sent++;
      const s = h.acp.connections().find((c) => c.id === conn);
      if (s) peak = Math.max(peak, s.peakPendingBytes);
      await new Promise((r) => setImmediate(r));
    }
    assert.ok(['limit_exceeded', 'stalled'].includes(String(await record.closed)), String(record.closedReason));
    assert.ok(peak <= 2 * 64 * 1024 + chunkBytes, `peak ${peak}`);
    socket.destroy();
  });
});
