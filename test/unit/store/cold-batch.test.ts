// A watcher that catches up from the log (a /v1 stream that overflowed goes on so) reads it in
// batches bounded by bytes as well as by count: 512 events of a megabyte were half a gigabyte held
// for one stream. Observed through what the watcher holds read ahead, on a real log file, for the
// store's own logs and for the daemon's feeds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync } from 'node:fs';
import { FileEventLog } from '../../../src/store/file-event-log.store.js';
import { MemoryEventLog } from '../../../src/store/memory-event-log.store.js';
import { makeDirs, sessionLogPath, sessionsDir } from '../../../src/store/paths.js';
import { encodeEventRecord } from '../../../src/store/log-record.codec.js';
import type { AgentEvent } from '../../../src/core/events.js';
import { COLD_BATCH_BYTES, type BrokerWatcher } from '../../../src/store/event-watcher.js';
import { SessionFeeds } from '../../../src/daemon/session-feeds.js';
import { chunk, tempDir } from '../../support/store/store-fixtures.js';

const SID = 'ses_big';
/** Bytes this process has read through read(2) and the like (proc(5)). */
const bytesRead = () => Number(/^rchar: (\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'))![1]);
const BIG = 900_000;
/** Ten events of 900 kB, one of 6 MB (more than a batch's bytes alone), ten more of 900 kB. */
const SIZES = [...Array(10).fill(BIG), 6_000_000, ...Array(10).fill(BIG)] as number[];

async function bigLog(home: string): Promise<void> {
  makeDirs(sessionsDir(home), 0o700);
  const log = await FileEventLog.forSession(sessionsDir(home), SID, { create: true, maxEventBytes: 8 * 1024 * 1024 });
  SIZES.forEach((n, i) => log.append(chunk(SID, String(i % 10).repeat(n))));
  await log.close();
}

/** Takes every event, in order, and the size (in events) of each batch the watcher read from the log. */
async function catchUp(w: BrokerWatcher, count: number): Promise<{ seqs: number[]; batches: number[] }> {
  const seqs: number[] = [];
  const batches: number[] = [];
  while (seqs.length < count) {
    const fresh = w.readAhead() === 0;
    const r = await w.next();
    assert.equal(r.done, false);
    seqs.push(r.value.seq);
    if (fresh) batches.push(w.readAhead() + 1);
  }
  return { seqs, batches };
}

function checkBatches(batches: number[]): void {
  let at = 0;
  for (const n of batches) {
    const bytes = SIZES.slice(at, at + n).reduce((a, b) => a + b, 0);
    assert.ok(n === 1 || bytes <= COLD_BATCH_BYTES, `a batch of ${n} events (${bytes} bytes) from seq ${at + 1}`);
    at += n;
  }
  assert.equal(at, SIZES.length);
  assert.ok(batches.includes(1), 'the 6 MB event came alone');
}

test('a catch-up from the log reads at most 4 MiB at a time (one larger event alone), every event in order', async (t) => {
  const { dir: home, cleanup } = tempDir();
  t.after(cleanup);
  await bigLog(home);
  // Reopened, the log retains nothing in memory: every event comes from the file.
  const log = await FileEventLog.forSession(sessionsDir(home), SID, { readOnly: true });
  t.after(() => log.close());
  const w = log.subscribe(0) as BrokerWatcher;
  const { seqs, batches } = await catchUp(w, SIZES.length);
  w.close();
  assert.deepEqual(seqs, SIZES.map((_, i) => i + 1));
  checkBatches(batches);
});

test("the daemon's feed: a stream's catch-up from the log is bounded by bytes the same way", async (t) => {
  const { dir: home, cleanup } = tempDir();
  t.after(cleanup);
  await bigLog(home);
  const feeds = new SessionFeeds(home);
  t.after(() => feeds.close());
  const stream = await feeds.subscribe(SID, 0);
  const w = stream[Symbol.asyncIterator]() as BrokerWatcher;
  const { seqs, batches } = await catchUp(w, SIZES.length);
  stream.close();
  assert.deepEqual(seqs, SIZES.map((_, i) => i + 1));
  checkBatches(batches);
});

test("the daemon's feed: events it was not told of are filled in from the log in batches of at most 4 MiB, every event in order", async (t) => {
  const { dir: home, cleanup } = tempDir();
  t.after(cleanup);
  makeDirs(sessionsDir(home), 0o700);
  const first = await FileEventLog.forSession(sessionsDir(home), SID, { create: true, maxEventBytes: 8 * 1024 * 1024 });
  first.append(chunk(SID, 'hello'));
  await first.close();
  const feeds = new SessionFeeds(home);
  t.after(() => feeds.close());
  // A watcher from the start: its feed knows of seq 1, the last in the log when it opened.
  const stream = await feeds.subscribe(SID, 0);
  // The log grows while the daemon hears nothing of it (a child's reports lost), then one event is reported.
  const gap = Array(20).fill(BIG) as number[];
  const log = await FileEventLog.forSession(sessionsDir(home), SID, { maxEventBytes: 8 * 1024 * 1024 });
  gap.forEach((n, i) => log.append(chunk(SID, String(i % 10).repeat(n))));
  const reported = log.append(chunk(SID, 'reported'));
  await log.close();
  const readBefore = bytesRead();
  feeds.publish(SID, [reported]);
  // Read off the publishing path, a batch per turn of the loop (until 2026-12-07 all of it inside
  // publish): what the fill has read (troupe_event_feed_gap_fill_bytes_total) grows by at most a
  // batch between two turns.
  assert.equal(feeds.filled.events, 0, 'nothing read before publish returned');
  // A client that heard of the reported event asks from there while the fill runs: taken once the
  // fill has published it, not refused as beyond the feed.
  const atReported = feeds.subscribe(SID, reported.seq);
  // One from a seq the feed has already is taken at once, not after the whole fill (until 2026-12-07
  // every new stream of the session waited for all of it).
  let filledWhenTaken: number | undefined;
  const early = feeds.subscribe(SID, 1).then((w) => ((filledWhenTaken = feeds.filled.events), w));
  // So does a HEAD, and the daemon's known seq (GET /v1/sessions) is the reported one.
  await feeds.check(SID, reported.seq);
  assert.equal(feeds.knownLastSeq(SID), reported.seq);
  const steps: number[] = [];
  const late = { ...chunk(SID, 'late'), seq: reported.seq + 1, ts: reported.seq + 1 } as AgentEvent;
  for (let at = 0; feeds.filled.events < gap.length + 2; ) {
    await new Promise<void>((r) => setImmediate(r));
    steps.push(feeds.filled.bytes - at);
    at = feeds.filled.bytes;
    // The child reports its next event while the gap is being filled: it comes after the gap, in order.
    if (steps.length === 1) {
      appendFileSync(sessionLogPath(sessionsDir(home), SID), encodeEventRecord([late]));
      feeds.publish(SID, [late]);
    }
  }
  assert.ok(Math.max(...steps) <= COLD_BATCH_BYTES, `a batch of ${Math.max(...steps)} bytes`);
  assert.ok(steps.filter((n) => n > 0).length >= Math.ceil((gap.length * BIG) / COLD_BATCH_BYTES), `${steps.length} batches`);
  // Each batch read from near its first event, not from where the feed's scan left off: until
  // 2026-12-07 each walked (and checked) all the log had grown since, 3.7 times the gap here, and
  // quadratic in it (a gigabyte took 79 s).
  const read = bytesRead() - readBefore;
  assert.ok(read < 1.5 * gap.length * BIG, `${read} bytes read to fill a gap of ${gap.length * BIG}`);
  const { seqs } = await catchUp(stream[Symbol.asyncIterator]() as BrokerWatcher, gap.length + 3);
  stream.close();
  assert.deepEqual(seqs, Array.from({ length: gap.length + 3 }, (_, i) => i + 1));
  assert.ok(filledWhenTaken !== undefined && filledWhenTaken < gap.length, `taken with ${filledWhenTaken} of ${gap.length} filled`);
  (await early).close();
  const fromReported = await atReported;
  assert.deepEqual((await fromReported[Symbol.asyncIterator]().next()).value?.seq, late.seq);
  fromReported.close();
});

test('a page read with maxBytes holds about that many bytes of events (at least one), from the file and from memory alike', async () => {
  // Opening a session reads its history so: until 2026-12-07 a page of 4096 events held every
  // content part in it at once (a megabyte each), twice the heap of the history it opened.
  const { dir: home, cleanup } = tempDir();
  try {
    await bigLog(home);
    const cold = await FileEventLog.forSession(sessionsDir(home), SID, { readOnly: true, maxEventBytes: 8 * 1024 * 1024 });
    const warm = new MemoryEventLog({ sessionId: SID, maxEventBytes: 8 * 1024 * 1024 });
    SIZES.forEach((n, i) => warm.append(chunk(SID, String(i % 10).repeat(n))));
    for (const [name, log] of [['file', cold], ['memory', warm]] as const) {
      const pages: number[][] = [];
      for (let cursor = 0; ; ) {
        const page = await log.readAfter(cursor, { limit: 4096, maxBytes: COLD_BATCH_BYTES });
        pages.push(page.events.map((e) => (e as AgentEvent & { text: string }).text.length));
        cursor = page.cursor;
        if (!page.hasMore) break;
      }
      assert.deepEqual(pages.flat(), SIZES, `${name}: every event, in order`);
      const over = pages.filter((p) => p.length > 1 && p.reduce((a, b) => a + b, 0) > COLD_BATCH_BYTES);
      assert.deepEqual(over, [], `${name}: no page of more than one event over the bytes asked`);
      assert.ok(pages.length >= 5, `${name}: ${pages.length} pages`);
    }
    await cold.close();
  } finally {
    cleanup();
  }
});
