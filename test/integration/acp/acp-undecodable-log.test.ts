// A log whose frames all check but one of whose records does not decode (spec/event-log.md §2):
// the agent still starts and serves every other session; that one is listed, and its requests are
// answered log_corrupt. Until 2026-12-06 the index's rebuild threw on it, and `troupe acp` (and
// `troupe serve`) did not start at all.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Packr } from 'msgpackr';
import { AcpChild } from '../../support/acp-child.js';
import { scanLogFile, sessionIndexPath, sessionLogPath, sessionsDir } from '../../../src/store/index.js';
import { frameRecord } from '../../../src/store/record-frame.codec.js';

const script = { replies: [[{ text: 'hello' }]] };

test('a log with a checksummed record that does not decode: the agent starts, lists it, serves the others, and answers its requests log_corrupt', async (t) => {
  const cwd = mkdtempSync(join(tmpdir(), 'troupe-ws-'));
  const first = AcpChild.start({ script });
  await first.initialize();
  const good = await first.newSession(cwd);
  const bad = await first.newSession(cwd);
  await first.prompt(bad, 'hi');
  assert.equal(await first.close(), 0);
  const home = first.home;
  const path = sessionLogPath(sessionsDir(home), bad);
  // The next record in seq order, CRC-valid, whose events are not a list: the scan accepts it.
  const lastSeq = scanLogFile(path).lastSeq;
  const damage = frameRecord(new Packr().pack([lastSeq + 1, 1, 'not a list of events']));
  appendFileSync(path, damage);
  assert.equal(scanLogFile(path).warnings.length, 0, 'the scan finds nothing wrong');
  const bytes = readFileSync(path);
  // The index is rebuilt from the logs (a missing index; a damaged one is rebuilt the same way).
  rmSync(sessionIndexPath(sessionsDir(home)));

  const second = AcpChild.start({ script, home });
  t.after(() => second.close());
  await second.initialize();
  const sessions = (await second.agent.request('session/list', { cwd })).sessions;
  assert.deepEqual(sessions.map((s: any) => s.sessionId).sort(), [good, bad].sort(), 'both are listed');
  // And the list says which one does not open, where (until 2026-12-07 only GET /v1/sessions did).
  const troupeOf = (id: string) => sessions.find((s: any) => s.sessionId === id)?._meta?.troupe;
  assert.deepEqual([troupeOf(good), troupeOf(bad)], [{ status: 'active' }, { status: 'active', damaged: { code: 'log_corrupt', offset: bytes.length - damage.length } }]);
  await assert.rejects(second.agent.request('session/load', { sessionId: bad, cwd, mcpServers: [] }), (err: any) => err.data?.code === 'log_corrupt' && err.data.path === path);
  await assert.rejects(second.agent.request('session/prompt', { sessionId: bad, prompt: [{ type: 'text', text: 'again' }] }), (err: any) => err.data?.code === 'log_corrupt');
  assert.ok(readFileSync(path).equals(bytes), 'the file is left as it is');
  // Everyone else is served.
  await second.agent.request('session/load', { sessionId: good, cwd, mcpServers: [] });
  assert.equal((await second.prompt(good, 'hi')).stopReason, 'end_turn');
  assert.match(second.stderr, new RegExp(`${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}.*does not decode`), 'a warning names the file');
  // It can still be deleted (its tombstone reads the frames, not the events).
  await second.agent.request('session/delete', { sessionId: bad }).catch((err: any) => assert.fail(`delete failed: ${err.message}`));
  assert.deepEqual((await second.agent.request('session/list', { cwd })).sessions.map((s: any) => s.sessionId), [good]);
  assert.deepEqual(second.schemaErrors, []);
});
