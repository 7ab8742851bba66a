import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isTroupeError } from '../../../src/core/errors.js';
import type { AgentEvent } from '../../../src/core/events.js';
import { FileEventLog } from '../../../src/store/file-event-log.store.js';
import { readLogFile, readLogFilePaged, scanLogFile } from '../../../src/store/log-file.reader.js';
import { encodeEventRecord, encodeHeaderRecord } from '../../../src/store/log-record.codec.js';
import { writePendingLogs } from '../../../src/store/unwritten-logs.js';
import { chunk, drain, tempDir, turnCompleted } from '../../support/store/store-fixtures.js';
import { printedByModule } from '../../support/printed-by.js';

const SID = 'ses_file';
const seqs = (events: AgentEvent[]): number[] => events.map((e) => e.seq);

test('events survive close and reopen with the same seq numbering and text live subscribers saw', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const log = await FileEventLog.forSession(dir, SID, { create: true });
    const live = log.subscribe(0);
    const texts: string[] = [];
    for (let i = 0; i < 2500; i++) {
      texts.push(`tok${i} `);
      log.append(chunk(SID, `tok${i} `));
      if (i % 700 === 0) log.append(turnCompleted(SID));
    }
    await log.close();
    const seen = (await drain(live)).items;
    const { events, scan } = await readLogFile(join(dir, `${SID}.log`));
    assert.deepEqual(events, seen, 'replay equals what the live subscriber saw');
    assert.equal(scan.warnings.length, 0);
    assert.ok(scan.records < events.length / 10, `chunks were coalesced: ${scan.records} records for ${events.length} events`);
    assert.equal(events.filter((e) => e.type === 'agent_message_chunk').map((e) => (e as { text: string }).text).join(''), texts.join(''));
    const again = await FileEventLog.forSession(dir, SID);
    assert.equal(again.lastSeq(), events.length);
    assert.equal(again.append(chunk(SID, 'more')).seq, events.length + 1);
    await again.close();
  } finally {
    cleanup();
  }
});

test('a lone surrogate (half an emoji) is kept as U+FFFD, in the live event as in the file, on the text-chunk path and the general one', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const log = await FileEventLog.forSession(dir, SID, { create: true });
    const live = [
      log.append(chunk(SID, 'half \ud83d of an emoji')),
      log.append({ type: 'tool_call_updated', sessionId: SID, turnId: 'turn_1', toolCallId: 'call_1', status: 'completed', output: 'out \udc00 put' }),
    ];
    assert.equal((live[0] as { text: string }).text, 'half \ufffd of an emoji');
    assert.equal((live[1] as { output: string }).output, 'out \ufffd put');
    await log.close();
    const reopened = await FileEventLog.forSession(dir, SID);
    assert.deepEqual((await reopened.readAfter(0)).events, live);
    await reopened.close();
  } finally {
    cleanup();
  }
});

test('a paged read gives exactly what a whole read gives, pausing between its pages', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const log = await FileEventLog.forSession(dir, SID, { create: true });
    // Records of many sizes: a page ends inside a record as often as at its end.
    for (let i = 0; i < 3000; i++) {
      log.append(chunk(SID, `tok${i} `));
      if (i % 37 === 0) await log.whenDurable(log.lastSeq());
    }
    await log.close();
    const path = join(dir, `${SID}.log`);
    const whole = await readLogFile(path);
    let pauses = 0;
    const paged = await readLogFilePaged(path, async () => void pauses++, 256);
    assert.deepEqual(seqs(paged.events), seqs(whole.events));
    assert.deepEqual(paged.events, whole.events);
    assert.equal(pauses, Math.ceil(whole.events.length / 256) - 1, 'a pause between every two pages');
    assert.equal(paged.scan.lastSeq, 3000);
  } finally {
    cleanup();
  }
});

test('whenDurable resolves for a barrier event and for chunks (group commit), and durableSeq covers them', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const log = await FileEventLog.forSession(dir, SID, { create: true, durability: { sync: 'group', groupCommitMs: 20 } });
    const c = log.append(chunk(SID, 'a'));
    await log.whenDurable(c.seq);
    assert.ok(log.durableSeq() >= c.seq);
    log.append(chunk(SID, 'b'));
    const t = log.append(turnCompleted(SID));
    await log.whenDurable(t.seq);
    assert.equal(log.durableSeq(), t.seq);
    // What is durable is in the file, read by someone else.
    assert.equal((await readLogFile(log.path)).scan.lastSeq, t.seq);
    await log.close();
  } finally {
    cleanup();
  }
});

test('syncNow makes what is appended durable before it returns, on this thread; with a write in flight it leaves it to whenDurable', async () => {
  const { dir, cleanup } = tempDir();
  try {
    // A group commit too slow to be what synced it.
    const log = await FileEventLog.forSession(dir, SID, { create: true, durability: { sync: 'group', groupCommitMs: 10_000 } });
    log.append(chunk(SID, 'a'));
    const t = log.append(turnCompleted(SID));
    const before = log.stats().syncs;
    log.syncNow();
    // No await in between: written, synced, readable by someone else.
    assert.equal(log.durableSeq(), t.seq);
    assert.equal(log.stats().syncs, before + 1);
    assert.equal(scanLogFile(log.path).lastSeq, t.seq);
    log.syncNow(); // nothing pending: no second sync
    assert.equal(log.stats().syncs, before + 1);

    // A barrier starts its write on the next turn of the loop; once it is in flight, syncNow stays out of its way.
    const u = log.append(turnCompleted(SID));
    await new Promise((r) => setImmediate(r));
    const v = log.append(turnCompleted(SID));
    log.syncNow();
    await log.whenDurable(v.seq);
    assert.ok(log.durableSeq() >= v.seq && v.seq > u.seq);
    const { events, scan } = await readLogFile(log.path);
    assert.deepEqual(seqs(events), [1, 2, 3, 4]);
    assert.equal(scan.warnings.length, 0);
    await log.close();
  } finally {
    cleanup();
  }
});

test('writePendingLogs puts what was appended in the file at once, not synced; what it writes during a sync still gets its group commit', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const log = await FileEventLog.forSession(dir, SID, { create: true, durability: { sync: 'group', groupCommitMs: 20 } });
    const a = log.append(chunk(SID, 'a'));
    writePendingLogs();
    // No await in between: another reader of the file sees it; it is not durable yet.
    assert.equal(scanLogFile(log.path).lastSeq, a.seq);
    assert.ok(log.durableSeq() < a.seq);
    // A barrier's sync in flight (started on the next turn of the loop), and a chunk written while it runs.
    const t = log.append(turnCompleted(SID));
    await new Promise((r) => setImmediate(r));
    const b = log.append(chunk(SID, 'b'));
    writePendingLogs();
    assert.equal(scanLogFile(log.path).lastSeq, b.seq);
    await log.whenDurable(t.seq);
    // The chunk was written after that sync began: its own group commit makes it durable (it was
    // left to no one when the sync's end cleared the timer).
    const synced = await Promise.race([log.whenDurable(b.seq).then(() => true), new Promise((r) => setTimeout(() => r(false), 2000))]);
    assert.equal(synced, true);
    assert.equal(log.durableSeq(), b.seq);
    await log.close();
  } finally {
    cleanup();
  }
});

test("under the 'never' policy whenDurable forces a sync", async () => {
  const { dir, cleanup } = tempDir();
  try {
    const log = await FileEventLog.forSession(dir, SID, { create: true, durability: { sync: 'never', groupCommitMs: 10_000 } });
    const e = log.append(chunk(SID, 'a'));
    await log.whenDurable(e.seq);
    assert.equal(log.durableSeq(), 1);
    await log.close();
  } finally {
    cleanup();
  }
});

test('cursors older than droppedThrough are served from the file; watchers catch up from it and go live', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const log = await FileEventLog.forSession(dir, SID, { create: true, retention: { maxEvents: 50 } });
    for (let i = 1; i <= 3000; i++) log.append(chunk(SID, `c${i}`));
    assert.equal(log.droppedThrough(), 2950);
    const page = await log.readAfter(10, { limit: 5 });
    assert.deepEqual([seqs(page.events), page.cursor, page.hasMore], [[11, 12, 13, 14, 15], 15, true]);
    const all = await log.readAfter(0, { limit: 5000 });
    assert.deepEqual(seqs(all.events), Array.from({ length: 3000 }, (_, i) => i + 1));
    const w = log.subscribe(100);
    const it = w[Symbol.asyncIterator]();
    for (let s = 101; s <= 3000; s++) assert.equal((await it.next()).value.seq, s);
    log.append(chunk(SID, 'live'));
    assert.equal((await it.next()).value.seq, 3001);
    await log.close();
    assert.equal((await it.next()).done, true);
  } finally {
    cleanup();
  }
});

test('a reopened log serves its history from the file, from any cursor', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const log = await FileEventLog.forSession(dir, SID, { create: true });
    for (let i = 1; i <= 5000; i++) log.append(chunk(SID, `c${i}-${'p'.repeat(i % 50)}`));
    await log.close();
    const ro = await FileEventLog.open(log.path, { readOnly: true });
    for (const cursor of [0, 1, 777, 2500, 4999, 5000]) {
      const p = await ro.readAfter(cursor, { limit: 3 });
      assert.deepEqual(seqs(p.events), [cursor + 1, cursor + 2, cursor + 3].filter((s) => s <= 5000), `cursor ${cursor}`);
    }
    await assert.rejects(ro.readAfter(5001), (e: unknown) => isTroupeError(e, 'invalid_cursor'));
    assert.throws(() => ro.append(chunk(SID, 'x')), (e: unknown) => isTroupeError(e));
    // A read-only log has no live tail: the watcher replays, then waits for close.
    const r = await drain(ro.subscribe(4990), 10);
    assert.deepEqual(seqs(r.items), Array.from({ length: 10 }, (_, i) => 4991 + i));
    await ro.close();
  } finally {
    cleanup();
  }
});

test('a log file that lost its prefix serves what it has and gives replay_gap before it', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const path = join(dir, `${SID}.log`);
    const events = [11, 12, 13].map((seq) => ({ type: 'agent_message_chunk', sessionId: SID, turnId: 't', messageId: 'm', text: `s${seq}`, seq, ts: 1 }) as AgentEvent);
    writeFileSync(path, Buffer.concat([encodeHeaderRecord({ troupeLog: 1, sessionId: SID, createdAt: 1, baseSeq: 10 }), encodeEventRecord(events)]));
    const log = await FileEventLog.open(path, { readOnly: true });
    assert.equal(log.lastSeq(), 13);
    assert.deepEqual(seqs((await log.readAfter(10)).events), [11, 12, 13]);
    await assert.rejects(log.readAfter(3), (e: unknown) => isTroupeError(e, 'replay_gap'));
    const r = await drain(log.subscribe(0));
    assert.ok(isTroupeError(r.error, 'replay_gap'));
    assert.deepEqual(r.items, []);
    await log.close();
  } finally {
    cleanup();
  }
});

test('create refuses an existing file; open of a missing file is session_not_found; a foreign header is log_corrupt', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const log = await FileEventLog.forSession(dir, SID, { create: true });
    await log.close();
    await assert.rejects(FileEventLog.create(log.path, { sessionId: SID }), (e: unknown) => isTroupeError(e, 'invalid_params'));
    await assert.rejects(FileEventLog.open(join(dir, 'nope.log')), (e: unknown) => isTroupeError(e, 'session_not_found'));
    await assert.rejects(FileEventLog.open(log.path, { sessionId: 'ses_other' }), (e: unknown) => isTroupeError(e, 'log_corrupt'));
  } finally {
    cleanup();
  }
});

test('large events get a record of their own and round-trip', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const log = await FileEventLog.forSession(dir, SID, { create: true, maxEventBytes: 8 * 1024 * 1024 });
    log.append(chunk(SID, 'small'));
    const big = log.append(chunk(SID, 'B'.repeat(3 * 1024 * 1024)));
    log.append(chunk(SID, 'small2'));
    await log.close();
    const { events, scan } = await readLogFile(log.path);
    assert.equal(events.length, 3);
    assert.deepEqual(events[1], big);
    assert.equal(scan.warnings.length, 0);
  } finally {
    cleanup();
  }
});

test('a read-only open of a damaged log does not modify the file', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const log = await FileEventLog.forSession(dir, SID, { create: true });
    for (let i = 0; i < 100; i++) log.append(chunk(SID, `c${i}`));
    await log.close();
    writeFileSync(log.path, Buffer.concat([readFileSync(log.path), Buffer.from([1, 2, 3])]));
    const before = readFileSync(log.path);
    const mtime = statSync(log.path).mtimeMs;
    const ro = await FileEventLog.open(log.path, { readOnly: true });
    assert.equal(ro.lastSeq(), 100);
    assert.equal(ro.warnings.length, 1);
    assert.deepEqual(readFileSync(log.path), before);
    assert.equal(statSync(log.path).mtimeMs, mtime);
    assert.equal(scanLogFile(log.path).validBytes, before.length - 3);
  } finally {
    cleanup();
  }
});

test('a slow watcher catching up while appends evict its position reads the rest from the file, in order', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const log = await FileEventLog.forSession(dir, SID, { create: true, retention: { maxEvents: 10 }, durability: { sync: 'never', groupCommitMs: 10_000 } });
    for (let i = 1; i <= 100; i++) log.append(chunk(SID, `a${i}`));
    const w = log.subscribe(0);
    const it = w[Symbol.asyncIterator]();
    const got: number[] = [];
    for (let round = 0; round < 200; round++) {
      // Appends race ahead of the consumer; nothing has been written to the file yet when it starts.
      for (let i = 0; i < 7; i++) log.append(chunk(SID, `b${round}-${i}`));
      for (let k = 0; k < 5; k++) {
        const r = await it.next();
        assert.equal(r.done, false);
        got.push(r.value.seq);
      }
    }
    const last = log.lastSeq();
    await log.close();
    for (let r = await it.next(); !r.done; r = await it.next()) got.push(r.value.seq);
    assert.deepEqual(got, Array.from({ length: last }, (_, i) => i + 1));
    assert.equal((await readLogFile(log.path)).events.length, last);
  } finally {
    cleanup();
  }
});

test('a writable open on a disk that takes no writes (here file-size limits) fails log_write_failed, at its lock or at its repair, and the log opens once writes work', async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const torn = join(dir, 'ses_torn.log');
  const log = await FileEventLog.create(torn, { sessionId: 'ses_torn' });
  log.append(chunk('ses_torn', 'kept'));
  await log.close();
  writeFileSync(torn, Buffer.concat([readFileSync(torn), Buffer.from([9, 0, 0, 0, 1, 2])]));
  const before = readFileSync(torn);
  // A crash while the file was being created: nothing in it, its header to be written on open.
  const empty = join(dir, 'ses_empty.log');
  writeFileSync(empty, '');
  // In a process of its own under the limit (prlimit, util-linux), as a full disk fails writes there.
  // One byte: the lock cannot be made. Then (set by the process on itself) as many bytes as its own
  // lock line, which a header (some 70 bytes) does not fit in: the lock is made, the repair fails.
  const script = `
    const { execFileSync } = await import('node:child_process');
    const { FileEventLog } = await import(${JSON.stringify(new URL('../../../src/store/file-event-log.store.js', import.meta.url).href)});
    const { ownLockLine } = await import(${JSON.stringify(new URL('../../../src/store/stale-lock.js', import.meta.url).href)});
    const codeOf = (p) => p.then((l) => l.close().then(() => 'opened'), (e) => [e.code, e.data?.cause ?? e.constructor.name].join(' '));
    const out = { atLock: await codeOf(FileEventLog.open(${JSON.stringify(torn)})) };
    execFileSync('prlimit', ['--pid', String(process.pid), '--fsize=' + ownLockLine().length + ':unlimited']);
    out.atRepair = await codeOf(FileEventLog.open(${JSON.stringify(empty)}, { sessionId: "ses_empty" }));
    console.log(JSON.stringify(out));`;
  const out = await printedByModule(script, ['prlimit', '--fsize=1:unlimited']);
  assert.deepEqual(JSON.parse(out), { atLock: 'log_write_failed EFBIG', atRepair: 'log_write_failed EFBIG' });
  assert.deepEqual(readFileSync(torn), before, 'not repaired without its lock');
  // Writes work again: both open, repaired, and take events.
  for (const [path, sessionId, kept] of [[torn, 'ses_torn', 1], [empty, 'ses_empty', 0]] as const) {
    const reopened = await FileEventLog.open(path, { sessionId });
    assert.equal(reopened.lastSeq(), kept);
    reopened.append(chunk(sessionId, 'after'));
    await reopened.close();
    const { scan, events } = await readLogFile(path);
    assert.deepEqual([scan.warnings, events.length], [[], kept + 1]);
  }
});
