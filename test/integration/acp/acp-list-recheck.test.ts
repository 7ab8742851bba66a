// An editor's `troupe acp` (no daemon) starting on logs changed while no agent ran: its session/list
// says what the logs say, as a daemon's does (spec/event-log.md §6, Recheck; docs/editors.md). Real
// log files, a real agent process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AcpChild } from '../../support/acp-child.js';
import { FileEventLog } from '../../../src/store/file-event-log.store.js';
import { scanLogFile } from '../../../src/store/log-file.reader.js';
import { sessionIndexPath, sessionLogPath, sessionsDir } from '../../../src/store/paths.js';
import { cutAfterCreation } from '../../support/store/store-fixtures.js';

test('troupe acp starting on logs cut by a crash, written on by another process, or removed: its first session/list says what they hold', async (t) => {
  const cwd = mkdtempSync(join(tmpdir(), 'troupe-ws-'));
  const first = AcpChild.start({ script: { replies: [{ when: 'hi', items: [{ text: 'hello' }] }] } });
  t.after(() => first.close());
  await first.initialize();
  const [cut, extended, removed, kept] = [await first.newSession(cwd), await first.newSession(cwd), await first.newSession(cwd), await first.newSession(cwd)];
  for (const id of [cut, extended, removed, kept]) await first.prompt(id, 'hi');
  assert.equal(await first.close(), 0);
  const dir = sessionsDir(first.home);
  // While no agent runs: a machine crash tears a tail, another process (killed before its index
  // write) renames and closes a session, and a log is removed.
  cutAfterCreation(sessionLogPath(dir, cut));
  const other = await FileEventLog.forSession(dir, extended, {});
  other.append({ type: 'session_configured', sessionId: extended, title: 'Renamed elsewhere' });
  other.append({ type: 'session_closed', sessionId: extended, reason: 'closed' });
  await other.close();
  rmSync(sessionLogPath(dir, removed));

  const second = AcpChild.start({ home: first.home });
  t.after(() => second.close());
  await second.initialize();
  // The first list, as an editor sends it right after initialize: nothing opened any of them.
  const listed = (await second.agent.request('session/list', { cwd })).sessions;
  const of = (id: string) => listed.find((s: any) => s.sessionId === id);
  // Until 2026-12-07 each was listed as the index file had it: 'hi', active, and the removed one too.
  assert.deepEqual([of(cut)?.title, of(cut)?._meta?.troupe], [undefined, { status: 'active' }]);
  assert.deepEqual([of(extended)?.title, of(extended)?._meta?.troupe], ['Renamed elsewhere', { status: 'closed' }]);
  assert.equal(of(removed), undefined, 'a session whose log is gone is not listed');
  assert.deepEqual([of(kept)?.title, of(kept)?._meta?.troupe], ['hi', { status: 'active' }]);
  await assert.rejects(second.agent.request('session/load', { sessionId: removed, cwd, mcpServers: [] }), (err: any) => err.data?.code === 'session_not_found');
  assert.equal(await second.close(), 0);
  // And the index file says it, the removed session's id kept as used.
  const onDisk = new Map((JSON.parse(readFileSync(sessionIndexPath(dir), 'utf8')).sessions as any[]).map((e) => [e.id, e]));
  assert.deepEqual([onDisk.get(cut).lastSeq, onDisk.get(cut).title], [scanLogFile(sessionLogPath(dir, cut)).lastSeq, undefined]);
  assert.equal(onDisk.get(removed).status, 'deleted');
  assert.deepEqual(second.schemaErrors, []);
});

test('troupe acp: a session whose log was gone is listed again once its log is back, and loads with its history; one deleted (before or after its log went) stays deleted with its log put back', async (t) => {
  const cwd = mkdtempSync(join(tmpdir(), 'troupe-ws-'));
  const first = AcpChild.start({ script: { replies: [{ when: 'hi', items: [{ text: 'hello' }] }] } });
  t.after(() => first.close());
  await first.initialize();
  const [moved, deleted, goneDeleted] = [await first.newSession(cwd), await first.newSession(cwd), await first.newSession(cwd)];
  for (const id of [moved, deleted, goneDeleted]) await first.prompt(id, 'hi');
  const dir = sessionsDir(first.home);
  const [movedPath, deletedPath, goneDeletedPath] = [moved, deleted, goneDeleted].map((id) => sessionLogPath(dir, id)) as [string, string, string];
  const backup = readFileSync(deletedPath);
  await first.agent.request('session/delete', { sessionId: deleted });
  assert.equal(await first.close(), 0);
  // While no agent runs, a log is moved away (a disk unmounted, a file moved by hand).
  for (const path of [movedPath, goneDeletedPath]) renameSync(path, `${path}.away`);
  const second = AcpChild.start({ home: first.home });
  t.after(() => second.close());
  await second.initialize();
  assert.deepEqual((await second.agent.request('session/list', { cwd })).sessions, [], 'gone, and deleted');
  // Deleted by its id once gone: for good, as any delete.
  assert.deepEqual(await second.agent.request('session/delete', { sessionId: goneDeleted }), {});
  assert.equal(await second.close(), 0);

  // Both put back while no agent runs: the moved log, and a backup of the deleted session's log.
  for (const path of [movedPath, goneDeletedPath]) renameSync(`${path}.away`, path);
  writeFileSync(deletedPath, backup);
  const third = AcpChild.start({ home: first.home });
  t.after(() => third.close());
  await third.initialize();
  const listed = (await third.agent.request('session/list', { cwd })).sessions;
  // Until 2026-12-07 the moved session stayed deleted for good, its history on disk and out of reach.
  assert.deepEqual(
    listed.map((s: any) => [s.sessionId, s.title, s._meta?.troupe]),
    [[moved, 'hi', { status: 'active' }]],
    'the moved one is back; the deleted ones are not',
  );
  await third.agent.request('session/load', { sessionId: moved, cwd, mcpServers: [] });
  assert.ok(third.updatesFor(moved, 'agent_message_chunk').some((u) => u.content.text === 'hello'), 'its history is replayed');
  for (const id of [deleted, goneDeleted]) {
    await assert.rejects(third.agent.request('session/load', { sessionId: id, cwd, mcpServers: [] }), (err: any) => err.data?.code === 'session_not_found');
  }
  assert.equal(await third.close(), 0);
  assert.deepEqual(readFileSync(deletedPath), backup, 'the copy put back is left as it is');
  assert.deepEqual(third.schemaErrors, []);
});
