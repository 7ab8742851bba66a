// A process killed (kill -9) after its sessions' logs took a title and a close, and before its
// delayed index write: the index still says `active` and no title. Opening the session brings its
// entry up to date with the log: in the store (catchUp), and in a real `troupe acp` (session/load).
// And the other way: a log that lost events its entry folded (a machine crash) makes the entry follow it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SessionIndex } from '../../../src/store/session-index.store.js';
import { makeDirs, sessionIndexPath, sessionLogPath, sessionsDir } from '../../../src/store/paths.js';
import { FileEventLog } from '../../../src/store/file-event-log.store.js';
import { AcpChild } from '../../support/acp-child.js';
import { cutAfterCreation, indexWrittenAfterLogs } from '../../support/store/store-fixtures.js';
import { scanLogFile } from '../../../src/store/log-file.reader.js';
import { waitFor, daemonWithClient } from '../../support/daemon.js';

const CHILD = join(dirname(fileURLToPath(import.meta.url)), 'index-window-child.js');
const TITLED = 'ses_titled';
const CLOSED = 'ses_closed';

/** A home whose index a kill -9 left behind its logs. */
async function crashedInTheWindow(): Promise<{ home: string; dir: string; cwd: string }> {
  const home = mkdtempSync(join(tmpdir(), 'troupe-home-'));
  const cwd = mkdtempSync(join(tmpdir(), 'troupe-ws-'));
  const dir = sessionsDir(home);
  makeDirs(dir, 0o700);
  const child = spawn(process.execPath, [CHILD, dir, cwd, TITLED, CLOSED], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => d.toString().includes('ready') && resolve());
    child.once('exit', (code) => reject(new Error(`child exited with ${code} before it was ready`)));
  });
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
  const onDisk = JSON.parse(readFileSync(sessionIndexPath(dir), 'utf8')).sessions as any[];
  const byId = new Map(onDisk.map((e) => [e.id, e]));
  assert.deepEqual([byId.get(TITLED).title, byId.get(TITLED).status, byId.get(CLOSED).status], [undefined, 'active', 'active'], 'the crash was in the window');
  return { home, dir, cwd };
}

test('the store: catching up with the log gives an entry its title, mode, turns and close', async () => {
  const { dir } = await crashedInTheWindow();
  const index = await SessionIndex.open(dir);
  assert.equal(index.get(TITLED)!.title, undefined, 'opening the index reads no log');
  for (const id of [TITLED, CLOSED]) {
    const log = await FileEventLog.open(sessionLogPath(dir, id), { readOnly: true, sessionId: id });
    await index.catchUp(id, log);
    await log.close();
  }
  const titled = index.get(TITLED)!;
  assert.deepEqual([titled.title, titled.mode, titled.status, titled.lastSeq], ['Renamed after a while', 'plan', 'active', 17]);
  assert.equal(index.get(CLOSED)!.status, 'closed');
  const again = await SessionIndex.open(dir);
  assert.equal(again.get(TITLED)!.title, 'Renamed after a while', 'and it is written');
  assert.equal(again.get(CLOSED)!.status, 'closed');
});

test('troupe acp: session/load of such a session lists it with its title from then on', async (t) => {
  const { home, dir, cwd } = await crashedInTheWindow();
  // Not read again at the agent's start (acp-list-recheck.test.ts): the opening of the session is tested here.
  indexWrittenAfterLogs(dir);
  const agent = AcpChild.start({ home });
  t.after(() => agent.close());
  await agent.initialize();
  const titleOf = async () => (await agent.agent.request('session/list', { cwd })).sessions.find((s: any) => s.sessionId === TITLED)?.title ?? null;
  assert.equal(await titleOf(), null);
  await agent.agent.request('session/load', { sessionId: TITLED, cwd, mcpServers: [] });
  assert.equal(await titleOf(), 'Renamed after a while');
  assert.deepEqual(agent.schemaErrors, []);
});

test('troupe serve: a client reviving such a session brings its entry up to date (the daemon writes the index for its children)', async (t) => {
  const { home, dir, cwd } = await crashedInTheWindow();
  indexWrittenAfterLogs(dir);
  const { d, c } = await daemonWithClient(t, 'http', { home });
  const entry = async (id: string) => (await d.api('GET', `/v1/sessions/${id}`)).json;
  assert.equal((await entry(TITLED)).title, undefined);
  await c.agent.request('session/load', { sessionId: TITLED, cwd, mcpServers: [] });
  await waitFor('the title in the daemon\'s index', async () => (await entry(TITLED)).title === 'Renamed after a while');
  assert.equal((await entry(TITLED)).mode, 'plan');
});

test('troupe serve: a session revived by another request (the daemon resumes it in its child) is caught up too, and what comes after wins', async (t) => {
  const { home, dir, cwd } = await crashedInTheWindow();
  indexWrittenAfterLogs(dir);
  const { d, c } = await daemonWithClient(t, 'ws', { home });
  const entry = async (id: string) => (await d.api('GET', `/v1/sessions/${id}`)).json;
  // Its first message is no load: the daemon's own session/resume opens it in the child.
  await c.agent.request('session/set_mode', { sessionId: TITLED, modeId: 'default' });
  await waitFor('the title in the daemon\'s index', async () => (await entry(TITLED)).title === 'Renamed after a while');
  await waitFor('the mode set after the open', async () => (await entry(TITLED)).mode === 'default');
  assert.equal((await entry(TITLED)).mode, 'default', 'the log\'s older mode (plan) did not come back');
});

test('troupe acp: a log cut short by a machine crash, once loaded, gives its entry back its lastSeq and title', async (t) => {
  const first = AcpChild.start({ script: { replies: [[{ text: 'hello' }]] } });
  await first.initialize();
  const cwd = mkdtempSync(join(tmpdir(), 'troupe-ws-'));
  const id = await first.newSession(cwd);
  await first.prompt(id, 'hi');
  assert.equal(await first.close(), 0);
  const dir = sessionsDir(first.home);
  const before = JSON.parse(readFileSync(sessionIndexPath(dir), 'utf8')).sessions.find((s: any) => s.id === id);
  assert.equal(before.title, 'hi', 'the turn titled the session');
  cutAfterCreation(sessionLogPath(dir, id));
  // Not read again at the agent's start (acp-list-recheck.test.ts): the opening of the session is tested here.
  indexWrittenAfterLogs(dir);

  const second = AcpChild.start({ home: first.home });
  t.after(() => second.close());
  await second.initialize();
  const listed = async () => (await second.agent.request('session/list', { cwd })).sessions.find((s: any) => s.sessionId === id);
  assert.equal((await listed())?.title, 'hi', 'the index has not read the log yet');
  await second.agent.request('session/load', { sessionId: id, cwd, mcpServers: [] });
  // Until 2026-12-07 the entry kept the title and lastSeq of the lost turn.
  assert.equal((await listed())?.title, undefined);
  await second.close();
  const after = JSON.parse(readFileSync(sessionIndexPath(dir), 'utf8')).sessions.find((s: any) => s.id === id);
  assert.deepEqual([after.lastSeq, after.title, after.status], [scanLogFile(sessionLogPath(dir, id)).lastSeq, undefined, 'active']);
  assert.ok(after.lastSeq < before.lastSeq, `${after.lastSeq} < ${before.lastSeq}`);
  assert.deepEqual(second.schemaErrors, []);
});
