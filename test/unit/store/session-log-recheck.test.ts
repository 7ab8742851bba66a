// The logs changed since the index was written, read again (src/store/session-log-recheck.ts,
// spec/event-log.md §6 Recheck): real logs and index files in a temp directory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { Packr } from 'msgpackr';
import { silentLogger } from '../../../src/core/ports.js';
import { nextTurn } from '../../../src/core/next-turn.js';
import { FileEventLog } from '../../../src/store/file-event-log.store.js';
import { scanLogFile } from '../../../src/store/log-file.reader.js';
import { sessionLogPath } from '../../../src/store/paths.js';
import { frameRecord } from '../../../src/store/record-frame.codec.js';
import { SessionIndex } from '../../../src/store/session-index.store.js';
import { entryAsLogSays, type SessionEntry } from '../../../src/store/session-summary.js';
import { recheckChangedLogs } from '../../../src/store/session-log-recheck.js';
import { writeTombstoneLog } from '../../../src/store/session-tombstone.js';
import { cutAfterCreation, indexWrittenAfterLogs, sessionCreated, tempDir, turnCompleted } from '../../support/store/store-fixtures.js';

/** A session of one titled turn, each event in a record of its own. */
async function titledSession(dir: string, id: string): Promise<void> {
  const log = await FileEventLog.forSession(dir, id, { create: true });
  for (const input of [sessionCreated(id, dir), { type: 'session_configured', sessionId: id, title: `title of ${id}` } as const, turnCompleted(id)]) {
    await log.whenDurable(log.append(input).seq);
  }
  await log.close();
}

/** Titled sessions whose index is written after their logs: the index as a process left it. */
async function indexedSessions(dir: string, ids: string[]): Promise<SessionIndex> {
  for (const id of ids) await titledSession(dir, id);
  const index = await SessionIndex.open(dir);
  await index.flush();
  indexWrittenAfterLogs(dir);
  return index;
}

const recheck = (index: SessionIndex, open: string[] = []) => recheckChangedLogs(index, { isOpen: (id) => open.includes(id), pause: nextTurn, logger: silentLogger });

test('logs changed after the index was written are read again: damage marked, a cut log followed, failed kept; unchanged and open logs are not read', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const ids = ['ses_whole', 'ses_bad', 'ses_cut', 'ses_failed', 'ses_open', 'ses_locked'];
    for (const id of ids) await titledSession(dir, id);
    const first = await SessionIndex.open(dir);
    await first.setStatus('ses_failed', 'failed');
    await first.flush();
    indexWrittenAfterLogs(dir);
    // Changed while no process had them open: a record that does not decode, a tail lost, a touch.
    const bad = sessionLogPath(dir, 'ses_bad');
    const offset = readFileSync(bad).length;
    appendFileSync(bad, frameRecord(new Packr().pack([scanLogFile(bad).lastSeq + 1, 1, 'not a list of events'])));
    for (const id of ['ses_cut', 'ses_failed', 'ses_open', 'ses_locked']) cutAfterCreation(sessionLogPath(dir, id));
    // Open for writing in a process (here this one): its writer repaired it, and will report.
    const writer = await FileEventLog.forSession(dir, 'ses_locked', {});

    const index = await SessionIndex.open(dir);
    const counts = await recheck(index, ['ses_open']);
    await writer.close();
    assert.deepEqual(counts, { looked: 6, read: 3, changed: 3 }, 'the whole log is not read; the open and the locked ones are their writers\'');
    const of = (id: string) => index.get(id)!;
    assert.deepEqual([of('ses_bad').damaged, of('ses_bad').title], [{ code: 'log_corrupt', offset }, 'title of ses_bad']);
    assert.deepEqual([of('ses_cut').lastSeq, of('ses_cut').title, of('ses_cut').status], [1, undefined, 'active']);
    assert.deepEqual([of('ses_failed').lastSeq, of('ses_failed').status], [1, 'failed']);
    assert.deepEqual([of('ses_open').lastSeq, of('ses_open').title], [3, 'title of ses_open']);
    assert.deepEqual([of('ses_locked').lastSeq, of('ses_locked').title], [3, 'title of ses_locked']);
    assert.deepEqual([of('ses_whole').lastSeq, of('ses_whole').title, of('ses_whole').damaged], [3, 'title of ses_whole', undefined]);
    await index.flush();
    assert.deepEqual((await SessionIndex.open(dir)).get('ses_bad')!.damaged, { code: 'log_corrupt', offset }, 'and written');

  } finally {
    cleanup();
  }
});

test('an index rebuilt at its open read every log then: nothing to read again', async () => {
  const { dir, cleanup } = tempDir();
  try {
    await titledSession(dir, 'ses_one');
    const index = await SessionIndex.open(dir);
    assert.equal(index.rebuiltBecause, 'missing');
    assert.deepEqual(await recheck(index), { looked: 0, read: 0, changed: 0 });
  } finally {
    cleanup();
  }
});

test('a session deleted while its index write failed (its tombstone log in place, the index not written) is listed deleted once read again', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const first = await indexedSessions(dir, ['ses_gone', 'ses_kept']);
    // What SessionIndex.tombstone does first; its index write is what a full disk refused.
    await writeTombstoneLog(dir, first.get('ses_gone')!, Date.now(), nextTurn);

    const index = await SessionIndex.open(dir);
    assert.equal(index.get('ses_gone')!.status, 'active', 'the index file says so');
    assert.deepEqual(await recheck(index), { looked: 2, read: 1, changed: 1 });
    assert.equal(index.get('ses_gone')!.status, 'deleted');
    assert.deepEqual(index.list().sessions.map((s) => s.id), ['ses_kept']);
  } finally {
    cleanup();
  }
});

test('a log removed while the index was not looking: its session is deleted (listed no more, its id kept used)', async () => {
  const { dir, cleanup } = tempDir();
  try {
    await indexedSessions(dir, ['ses_removed', 'ses_kept']);
    rmSync(sessionLogPath(dir, 'ses_removed'));

    const index = await SessionIndex.open(dir);
    assert.deepEqual(await recheck(index), { looked: 2, read: 0, changed: 1 });
    assert.equal(index.get('ses_removed')!.status, 'deleted');
    assert.ok(index.isUsed('ses_removed'));
    assert.deepEqual(index.list().sessions.map((s) => s.id), ['ses_kept']);
    await index.flush();
    assert.equal((await SessionIndex.open(dir)).get('ses_removed')!.status, 'deleted', 'and written');
  } finally {
    cleanup();
  }
});

/** `ids` indexed with their logs, then `away`'s log moved aside, and an index rechecked and written: `away` is gone. */
async function logAway(dir: string, away: string, ids: string[]): Promise<{ gone: SessionIndex; path: string }> {
  await indexedSessions(dir, ids);
  const path = sessionLogPath(dir, away);
  renameSync(path, `${path}.away`);
  const gone = await SessionIndex.open(dir);
  await recheck(gone);
  await gone.flush();
  return { gone, path };
}

test('a gone log put back: its session comes back at the next recheck, as its log says, whatever the log\'s times', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const { gone, path } = await logAway(dir, 'ses_back', ['ses_back', 'ses_kept']);
    assert.deepEqual([gone.get('ses_back')!.status, gone.get('ses_back')!.gone], ['deleted', true]);
    assert.deepEqual(await recheck(await SessionIndex.open(dir)), { looked: 2, read: 0, changed: 0 }, 'gone still: stat\'ed, nothing read or written');

    // Moved back, and the index written again after that (another process's write): the log's
    // change time is before the index's, yet the session is back.
    renameSync(`${path}.away`, path);
    indexWrittenAfterLogs(dir);
    const index = await SessionIndex.open(dir);
    assert.deepEqual(await recheck(index), { looked: 2, read: 1, changed: 1 });
    const back = index.get('ses_back')!;
    assert.deepEqual([back.status, back.gone, back.title, back.lastSeq], ['active', undefined, 'title of ses_back', 3]);
    assert.deepEqual(index.list().sessions.map((s) => s.id).sort(), ['ses_back', 'ses_kept']);
    await index.flush();
    const reopened = await SessionIndex.open(dir);
    assert.deepEqual([reopened.get('ses_back')!.status, reopened.get('ses_back')!.gone], ['active', undefined], 'and written');
    assert.deepEqual(await recheck(reopened), { looked: 2, read: 0, changed: 0 });
  } finally {
    cleanup();
  }
});

test('a session back with its log is not made gone again by another process\'s older copy of its entry', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const { path } = await logAway(dir, 'ses_back', ['ses_back', 'ses_kept']);
    // A process (a daemon) that holds the entry gone, while another (an editor's agent) sees the log back.
    const stale = await SessionIndex.open(dir);
    renameSync(`${path}.away`, path);
    const other = await SessionIndex.open(dir);
    await recheck(other);
    await other.flush();
    assert.equal(other.get('ses_back')!.status, 'active');
    // The stale process writes the index for something else: it merges what the other wrote.
    await stale.setStatus('ses_kept', 'closed');
    await stale.flush();
    const onDisk = await SessionIndex.open(dir);
    assert.deepEqual([onDisk.get('ses_back')!.status, onDisk.get('ses_kept')!.status], ['active', 'closed']);
  } finally {
    cleanup();
  }
});

test('a session deleted for real (its tombstone) stays deleted when an old copy of its log is put back, and the copy is left as it is', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const first = await indexedSessions(dir, ['ses_deleted', 'ses_kept']);
    const path = sessionLogPath(dir, 'ses_deleted');
    const copy = readFileSync(path);
    await first.tombstone('ses_deleted');
    await first.flush();
    writeFileSync(path, copy);

    const index = await SessionIndex.open(dir);
    assert.deepEqual(await recheck(index), { looked: 1, read: 0, changed: 0 }, 'a deleted session\'s log is not even stat\'ed');
    assert.deepEqual([index.get('ses_deleted')!.status, index.get('ses_deleted')!.gone], ['deleted', undefined]);
    assert.deepEqual(index.list().sessions.map((s) => s.id), ['ses_kept']);
    assert.deepEqual(readFileSync(path), copy);
  } finally {
    cleanup();
  }
});

test('a gone session deleted (by its id) is deleted for good: its tombstone takes the log\'s place, and the log put back does not bring it back', async () => {
  const { dir, cleanup } = tempDir();
  try {
    await indexedSessions(dir, ['ses_gone', 'ses_kept']);
    const path = sessionLogPath(dir, 'ses_gone');
    const copy = readFileSync(path);
    rmSync(path);
    const index = await SessionIndex.open(dir);
    await recheck(index);
    await index.tombstone('ses_gone');
    assert.deepEqual([index.get('ses_gone')!.status, index.get('ses_gone')!.gone], ['deleted', undefined]);
    assert.ok(scanLogFile(path).header?.tombstone, 'a tombstone log in its place');
    await index.flush();
    writeFileSync(path, copy);

    const later = await SessionIndex.open(dir);
    assert.deepEqual(await recheck(later), { looked: 1, read: 0, changed: 0 });
    assert.equal(later.get('ses_gone')!.status, 'deleted');
    assert.deepEqual(later.list().sessions.map((s) => s.id), ['ses_kept']);
  } finally {
    cleanup();
  }
});

test("an entry made gone is newer than the entry it was, even with a clock behind the entry's time (a clock stepped back, a home shared across machines)", async () => {
  const entry: SessionEntry = { id: 'ses_a', cwd: '/w', title: 't', createdAt: 100, updatedAt: 5000, lastSeq: 3, status: 'active', model: 'm', mode: 'default' };
  const gone = entryAsLogSays(entry, undefined, 4000);
  assert.equal(gone.status, 'deleted');
  // Tied, the merge keeps the other process's copy (its own), and the session would be listed again with no log.
  assert.ok(gone.updatedAt > entry.updatedAt, `${gone.updatedAt}`);
});
