import { mock, test } from 'node:test';
import fsPromises from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import assert from 'node:assert/strict';
import { appendFileSync, existsSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { Packr } from 'msgpackr';
import { join } from 'node:path';
import { isTroupeError } from '../../../src/core/errors.js';
import type { AgentEvent } from '../../../src/core/events.js';
import { FileEventLog } from '../../../src/store/file-event-log.store.js';
import { readLogFile } from '../../../src/store/log-file.reader.js';
import { encodeHeaderRecord, LOG_FORMAT_VERSION } from '../../../src/store/log-record.codec.js';
import { sessionLogPath } from '../../../src/store/paths.js';
import { frameRecord } from '../../../src/store/record-frame.codec.js';
import { SessionIndex } from '../../../src/store/session-index.store.js';
import { writeFileAtomic } from '../../../src/store/atomic-write.js';
import { chunk, sessionCreated, steppingClock, tempDir, turnCompleted } from '../../support/store/store-fixtures.js';
import { printedByModule } from '../../support/printed-by.js';

async function makeSession(dir: string, id: string, cwd: string, clock = steppingClock(), title?: string): Promise<FileEventLog> {
  const log = await FileEventLog.forSession(dir, id, { create: true, clock });
  log.append(sessionCreated(id, cwd));
  if (title) log.append({ type: 'session_configured', sessionId: id, title, mode: 'plan' });
  log.append(chunk(id, 'hello'));
  log.append(turnCompleted(id));
  return log;
}

test('atomic write: the file is replaced whole and no temp file is left behind', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const path = join(dir, 'x.json');
    await writeFileAtomic(path, 'one');
    await writeFileAtomic(path, 'two');
    assert.equal(readFileSync(path, 'utf8'), 'two');
    assert.deepEqual(readdirSync(dir), ['x.json']);
    // A crash between writing the temp file and the rename leaves a stray temp file but the old content.
    writeFileSync(join(dir, '.x.json.123.abc.tmp'), 'half');
    const index = await SessionIndex.open(dir);
    assert.equal(index.list().sessions.length, 0);
  } finally {
    cleanup();
  }
});

test('events update the index; it is persisted and reloaded as written', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const clock = steppingClock(5000);
    const index = await SessionIndex.open(dir, { clock });
    assert.equal(index.rebuiltBecause, 'missing');
    const log = await makeSession(dir, 'ses_a', '/work/a', clock, 'First');
    await index.applyEvents((await log.readAfter(0)).events);
    await log.close();
    const e = index.get('ses_a')!;
    assert.deepEqual(
      { cwd: e.cwd, title: e.title, model: e.model, mode: e.mode, status: e.status, lastSeq: e.lastSeq, createdAt: e.createdAt },
      { cwd: '/work/a', title: 'First', model: 'scripted/demo', mode: 'plan', status: 'active', lastSeq: 4, createdAt: 5000 },
    );
    await index.setStatus('ses_a', 'failed');
    const again = await SessionIndex.open(dir);
    assert.equal(again.rebuiltBecause, undefined);
    assert.deepEqual(again.get('ses_a'), index.get('ses_a'));
    assert.equal(again.get('ses_a')!.status, 'failed');
  } finally {
    cleanup();
  }
});

test('atomic write of parts: the file is the parts in order', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const path = join(dir, 'p.json');
    const parts = ['{"a":', '', '[1,2', ',3]', '}'].map((t) => Buffer.from(t));
    await writeFileAtomic(path, parts);
    assert.equal(readFileSync(path, 'utf8'), '{"a":[1,2,3]}');
    assert.deepEqual(readdirSync(dir), ['p.json']);
  } finally {
    cleanup();
  }
});

test('a missing or damaged index is rebuilt from the logs', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const clock = steppingClock(1000);
    for (const [id, cwd] of [['ses_1', '/p/one'], ['ses_2', '/p/two'], ['ses_3', '/p/one']] as const) {
      clock.advance(10);
      const log = await makeSession(dir, id, cwd, clock);
      if (id === 'ses_2') log.append({ type: 'session_closed', sessionId: id, reason: 'closed' });
      await log.close();
    }
    const built = await SessionIndex.open(dir);
    assert.equal(built.rebuiltBecause, 'missing');
    const expected = built.list({ includeDeleted: true }).sessions;
    assert.deepEqual(expected.map((e) => [e.id, e.cwd, e.status, e.lastSeq]), [
      ['ses_3', '/p/one', 'active', 3],
      ['ses_2', '/p/two', 'closed', 4],
      ['ses_1', '/p/one', 'active', 3],
    ]);
    // `gone` is said of a deleted entry only (spec/event-log.md §6).
    const goneActive = JSON.stringify({ version: 1, sessions: expected.map((e) => (e.id === 'ses_3' ? { ...e, gone: true } : e)) });
    for (const damage of ['{"version":1,"sessions":[{"id":"ses_1"', '{"version":99,"sessions":[]}', '', '{"version":1,"sessions":[{"id":"../x"}]}', goneActive]) {
      writeFileSync(built.path, damage);
      const re = await SessionIndex.open(dir);
      assert.equal(re.rebuiltBecause, 'damaged', damage);
      assert.deepEqual(re.list({ includeDeleted: true }).sessions, expected);
      assert.doesNotThrow(() => JSON.parse(readFileSync(built.path, 'utf8')), 'the rebuilt index was written');
    }
    rmSync(built.path);
    assert.deepEqual((await SessionIndex.open(dir)).list().sessions, expected);
  } finally {
    cleanup();
  }
});

test('a log the index does not know (crash before the index write) is adopted on open', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const index = await SessionIndex.open(dir);
    await (await makeSession(dir, 'ses_orphan', '/p')).close();
    assert.equal(index.get('ses_orphan'), undefined);
    assert.equal((await SessionIndex.open(dir)).get('ses_orphan')?.status, 'active');
  } finally {
    cleanup();
  }
});

test('spare logs: an unused one is no session (removed once its maker is gone); a used one is a session', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const deadSpare = (id: string) =>
      // pid 2^22+1 is above the default pid_max, so no such process exists.
      writeFileSync(sessionLogPath(dir, id), encodeHeaderRecord({ troupeLog: LOG_FORMAT_VERSION, sessionId: id, createdAt: 1, baseSeq: 0, spare: { pid: 4194305 } }));
    // Made ahead by this (live) process and not used yet.
    await (await FileEventLog.create(sessionLogPath(dir, 'ses_sparemine'), { sessionId: 'ses_sparemine', spare: true })).close();
    deadSpare('ses_sparedead');
    // Made ahead, then taken by a new session.
    const used = await FileEventLog.create(sessionLogPath(dir, 'ses_spareused'), { sessionId: 'ses_spareused', spare: true });
    used.append(sessionCreated('ses_spareused', '/p'));
    await used.close();
    // No index yet: rebuilt from the logs.
    const rebuilt = await SessionIndex.open(dir);
    assert.deepEqual(rebuilt.list().sessions.map((s) => s.id), ['ses_spareused']);
    assert.ok(existsSync(sessionLogPath(dir, 'ses_sparemine')), 'a live process may still take its spare');
    assert.ok(!existsSync(sessionLogPath(dir, 'ses_sparedead')), 'the spare of a process that is gone is removed');
    // With an index: logs it does not know are adopted the same way.
    deadSpare('ses_sparedead2');
    const reopened = await SessionIndex.open(dir);
    assert.deepEqual(reopened.list().sessions.map((s) => s.id), ['ses_spareused']);
    assert.ok(!existsSync(sessionLogPath(dir, 'ses_sparedead2')));
    assert.equal(reopened.isUsed('ses_sparemine'), false);
  } finally {
    cleanup();
  }
});

test('a spare log whose maker is gone but whose first event record is damaged is kept, listed damaged: it may be a session', async () => {
  const { dir, cleanup } = tempDir();
  try {
    // Every new log is marked spare until its first event; pid 2^22+1 is above the default pid_max.
    const spareWith = (id: string, after: Buffer) =>
      writeFileSync(sessionLogPath(dir, id), Buffer.concat([encodeHeaderRecord({ troupeLog: LOG_FORMAT_VERSION, sessionId: id, createdAt: 1, baseSeq: 0, spare: { pid: 4194305 } }), after]));
    // A CRC-valid record whose events do not decode, and one that fails its check.
    spareWith('ses_spareundecodable', frameRecord(new Packr().pack([1, 1, 'not a list of events'])));
    const framed = frameRecord(new Packr().pack([1, 1, 'any']));
    framed[framed.length - 1] = framed[framed.length - 1]! ^ 0xff;
    spareWith('ses_sparecorrupt', framed);
    spareWith('ses_spareempty', Buffer.alloc(0));
    const index = await SessionIndex.open(dir);
    for (const id of ['ses_spareundecodable', 'ses_sparecorrupt']) {
      assert.ok(existsSync(sessionLogPath(dir, id)), `${id}: its bytes are left as they are`);
      assert.equal(index.get(id)?.damaged?.code, 'log_corrupt', `${id} is listed, damaged`);
    }
    assert.ok(!existsSync(sessionLogPath(dir, 'ses_spareempty')), 'a spare with nothing after its header is still removed');
  } finally {
    cleanup();
  }
});

test("a spare log whose maker is alive and whose first record is still being written (torn, as a reader sees it) is no session yet, not one listed damaged; one whose first record fails its check is", async () => {
  const { dir, cleanup } = tempDir();
  try {
    // Made by this (live) process, its session_created appended: the whole file, then what a reader
    // sees while that append is under way (spec/event-log.md §2: a record being written shows torn).
    const log = await FileEventLog.create(sessionLogPath(dir, 'ses_sparewriting'), { sessionId: 'ses_sparewriting', spare: true });
    log.append(sessionCreated('ses_sparewriting', '/p'));
    await log.close();
    const whole = readFileSync(sessionLogPath(dir, 'ses_sparewriting'));
    writeFileSync(sessionLogPath(dir, 'ses_sparewriting'), whole.subarray(0, whole.length - 3));
    // A first record that fails its check is no record being written: listed damaged, maker alive or not.
    const framed = frameRecord(new Packr().pack([1, 1, 'any']));
    framed[framed.length - 1] = framed[framed.length - 1]! ^ 0xff;
    writeFileSync(
      sessionLogPath(dir, 'ses_sparemybad'),
      Buffer.concat([encodeHeaderRecord({ troupeLog: LOG_FORMAT_VERSION, sessionId: 'ses_sparemybad', createdAt: 1, baseSeq: 0, spare: { pid: process.pid } }), framed]),
    );
    const midWrite = await SessionIndex.open(dir);
    assert.equal(midWrite.get('ses_sparewriting'), undefined, 'its maker indexes it once written: not a damaged session with no cwd');
    assert.equal(midWrite.get('ses_sparemybad')?.damaged?.code, 'log_corrupt');
    assert.equal(readFileSync(sessionLogPath(dir, 'ses_sparewriting')).length, whole.length - 3, 'its bytes are left as they are');
    // The append done: the next index to open adopts it, as the session it is.
    writeFileSync(sessionLogPath(dir, 'ses_sparewriting'), whole);
    const written = await SessionIndex.open(dir);
    assert.equal(written.get('ses_sparewriting')?.cwd, '/p');
    assert.equal(written.get('ses_sparewriting')?.damaged, undefined);
  } finally {
    cleanup();
  }
});

test('tombstones: the log content is gone, the id stays used, and it survives a rebuild', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const index = await SessionIndex.open(dir);
    const log = await makeSession(dir, 'ses_del', '/p/del', steppingClock(), 'Secret');
    await index.applyEvents((await log.readAfter(0)).events);
    await log.close();
    await index.tombstone('ses_del');
    assert.equal(index.get('ses_del')!.status, 'deleted');
    assert.equal(index.list().sessions.length, 0, 'tombstones are hidden by default');
    assert.equal(index.list({ includeDeleted: true }).sessions.length, 1);
    const { events, scan } = await readLogFile(join(dir, 'ses_del.log'));
    assert.deepEqual(events.map((e) => [e.type, e.seq]), [['session_closed', 5]]);
    assert.equal(scan.header!.baseSeq, 4);
    assert.ok(!readFileSync(join(dir, 'ses_del.log')).includes('hello'), 'the content is gone');
    await assert.rejects(index.create({ id: 'ses_del', cwd: '/p', model: 'm', mode: 'default', createdAt: 1 }), (e: unknown) => isTroupeError(e, 'invalid_params'));
    await assert.rejects(FileEventLog.forSession(dir, 'ses_del', { create: true }), (e: unknown) => isTroupeError(e, 'session_not_found'));
    rmSync(index.path);
    const rebuilt = await SessionIndex.open(dir);
    assert.equal(rebuilt.get('ses_del')!.status, 'deleted');
    assert.equal(rebuilt.get('ses_del')!.cwd, '/p/del');
    assert.ok(rebuilt.isUsed('ses_del'));
    await assert.rejects(rebuilt.create({ id: 'ses_del', cwd: '/p', model: 'm', mode: 'default', createdAt: 1 }), (e: unknown) => isTroupeError(e, 'invalid_params'));
    await assert.rejects(rebuilt.setStatus('ses_del', 'active'), (e: unknown) => isTroupeError(e, 'session_not_found'));
  } finally {
    cleanup();
  }
});

test('list pages with a cursor, newest first, and filters by cwd', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const index = await SessionIndex.open(dir);
    for (let i = 0; i < 25; i++) {
      await index.create({ id: `ses_${String(i).padStart(3, '0')}`, cwd: i % 2 ? '/odd' : '/even', model: 'm', mode: 'default', createdAt: 1000 + Math.floor(i / 3) });
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = index.list({ limit: 4, cursor });
      assert.ok(page.sessions.length <= 4);
      seen.push(...page.sessions.map((s) => s.id));
      cursor = page.nextCursor;
    } while (cursor);
    const expected = Array.from({ length: 25 }, (_, i) => i)
      .sort((a, b) => Math.floor(b / 3) - Math.floor(a / 3) || b - a)
      .map((i) => `ses_${String(i).padStart(3, '0')}`);
    assert.deepEqual(seen, expected);
    const odd = index.list({ cwd: '/odd', limit: 100 }).sessions;
    assert.equal(odd.length, 12);
    assert.ok(odd.every((s) => s.cwd === '/odd'));
    assert.throws(() => index.list({ cursor: 'garbage' }), (e: unknown) => isTroupeError(e, 'invalid_cursor'));
  } finally {
    cleanup();
  }
});

test('refreshIfChanged picks up another process\'s entries; an index nobody else wrote since is not read again, by it or by a write', async () => {
  const { dir, cleanup } = tempDir();
  // Counts the reads of the index file (the store imports readFile from node:fs/promises; the
  // live binding follows the CommonJS export once synced).
  const reads: string[] = [];
  const realReadFile = fsPromises.readFile as (...args: unknown[]) => Promise<unknown>;
  const spy = mock.method(fsPromises, 'readFile', (...args: unknown[]) => {
    reads.push(String(args[0]));
    return realReadFile(...args);
  });
  syncBuiltinESMExports();
  try {
    const a = await SessionIndex.open(dir);
    const b = await SessionIndex.open(dir);
    await b.create({ id: 'ses_b', cwd: '/p', model: 'm', mode: 'default', createdAt: 2 });
    await b.flush();
    const readsOfIndex = () => reads.filter((p) => p === a.path).length;
    let before = readsOfIndex();
    await a.refreshIfChanged();
    assert.equal(readsOfIndex() - before, 1, 'b wrote it: a reads it');
    assert.deepEqual(a.list().sessions.map((s) => s.id), ['ses_b'], 'what b wrote after a opened');
    await a.create({ id: 'ses_a', cwd: '/p', model: 'm', mode: 'default', createdAt: 3 });
    await a.flush();
    before = readsOfIndex();
    await a.refreshIfChanged();
    await a.refreshIfChanged();
    assert.equal(readsOfIndex() - before, 0, 'a wrote it last: a stat, no read');
    assert.deepEqual(a.list().sessions.map((s) => s.id), ['ses_a', 'ses_b']);
    await a.setStatus('ses_b', 'closed');
    await a.flush();
    assert.equal(readsOfIndex() - before, 0, 'nor does its next write merge it again');
    await b.setStatus('ses_a', 'closed');
    before = readsOfIndex();
    await a.refreshIfChanged();
    assert.equal(readsOfIndex() - before, 1, 'b wrote it again: a reads it again');
    assert.equal(a.get('ses_a')?.status, 'closed');
    assert.equal(a.get('ses_b')?.status, 'closed', 'a\'s own change kept');
  } finally {
    spy.mock.restore();
    syncBuiltinESMExports();
    cleanup();
  }
});

test('several processes share the index: writes merge, and a deletion is never undone by a stale writer', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const a = await SessionIndex.open(dir);
    const b = await SessionIndex.open(dir);
    await a.create({ id: 'ses_a', cwd: '/p', model: 'm', mode: 'default', createdAt: 1 });
    await b.create({ id: 'ses_b', cwd: '/p', model: 'm', mode: 'default', createdAt: 2 });
    assert.deepEqual((await SessionIndex.open(dir)).list().sessions.map((s) => s.id), ['ses_b', 'ses_a'], 'b did not overwrite a');
    await a.tombstone('ses_b');
    // b still believes ses_b is active, and writes again.
    await b.applyEvents([{ type: 'session_configured', sessionId: 'ses_b', title: 'late', seq: 1, ts: 10 } as never]);
    const c = await SessionIndex.open(dir);
    assert.equal(c.get('ses_b')!.status, 'deleted');
    assert.equal(c.get('ses_a')!.status, 'active');
    await b.refresh();
    assert.equal(b.get('ses_b')!.status, 'deleted', 'refresh picks up the other process');
    // Concurrent writers through the lock: every entry lands.
    await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).create({ id: `ses_c${i}`, cwd: '/q', model: 'm', mode: 'default', createdAt: 100 + i })));
    assert.equal((await SessionIndex.open(dir)).list({ cwd: '/q', limit: 100 }).sessions.length, 10);
  } finally {
    cleanup();
  }
});

test('a lock left by a dead process does not block the index', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const index = await SessionIndex.open(dir);
    // pid 2^22+1 is above the default pid_max, so no such process exists.
    writeFileSync(index.path + '.lock', String(4194305));
    await index.create({ id: 'ses_x', cwd: '/p', model: 'm', mode: 'default', createdAt: 1 });
    assert.equal((await SessionIndex.open(dir)).get('ses_x')?.status, 'active');
    assert.ok(!readdirSync(dir).includes('index.json.lock'));
  } finally {
    cleanup();
  }
});

test('with writeDelayMs, a burst of changes is one write; flush writes at once', async () => {
  const { mkdtempSync, statSync, readFileSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { SessionIndex } = await import('../../../src/store/index.js');
  const dir = mkdtempSync(join(tmpdir(), 'troupe-index-delay-'));
  const index = await SessionIndex.open(dir, { writeDelayMs: 10_000 });
  const path = join(dir, 'index.json');
  const before = readFileSync(path, 'utf8');
  const ids = ['ses_delay_a', 'ses_delay_b', 'ses_delay_c'];
  const writes = ids.map((id, i) => index.create({ id, cwd: dir, model: 'scripted/demo', mode: 'default', createdAt: 1000 + i }));
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(readFileSync(path, 'utf8'), before, 'nothing written before the delay');
  await index.flush();
  await Promise.all(writes);
  const onDisk = JSON.parse(readFileSync(path, 'utf8')).sessions.map((s: { id: string }) => s.id);
  assert.deepEqual(onDisk.filter((id: string) => ids.includes(id)).sort(), ids);
  assert.ok(statSync(path).size > before.length);
});

test('adopt adds an entry for a new session once; the real session_created then fills it in', async () => {
  const { mkdtempSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const dir = mkdtempSync(join(tmpdir(), 'troupe-index-adopt-'));
  const index = await SessionIndex.open(dir);
  await index.adopt({ id: 'ses_adopted', cwd: dir, model: 'scripted/demo', mode: 'default', createdAt: 5 });
  await index.adopt({ id: 'ses_adopted', cwd: '/elsewhere', model: 'x/y', mode: 'plan', createdAt: 6 });
  assert.deepEqual([index.get('ses_adopted')?.model, index.get('ses_adopted')?.lastSeq], ['scripted/demo', 0]);
  await index.setStatus('ses_adopted', 'failed');
  assert.equal((await SessionIndex.open(dir)).get('ses_adopted')?.status, 'failed', 'written to disk');
});

test("a failed session stays failed: its child's events, reported after the daemon marked it (session_created, session_closed), do not make it active or closed", async () => {
  const { dir, cleanup } = tempDir();
  try {
    const index = await SessionIndex.open(dir);
    await index.adopt({ id: 'ses_failing', cwd: dir, model: 'scripted/demo', mode: 'default', createdAt: 5 });
    await index.setStatus('ses_failing', 'failed');
    const created = { type: 'session_created', sessionId: 'ses_failing', seq: 1, ts: 10, cwd: dir, model: 'scripted/demo', mode: 'default', additionalDirectories: [] } as unknown as AgentEvent;
    const closed = { type: 'session_closed', sessionId: 'ses_failing', seq: 2, ts: 11, reason: 'closed' } as unknown as AgentEvent;
    await index.applyEvents([created, closed]);
    assert.deepEqual([index.get('ses_failing')?.status, index.get('ses_failing')?.lastSeq], ['failed', 2]);
    await index.flush();
    assert.equal((await SessionIndex.open(dir)).get('ses_failing')?.status, 'failed');
  } finally {
    cleanup();
  }
});

test('flush waits for a delayed write: what changed before it is on disk when it resolves (a daemon exits right after)', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const index = await SessionIndex.open(dir, { writeDelayMs: 250 });
    // Neither awaited, as a daemon's relay makes them: each starts or joins the delayed write.
    void index.adopt({ id: 'ses_flushed', cwd: '/p', model: 'm', mode: 'default', createdAt: 1 });
    void index.setStatus('ses_flushed', 'failed');
    await index.flush();
    const onDisk = existsSync(index.path) ? JSON.parse(readFileSync(index.path, 'utf8')).sessions : [];
    assert.deepEqual(onDisk.map((e: { id: string; status: string }) => [e.id, e.status]), [['ses_flushed', 'failed']]);
  } finally {
    cleanup();
  }
});

test('the file is the plain JSON layout, and every change reaches it (entries serialized once are re-serialized when they change)', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const index = await SessionIndex.open(dir);
    const text = () => readFileSync(index.path, 'utf8');
    const layout = () => JSON.stringify(JSON.parse(text()), null, 1) + '\n';
    assert.equal(text(), layout(), 'empty index');
    for (const id of ['ses_b', 'ses_a', 'ses_c']) await index.create({ id, cwd: '/p', model: 'm', mode: 'default', createdAt: 1 });
    assert.equal(text(), layout());
    assert.deepEqual(JSON.parse(text()).sessions.map((s: { id: string }) => s.id), ['ses_a', 'ses_b', 'ses_c'], 'sorted by id');
    await index.setStatus('ses_b', 'closed');
    await index.tombstone('ses_c');
    await index.applyEvents([{ type: 'session_configured', sessionId: 'ses_a', title: 'named "x"\n', seq: 2, ts: 10 } as never]);
    assert.equal(text(), layout());
    const onDisk = new Map(JSON.parse(text()).sessions.map((s: { id: string }) => [s.id, s]));
    assert.equal((onDisk.get('ses_b') as { status: string }).status, 'closed');
    assert.equal((onDisk.get('ses_c') as { status: string }).status, 'deleted');
    assert.equal((onDisk.get('ses_a') as { title: string }).title, 'named "x"\n');
  } finally {
    cleanup();
  }
});

test('a change to any one entry reaches the file, the first and last of a cached block too', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const index = await SessionIndex.open(dir);
    const ids = Array.from({ length: 700 }, (_, i) => `ses_${String(i).padStart(4, '0')}`);
    await Promise.all(ids.map((id) => index.adopt({ id, cwd: '/p', model: 'm', mode: 'default', createdAt: 1 })));
    // The writer joins its entries' bytes in blocks of 256 (in id order) and reuses a block whose
    // entries did not change: these are the edges of its blocks, and some inside them.
    for (const at of [0, 1, 128, 254, 255, 256, 257, 511, 512, 513, 698, 699]) {
      await index.setStatus(ids[at]!, 'closed');
      await index.flush();
      const onDisk = (JSON.parse(readFileSync(index.path, 'utf8')) as { sessions: { id: string; status: string }[] }).sessions;
      assert.equal(onDisk.length, 700);
      assert.deepEqual(onDisk[at], index.get(ids[at]!), `the session at ${at} as changed`);
      assert.equal(onDisk.filter((s) => s.status === 'closed').length, index.list({ limit: 1000 }).sessions.filter((s) => s.status === 'closed').length);
    }
  } finally {
    cleanup();
  }
});

test('a log listed but gone before it is read (a spare its maker, or another opening index, removed meanwhile) is no session, and the index opens', async () => {
  const { dir, cleanup } = tempDir();
  try {
    await (await makeSession(dir, 'ses_kept', '/p')).close();
    // An index that opens lists the logs, then reads them one by one. A spare log may go in between:
    // its maker removes it when it stops, and another opening index removes the spares of a process
    // that is gone (two editors starting their agents at once). A dangling link is that moment held
    // still: listed, and nothing to read.
    symlinkSync(join(dir, 'ses_gone.removed'), sessionLogPath(dir, 'ses_gone'));
    const rebuilt = await SessionIndex.open(dir);
    assert.deepEqual(rebuilt.list().sessions.map((s) => s.id), ['ses_kept']);
    // With an index: the same, adopting the logs it does not know.
    const reopened = await SessionIndex.open(dir);
    assert.deepEqual(reopened.list().sessions.map((s) => s.id), ['ses_kept']);
    assert.equal(reopened.rebuiltBecause, undefined);
  } finally {
    cleanup();
  }
});

test('a change whose write failed (a full disk; here a file-size limit) is written by the next flush, not forgotten', async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  // In a process of its own, whose file-size limit it lowers and raises (prlimit, util-linux): the
  // write fails there for real, and the test's own process is left alone.
  const script = `
    const { execFileSync } = await import('node:child_process');
    const { readFileSync } = await import('node:fs');
    const { SessionIndex } = await import(${JSON.stringify(new URL('../../../src/store/session-index.store.js', import.meta.url).href)});
    const limit = (fsize) => execFileSync('prlimit', ['--pid', String(process.pid), '--fsize=' + fsize + ':unlimited']);
    const index = await SessionIndex.open(${JSON.stringify(dir)});
    await index.create({ id: 'ses_marked', cwd: '/p', model: 'm', mode: 'default', createdAt: 1 });
    const out = {};
    limit(readFileSync(index.path).length - 1);
    try { await index.setStatus('ses_marked', 'failed'); out.write = 'written'; } catch (e) { out.write = e.code + ' ' + e.data.cause; }
    limit('unlimited');
    await index.flush();
    console.log(JSON.stringify(out));`;
  const out = await printedByModule(script);
  assert.deepEqual(JSON.parse(out), { write: 'index_write_failed EFBIG' }, 'the write failed');
  // `failed` is the one status no rebuild recovers from the logs: only the file keeps it.
  const onDisk = JSON.parse(readFileSync(join(dir, 'index.json'), 'utf8')).sessions;
  assert.deepEqual(onDisk.map((e: { id: string; status: string }) => [e.id, e.status]), [['ses_marked', 'failed']]);
  assert.deepEqual(readdirSync(dir).filter((n) => n.endsWith('.tmp')), [], 'no temp file left behind');
});

test("a log that does not open (a record that does not decode; no event surviving its damage) is listed with `damaged` and its status kept; the next event folded, or its delete, clears it", async () => {
  const { dir, cleanup } = tempDir();
  try {
    const undecodable = await makeSession(dir, 'ses_undecodable', '/p');
    const lastSeq = undecodable.lastSeq();
    await undecodable.close();
    const path = sessionLogPath(dir, 'ses_undecodable');
    const offset = statSync(path).size;
    // The next record in seq order, CRC-valid, whose events are not a list: the scan accepts it.
    appendFileSync(path, frameRecord(new Packr().pack([lastSeq + 1, 1, 'not a list of events'])));
    // A log whose first event record fails its check: an open refuses to repair it into an empty session.
    const unopenable = await makeSession(dir, 'ses_unopenable', '/p');
    await unopenable.close();
    const bytes = readFileSync(sessionLogPath(dir, 'ses_unopenable'));
    const firstEvent = readLogFile(sessionLogPath(dir, 'ses_unopenable')).then((c) => c.scan.checkpoints.offsetFor(1));
    const at = (await firstEvent) + 12;
    bytes[at] = bytes[at]! ^ 0xff;
    writeFileSync(sessionLogPath(dir, 'ses_unopenable'), bytes);
    await (await makeSession(dir, 'ses_fine', '/p')).close();

    const index = await SessionIndex.open(dir);
    const damage = (id: string) => index.get(id)?.damaged;
    // Until 2026-12-06 both were listed `active` (or `closed`) and nothing said they would not open.
    assert.deepEqual(damage('ses_undecodable'), { code: 'log_corrupt', offset });
    assert.equal(index.get('ses_undecodable')!.status, 'active', 'its status is what its log says');
    assert.deepEqual(damage('ses_unopenable'), { code: 'log_corrupt', offset: await firstEvent });
    assert.equal(damage('ses_fine'), undefined);
    // Kept in the file, read back as written.
    const reopened = await SessionIndex.open(dir);
    assert.equal(reopened.rebuiltBecause, undefined);
    assert.deepEqual(reopened.get('ses_undecodable')!.damaged, { code: 'log_corrupt', offset });
    // A process that opened the log (repaired by hand) folds its events: the damage is gone.
    await index.applyEvents([{ ...turnCompleted('ses_undecodable'), seq: lastSeq + 5, ts: Date.now() } as AgentEvent]);
    assert.equal(damage('ses_undecodable'), undefined);
    await index.tombstone('ses_unopenable');
    assert.equal(damage('ses_unopenable'), undefined, "a tombstone's log opens");
    await index.rebuild();
    assert.equal(damage('ses_unopenable'), undefined, 'and a rebuild agrees');
  } finally {
    cleanup();
  }
});

test('index writes on a full disk (here a file-size limit) fail typed, index_write_failed with the errno; a revive is undone, a delete and an open from the logs go on', async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  for (const id of ['ses_a', 'ses_b', 'ses_c']) await (await makeSession(dir, id, '/p')).close();
  // In a process of its own, whose file-size limit it lowers and raises (prlimit, util-linux).
  const script = `
    const { execFileSync } = await import('node:child_process');
    const { readFileSync, rmSync } = await import('node:fs');
    const { SessionIndex } = await import(${JSON.stringify(new URL('../../../src/store/session-index.store.js', import.meta.url).href)});
    const limit = (fsize) => execFileSync('prlimit', ['--pid', String(process.pid), '--fsize=' + fsize + ':unlimited']);
    const failure = async (f) => { try { await f(); return 'done'; } catch (e) { return [e.code, e.data?.cause ?? null].join(' '); } };
    const out = {};
    let index = await SessionIndex.open(${JSON.stringify(dir)});
    await index.setStatus('ses_a', 'failed');
    limit(readFileSync(index.path).length - 1);
    out.setStatus = await failure(() => index.setStatus('ses_b', 'closed'));
    out.create = await failure(() => index.create({ id: 'ses_new', cwd: '/p', model: 'm', mode: 'default', createdAt: 1 }));
    out.revive = await failure(() => index.clearFailed('ses_a'));
    out.revivedStatus = index.get('ses_a').status;
    // The tombstone log is smaller than the limit: it is written, the index is not.
    out.tombstone = await failure(() => index.tombstone('ses_c'));
    out.deletedStatus = index.get('ses_c').status;
    limit(1);
    out.tombstoneLog = await failure(() => index.tombstone('ses_b'));
    // Opening on a full disk, the file gone: rebuilt from the logs in memory, not written.
    rmSync(index.path);
    out.open = await failure(async () => (index = await SessionIndex.open(${JSON.stringify(dir)})));
    out.listed = index.list({ includeDeleted: true }).sessions.map((s) => s.id + ' ' + s.status).sort();
    limit('unlimited');
    await index.flush();
    console.log(JSON.stringify(out));`;
  const out = await printedByModule(script);
  // Until 2026-12-06 each of these was the errno error itself (EFBIG here, ENOSPC on a full disk),
  // and an index could not open at all on a full disk.
  assert.deepEqual(JSON.parse(out), {
    setStatus: 'index_write_failed EFBIG',
    create: 'index_write_failed EFBIG',
    revive: 'index_write_failed EFBIG',
    revivedStatus: 'failed',
    tombstone: 'done',
    deletedStatus: 'deleted',
    tombstoneLog: 'log_write_failed EFBIG',
    open: 'done',
    // What the logs say: `failed` and `closed` were never written, nor the session the logs do not have.
    listed: ['ses_a active', 'ses_b active', 'ses_c deleted'],
  });
  const onDisk = JSON.parse(readFileSync(join(dir, 'index.json'), 'utf8')).sessions;
  assert.deepEqual(onDisk.map((e: { id: string; status: string }) => `${e.id} ${e.status}`), ['ses_a active', 'ses_b active', 'ses_c deleted'], 'written once the disk takes it');
});
