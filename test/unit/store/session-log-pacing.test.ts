// The reads of a whole log that a serving process does on its loop (the daemon deleting a session,
// adopting a fork, reviving a failed session, reading again a log damaged while it was down) give
// its loop turns while they read: the index's `pause` is awaited during the read, before the
// operation is done, and what they make of the log is what a read in one go makes of it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, statSync } from 'node:fs';
import { Packr } from 'msgpackr';
import { silentLogger } from '../../../src/core/ports.js';
import { FileEventLog } from '../../../src/store/file-event-log.store.js';
import { readLogFile, readLogFilePaged, SCAN_SLICE_BYTES, scanLogFile } from '../../../src/store/log-file.reader.js';
import { sessionLogPath } from '../../../src/store/paths.js';
import { frameRecord } from '../../../src/store/record-frame.codec.js';
import { SessionIndex } from '../../../src/store/session-index.store.js';
import { entryFromLog } from '../../../src/store/session-log-entry.js';
import { chunk, sessionCreated, tempDir, turnCompleted } from '../../support/store/store-fixtures.js';

/** A session's log of `events` chunks of `text` each (its last seq is events + 2). */
async function writeSession(dir: string, id: string, events: number, text = 'tok '): Promise<number> {
  const log = await FileEventLog.forSession(dir, id, { create: true, durability: { sync: 'never' } });
  log.append(sessionCreated(id, '/p'));
  for (let i = 0; i < events; i++) log.append(chunk(id, text));
  const last = log.append(turnCompleted(id));
  await log.whenDurable(last.seq);
  await log.close();
  return last.seq;
}

/** A pause that counts itself and, at each, runs `check` (what holds while the read is under way). */
function countingPause(check: () => void = () => undefined) {
  const pause = async () => {
    pause.count++;
    check();
    await new Promise<void>((r) => setImmediate(r));
  };
  pause.count = 0;
  return pause;
}

test('deleting a session scans its log in slices, pausing before its tombstone replaces it; the tombstone ends at the same seq', async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  let bytes = 0;
  const path = sessionLogPath(dir, 'ses_long');
  const pause = countingPause(() => assert.equal(statSync(path).size, bytes, 'the log is still there, not yet its tombstone'));
  const index = await SessionIndex.open(dir, { pause });
  // More than a slice of log: 12 events of 900 KiB (an event's limit is 1 MiB).
  const lastSeq = await writeSession(dir, 'ses_long', 12, 'x'.repeat(900 * 1024));
  bytes = statSync(path).size;
  assert.ok(bytes > SCAN_SLICE_BYTES);
  assert.equal(scanLogFile(path).lastSeq, lastSeq);
  // The index heard of the session's start only: the tombstone's seq comes from the scan.
  await index.applyEvents((await readLogFile(path)).events.slice(0, 1));
  assert.equal(index.get('ses_long')!.lastSeq, 1);
  await index.tombstone('ses_long');
  assert.ok(pause.count >= Math.floor(bytes / SCAN_SLICE_BYTES), `paused ${pause.count} times`);
  assert.equal(index.get('ses_long')!.status, 'deleted');
  assert.equal(index.get('ses_long')!.lastSeq, lastSeq + 1);
  const tomb = await readLogFile(path);
  assert.deepEqual(tomb.events.map((e) => [e.type, e.seq]), [['session_closed', lastSeq + 1]]);
});

test("adopting a fork's log and reviving a failed session read their logs a page at a time, pausing; the entries are what a read in one go gives", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  // More than a page (4096 events) of events.
  await writeSession(dir, 'ses_failed', 5000);
  const pause = countingPause();
  const index = await SessionIndex.open(dir, { pause });
  await index.setStatus('ses_failed', 'failed');
  pause.count = 0;
  await index.clearFailed('ses_failed');
  assert.ok(pause.count >= 1, 'the revive paused');
  assert.equal(index.get('ses_failed')!.status, 'active');

  // Made after the index opened, as a fork by a daemon's child is.
  await writeSession(dir, 'ses_fork', 5000);
  pause.count = 0;
  await index.adoptLog('ses_fork');
  assert.ok(pause.count >= 1, 'the adoption paused');
  assert.deepEqual(index.get('ses_fork'), await entryFromLog(dir, 'ses_fork', silentLogger));
});

test('a log with a record that does not decode is read up to it a page at a time, pausing; its entry is what a read in one go gives', async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const lastSeq = await writeSession(dir, 'ses_undecodable', 9000);
  const path = sessionLogPath(dir, 'ses_undecodable');
  const offset = statSync(path).size;
  // The next record in seq order, CRC-valid, whose events are not a list: the scan accepts it, the decode does not.
  appendFileSync(path, frameRecord(new Packr().pack([lastSeq + 1, 1, 'not a list of events'])));
  // The read of the whole log pauses between its pages until it meets that record, and fails there.
  const whole = countingPause();
  await assert.rejects(readLogFilePaged(path, whole), /log_corrupt|not/);
  const pause = countingPause();
  const paced = await entryFromLog(dir, 'ses_undecodable', silentLogger, pause);
  // Then the events before it are read again, three pages of them, with a pause between each two.
  assert.ok(pause.count - whole.count >= Math.ceil(lastSeq / 4096) - 1, `paused ${pause.count} times, ${whole.count} of them before the record that does not decode`);
  assert.deepEqual(paced!.damaged, { code: 'log_corrupt', offset });
  assert.equal(paced!.lastSeq, lastSeq);
  assert.deepEqual(paced, await entryFromLog(dir, 'ses_undecodable', silentLogger));
});

test('a log replaced by its tombstone while it is read a page at a time: the read gives the whole log it began on', async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const index = await SessionIndex.open(dir);
  const lastSeq = await writeSession(dir, 'ses_swapped', 9000);
  const path = sessionLogPath(dir, 'ses_swapped');
  await index.applyEvents((await readLogFile(path)).events);
  const before = (await readLogFile(path)).events;
  // The session deleted (its log replaced by a tombstone) at the read's first pause, between two pages.
  let deleting: Promise<void> | undefined;
  const read = await readLogFilePaged(path, async () => {
    deleting ??= index.tombstone('ses_swapped');
    await deleting;
  });
  assert.equal(index.get('ses_swapped')!.status, 'deleted', 'the tombstone took the name during the read');
  // Until 2026-12-07 each page opened the name again: the pages after the swap read the tombstone
  // at the log's offsets (log_corrupt, or a log cut short).
  assert.equal(read.scan.lastSeq, lastSeq);
  assert.deepEqual(read.events, before);
});
