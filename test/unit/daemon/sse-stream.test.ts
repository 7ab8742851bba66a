// A management SSE stream (src/daemon/http/sse-stream.ts) over a real HttpServer, whose client takes
// everything at once: its producer must still let the loop's other work run, at least once per
// `sseMaxBufferedBytes` sent. Until 2026-12-06 a socket that never pushed back (a fast reader on
// loopback) let a feed's replay hold the daemon's loop until it had sent the whole log.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness } from '../../support/transport/harness.js';

const MAX_BUFFERED = 16 * 1024;
/** 64 KiB in all: what loopback's socket buffers take without pushing back. */
const EVENTS = 64;
const DATA = 'x'.repeat(1024);

test('a stream whose socket takes everything yields to the loop at least once per sseMaxBufferedBytes sent', async (t) => {
  const h = await startHarness({ server: { sseMaxBufferedBytes: MAX_BUFFERED } });
  t.after(() => h.close());
  let sentBeforeTurn: number | undefined;
  h.server.route('GET', '/v1/test/burst', async (_req, res) => {
    const sse = res.sse();
    let sent = 0;
    // Other work of the loop (another client's request), waiting for its turn.
    setImmediate(() => (sentBeforeTurn = sent));
    for (let i = 0; i < EVENTS; i++) {
      await sse.send(DATA, { id: i + 1 });
      sent++;
    }
    sse.close();
  });
  const res = await h.fetch('/v1/test/burst');
  assert.equal(res.status, 200);
  const ids = [...(await res.text()).matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
  assert.deepEqual(ids, Array.from({ length: EVENTS }, (_, i) => i + 1), 'every event, in order');
  assert.ok(sentBeforeTurn !== undefined && sentBeforeTurn < EVENTS, `the loop's other work ran only after all ${EVENTS} events were sent`);
  const frameBytes = `id: 1\ndata: ${DATA}\n\n`.length;
  assert.ok(sentBeforeTurn <= Math.ceil(MAX_BUFFERED / frameBytes), `${sentBeforeTurn} events (of ${frameBytes} bytes) sent before the loop had a turn`);
});
