// A supervised child's control channel delivers every event of a session to its daemon exactly
// once, in seq order, and only once durable: events reported before the log forwarded its records
// (a reopened session's catch-up) one by one, later ones as the log's own written records. Real
// FileEventLog, real ControlChannel, a real Unix socket, the real frame decoder.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, Socket } from 'node:net';
import { join } from 'node:path';
import { ControlChannel } from '../../../src/acp/control-channel.js';
import type { AgentEvent } from '../../../src/core/events.js';
import { INDEXED_EVENT_TYPES } from '../../../src/core/indexed-events.js';
import { FileEventLog } from '../../../src/store/file-event-log.store.js';
import { ControlFrameDecoder } from '../../../src/wire/control-frame.codec.js';
import { chunk, sessionCreated, tempDir, turnCompleted } from '../../support/store/store-fixtures.js';

/**
 * What the messages said of their events matches the events: their number, the indexed ones in
 * order, and last seqs that only grow, the last the newest received.
 */
function assertSaid(pair: Awaited<ReturnType<typeof channelPair>>): void {
  assert.equal(pair.said.count, pair.received.length);
  assert.deepEqual(pair.said.indexed, pair.received.filter((e) => INDEXED_EVENT_TYPES.has(e.type)));
  assert.deepEqual(pair.said.lastSeqs, [...pair.said.lastSeqs].sort((a, b) => a - b));
  assert.equal(pair.said.lastSeqs.at(-1), pair.received.at(-1)?.seq);
}

async function channelPair(dir: string) {
  const path = join(dir, 'ctl.sock');
  const received: AgentEvent[] = [];
  // What the messages said of themselves, undecoded (what a daemon with no feed open reads).
  const said = { count: 0, indexed: [] as AgentEvent[], lastSeqs: [] as number[] };
  let frames = 0;
  const decoder = new ControlFrameDecoder();
  const server = createServer((s) =>
    s.on('data', (bytes) => {
      for (const m of decoder.push(bytes)) {
        if (m.t !== 'events') continue;
        frames++;
        said.count += m.count;
        said.indexed.push(...m.indexed);
        if (m.lastSeq !== undefined) said.lastSeqs.push(m.lastSeq);
        received.push(...m.events);
      }
    }),
  );
  await new Promise<void>((r) => server.listen(path, r));
  const socket = new Socket();
  await new Promise<void>((r) => socket.connect(path, r));
  const channel = new ControlChannel(socket, 60_000);
  return {
    channel,
    received,
    said,
    frames: () => frames,
    async until(n: number) {
      while (received.length < n) await new Promise((r) => setTimeout(r, 2));
    },
    close() {
      channel.close();
      server.close();
    },
  };
}

test('catch-up events, streamed chunks and a reopened log all reach the daemon once, in order, durable', async () => {
  const { dir, cleanup } = tempDir('troupe-ctl-');
  const pair = await channelPair(dir);
  const sid = 'ses_ctl';
  const path = join(dir, `${sid}.log`);
  try {
    // Written and durable before the channel hears of the log: reported one by one (catch-up).
    let log = await FileEventLog.create(path, { sessionId: sid });
    const early = [log.append(sessionCreated(sid, dir)), log.append(chunk(sid, 'before'))];
    await log.whenDurable(log.lastSeq());
    for (const e of early) pair.channel.event(log, e);
    // Reported as they are appended, in bursts: forwarded as the log's records.
    for (let burst = 0; burst < 3; burst++) {
      for (let i = 0; i < 200; i++) pair.channel.event(log, log.append(chunk(sid, `b${burst} w${i} ü"\n`)));
      await new Promise((r) => setImmediate(r));
    }
    pair.channel.event(log, log.append(turnCompleted(sid)));
    await pair.until(log.lastSeq());
    for (const e of pair.received) assert.ok(e.seq <= log.durableSeq(), `seq ${e.seq} was sent before it was durable`);
    // The session is unloaded and opened again in the same process: a new log, new records.
    await log.close();
    log = await FileEventLog.open(path, { sessionId: sid });
    for (let i = 0; i < 50; i++) pair.channel.event(log, log.append(chunk(sid, `again ${i}`, 'turn_2')));
    await pair.until(log.lastSeq());
    const all = (await log.readAfter(0, { limit: 10_000 })).events;
    assert.equal(all.length, 2 + 600 + 1 + 50);
    assert.deepEqual(pair.received, all);
    assertSaid(pair);
    await log.close();
  } finally {
    pair.close();
    cleanup();
  }
});

test('a burst larger than a frame may carry is split at record boundaries, nothing lost', async () => {
  const { dir, cleanup } = tempDir('troupe-ctl-');
  const pair = await channelPair(dir);
  const sid = 'ses_big';
  try {
    const log = await FileEventLog.create(join(dir, `${sid}.log`), { sessionId: sid });
    pair.channel.event(log, log.append(sessionCreated(sid, dir)));
    await pair.until(1);
    const before = pair.frames();
    // ~12 MiB in one loop turn: one write batch, forwarded in several frames of at most 4 MiB.
    const big = 'x'.repeat(100 * 1024);
    // Indexed events inside the split run, in its first part and in its middle: named by the part
    // that ends the run, the earlier parts naming none (and counting none).
    for (let i = 0; i < 120; i++) {
      pair.channel.event(log, log.append(chunk(sid, `${i} ${big}`)));
      if (i === 3 || i === 60) pair.channel.event(log, log.append(turnCompleted(sid)));
    }
    await pair.until(log.lastSeq());
    assert.ok(pair.frames() - before >= 3, `expected the burst in several frames, got ${pair.frames() - before}`);
    assert.deepEqual(pair.received, (await log.readAfter(0, { limit: 1000 })).events);
    assert.equal(pair.said.indexed.length, 3, 'session_created and the two turn ends');
    assertSaid(pair);
    await log.close();
  } finally {
    pair.close();
    cleanup();
  }
});
