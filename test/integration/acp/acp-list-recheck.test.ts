// An editor's `troupe acp` (no daemon) starting on logs changed while no agent ran: its session/list
// says what the logs say, as a daemon's does (spec/event-log.md §6, Recheck; docs/editors.md). Real
// log files, a real agent process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
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
