// Reviving a session that failed for good (spec/daemon.md §Supervision, §Management API): an
// operator who fixed the cause clears its failed status (POST /v1/sessions/:id/revive, `troupe
// sessions revive`), and its next message starts it from its log, its history intact. Until
// 2026-12-06 such a session answered session_failed for good, in every later daemon run too, and
// only deleting it (its history with it) made it go away.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { breakableStart, Daemon, daemonWithSession, tempDir, waitFor, type AcpClient } from '../../support/daemon.js';

const script = { replies: [{ when: 'ping', items: [{ text: 'pong' }] }, { when: 'again', items: [{ text: 'back again' }] }] };
const prompt = (c: AcpClient, sessionId: string, text: string) => c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text }] });
const isFailed = (e: any) => e?.data?.code === 'session_failed';

/** Breaks the session's starts and kills its process: one restart (the intensity) dies too, and it fails. */
async function failIt(d: Daemon, sessionId: string, broken: string): Promise<void> {
  writeFileSync(broken, '');
  process.kill((await d.api('GET', `/v1/sessions/${sessionId}`)).json.child.pid, 'SIGKILL');
  await waitFor('the session failed', async () => (await d.api('GET', `/v1/sessions/${sessionId}`)).json.status === 'failed');
}

/** The paths of the files a process has open (its /proc fd links). */
function openFiles(pid: number): string[] {
  const dir = `/proc/${pid}/fd`;
  const out: string[] = [];
  for (const fd of readdirSync(dir)) {
    try {
      out.push(readlinkSync(join(dir, fd)));
    } catch {
      // closed while we looked
    }
  }
  return out;
}

const revive = (d: Daemon, id: string) => d.api('POST', `/v1/sessions/${id}/revive`, {});

/** The CLI (`troupe ARGS…`) on the daemon of `d`'s home. */
const troupe = (d: Daemon, ...args: string[]) => spawnSync(process.execPath, [resolve('bin/troupe.js'), ...args], { env: { PATH: process.env.PATH ?? '', HOME: d.home, TROUPE_HOME: d.home }, encoding: 'utf8' });

/** No pool (each process is started for the session, and meets the cause), one restart allowed. */
const ONE_RESTART = ['--pool', '0', '--restart-intensity', '1', '--restart-period-ms', '60000'];

/** A daemon whose children can be broken (breakableStart), and a session of it that has answered once. */
async function answeredSession(t: { after(f: () => unknown): void }) {
  const { env, broken } = breakableStart();
  const started = await daemonWithSession(t, 'http', { script, args: ONE_RESTART, env });
  assert.equal((await prompt(started.c, started.sessionId, 'ping')).stopReason, 'end_turn');
  return { ...started, env, broken };
}

test('a failed session is revived by an operator: it fails again while the cause persists, and once it is gone its next prompt works, its history intact; unknown and healthy sessions are refused', { timeout: 120_000 }, async (t) => {
  const { d, c, sessionId, broken } = await answeredSession(t);

  const unknown = await revive(d, 'ses_00000000000000000000000000');
  assert.equal(unknown.status, 404);
  assert.equal(unknown.json.error.code, 'session_not_found');
  const healthy = await revive(d, sessionId);
  assert.equal(healthy.status, 409);
  assert.equal(healthy.json.error.code, 'session_not_failed');

  await failIt(d, sessionId, broken);
  await assert.rejects(prompt(c, sessionId, 'ping'), isFailed);
  // Revived with the cause still there: it is tried again, and fails again.
  const first = await revive(d, sessionId);
  assert.equal(first.status, 200, JSON.stringify(first.json));
  assert.deepEqual(first.json, { sessionId, revived: true });
  const after = (await d.api('GET', `/v1/sessions/${sessionId}`)).json;
  assert.equal(after.status, 'active');
  assert.equal(after.child.state, 'idleStopped');
  assert.deepEqual(after.machines, { child: 'idleStopped' });
  await assert.rejects(prompt(c, sessionId, 'ping'), isFailed);
  assert.equal((await d.api('GET', `/v1/sessions/${sessionId}`)).json.status, 'failed');

  // The cause gone, revived again: its next prompt starts it from its log.
  rmSync(broken);
  assert.equal((await revive(d, sessionId)).status, 200);
  assert.equal((await prompt(c, sessionId, 'again')).stopReason, 'end_turn');
  const other = d.connect('ws');
  t.after(() => other.close());
  await other.init();
  await other.agent.request('session/load', { sessionId, cwd: after.cwd, mcpServers: [] });
  const said = other.updatesFor(sessionId, 'agent_message_chunk').map((u) => u.content.text).join('|');
  assert.equal(said, 'pong|back again', 'its history is intact');
  assert.equal((await d.api('GET', `/v1/sessions/${sessionId}`)).json.status, 'active');
});

test('a session failed in an earlier daemon run is revived with `troupe sessions revive` and works from its history', { timeout: 120_000 }, async (t) => {
  const { d, c, sessionId, cwd, env, broken } = await answeredSession(t);
  await failIt(d, sessionId, broken);
  c.close();
  await d.stop();

  rmSync(broken);
  const again = await Daemon.start({ script, args: ONE_RESTART, env, home: d.home });
  t.after(() => again.stop());
  const later = again.connect('http');
  t.after(() => later.close());
  await later.init();
  await assert.rejects(later.agent.request('session/load', { sessionId, cwd, mcpServers: [] }), isFailed, 'still failed in the next daemon run');
  const cli = (...args: string[]) => troupe(again, 'sessions', ...args);
  const revived = cli('revive', sessionId);
  assert.equal(revived.status, 0, revived.stderr);
  assert.match(revived.stdout, new RegExp(`revived ${sessionId}`));
  const refused = cli('revive', sessionId, '--json');
  assert.notEqual(refused.status, 0);
  assert.match(refused.stderr, /session_not_failed/);
  await later.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  assert.equal((await prompt(later, sessionId, 'again')).stopReason, 'end_turn');
  const said = later.updatesFor(sessionId, 'agent_message_chunk').map((u) => u.content.text).join('|');
  assert.equal(said, 'pong|back again', 'its history is intact');
});

test('a revive the index cannot write (a full disk) is refused index_write_failed and leaves the session failed, the daemon serving; once written, the revived session restarts afresh: its window and its restarts count from 0', { timeout: 120_000 }, async (t) => {
  const { d, c, sessionId, broken } = await answeredSession(t);
  await failIt(d, sessionId, broken);
  const show = async () => (await d.api('GET', `/v1/sessions/${sessionId}`)).json;
  assert.equal((await show()).child.restarts, 1, 'the restart it failed after');
  rmSync(broken);

  // The daemon's own writes fail from now on (the index is rewritten whole: one byte short of it).
  const limit = (fsize: string) => spawnSync('prlimit', ['--pid', String(d.proc.pid), `--fsize=${fsize}:unlimited`]);
  assert.equal(limit(String(readFileSync(join(d.home, 'sessions', 'index.json')).length - 1)).status, 0);
  const refused = await revive(d, sessionId);
  // Until 2026-12-06 the errno error itself: 500 internal_error "EFBIG: file too large".
  assert.equal(refused.status, 507, JSON.stringify(refused.json));
  assert.equal(refused.json.error.code, 'index_write_failed');
  assert.deepEqual([(await show()).status, (await show()).child.state], ['failed', 'failed'], 'not revived: as it is on disk');
  await assert.rejects(prompt(c, sessionId, 'ping'), isFailed);
  assert.equal((await d.api('GET', '/v1/health')).status, 200, 'the daemon serves');
  assert.equal(limit('unlimited').status, 0);

  assert.equal((await revive(d, sessionId)).status, 200);
  // Until 2026-12-06 a revived session a client held went on showing the restart it failed with.
  assert.deepEqual([(await show()).child.state, (await show()).child.restarts], ['idleStopped', 0]);
  assert.equal((await prompt(c, sessionId, 'again')).stopReason, 'end_turn');
  // A crash now is its first restart in a fresh window (one is allowed): restarted, not failed.
  process.kill((await show()).child.pid, 'SIGKILL');
  await waitFor('the session restarted', async () => {
    const s = await show();
    return s.child.restarts === 1 && s.child.state === 'ready' && s;
  });
  assert.equal((await show()).status, 'active');
  assert.equal((await prompt(c, sessionId, 'ping')).stopReason, 'end_turn');
});

test('while a revive is being written the session is still failed: a message then is refused session_failed and starts nothing; the write failing (the index replaced by a directory), the revive is 507 index_write_failed, through the API and the CLI, and the session stays failed', { timeout: 120_000 }, async (t) => {
  const { d, c, sessionId, cwd, broken } = await answeredSession(t);
  await failIt(d, sessionId, broken);
  rmSync(broken); // a process started for it now would run: the bug would show
  // No client holds it: the index's status says whether a message may start it.
  c.close();
  await waitFor('the failed session released', async () => (await d.metric('troupe_sessions_held')) === 0);
  const indexPath = join(d.home, 'sessions', 'index.json');
  await waitFor('the index file says failed', () => JSON.parse(readFileSync(indexPath, 'utf8')).sessions.find((s: { id: string }) => s.id === sessionId)?.status === 'failed');
  const spawned = await d.metric('troupe_children_spawned_total');
  const client = d.connect('ws');
  t.after(() => client.close());
  await client.init();

  // The index a FIFO: each read of it by the daemon waits for this test to open the other end.
  rmSync(indexPath);
  assert.equal(spawnSync('mkfifo', [indexPath]).status, 0);
  const reviving = revive(d, sessionId);
  // First the revive reads what other processes wrote (nothing here), then its write reads the file
  // under the lock before it replaces it: held there, the write is under way. (The first read must be
  // over, its end of the FIFO closed, or the second open would pair with it.)
  await (await open(indexPath, 'w')).close();
  await waitFor('the first read of the index over', () => !openFiles(d.proc.pid!).includes(indexPath));
  const held = await open(indexPath, 'w');
  // Until 2026-12-07 the index said `active` in memory from here on, and this load started a process.
  await assert.rejects(client.agent.request('session/load', { sessionId, cwd, mcpServers: [] }), isFailed, 'a message during the write');
  assert.equal((await d.api('GET', `/v1/sessions/${sessionId}`)).json.status, 'failed', 'shown failed during the write');
  // The write fails: the file it replaces is a directory now.
  rmSync(indexPath);
  mkdirSync(indexPath);
  writeFileSync(join(indexPath, 'in-the-way'), '');
  await held.close();
  const refused = await reviving;
  assert.deepEqual([refused.status, refused.json.error?.code, refused.json.error?.data?.cause], [507, 'index_write_failed', 'EISDIR'], JSON.stringify(refused.json));
  assert.equal((await d.api('GET', `/v1/sessions/${sessionId}`)).json.status, 'failed', 'not revived: as it is on disk');
  await assert.rejects(client.agent.request('session/load', { sessionId, cwd, mcpServers: [] }), isFailed, 'a message after the failed write');
  const cli = troupe(d, 'sessions', 'revive', sessionId);
  assert.equal(cli.status, 1, cli.stdout + cli.stderr);
  assert.match(cli.stderr, /index_write_failed/);
  // The list is served from memory (until 2026-12-07 the unreadable file made it, and the revive, 500 internal_error).
  assert.equal((await d.api('GET', '/v1/sessions')).json.sessions.find((s: { id: string }) => s.id === sessionId)?.status, 'failed');
  assert.equal(await d.metric('troupe_children_spawned_total'), spawned, 'no process was started for it');

  // The way clear: revived, its next message starts it.
  rmSync(indexPath, { recursive: true });
  assert.equal((await revive(d, sessionId)).status, 200);
  await client.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  assert.equal((await prompt(client, sessionId, 'again')).stopReason, 'end_turn');
  assert.equal(JSON.parse(readFileSync(indexPath, 'utf8')).sessions.find((s: { id: string }) => s.id === sessionId).status, 'active');
});

test('a failed session no client holds any more is shown revived at once: its child machine goes to idleStopped (REVIVE) in the API, the CLI and the live transitions, and its next prompt works', { timeout: 120_000 }, async (t) => {
  const { d, c, sessionId, cwd, broken } = await answeredSession(t);
  await failIt(d, sessionId, broken);
  rmSync(broken);
  // Its client gone, the daemon lets go of it (relay.ts release): only its failed status and its
  // child's counts stay, and the machine hub's record of its child.
  c.close();
  await waitFor('the failed session released', async () => (await d.metric('troupe_sessions_held')) === 0);
  const show = async () => (await d.api('GET', `/v1/sessions/${sessionId}`)).json;
  const listed = async () => (await d.api('GET', '/v1/sessions')).json.sessions.find((s: { id: string }) => s.id === sessionId);
  assert.deepEqual([(await show()).status, (await show()).child?.state, (await show()).machines], ['failed', 'failed', { child: 'failed' }]);
  const lastN = (await show()).transitions.at(-1).n;

  assert.equal((await revive(d, sessionId)).status, 200);
  // As an idle-stopped session no client holds: no process, its child machine at rest. Until
  // 2026-12-07 its machines said `child: failed` until its next message started it.
  for (const s of [await show(), await listed()]) {
    assert.equal(s.status, 'active');
    assert.equal(s.child, null, 'no child of this daemon holds it');
    assert.equal(s.live, false);
    assert.deepEqual(s.machines, { child: 'idleStopped' });
  }
  const revivedBy = (await show()).transitions.filter((x: { n: number }) => x.n > lastN);
  assert.deepEqual(revivedBy.map(({ machine, state, event }: any) => ({ machine, state, event })), [{ machine: 'child', state: 'idleStopped', event: 'REVIVE' }], 'the revive is a transition of its child machine');
  const cli = (...args: string[]) => troupe(d, 'sessions', ...args);
  const json = cli('show', sessionId, '--json');
  assert.equal(json.status, 0, json.stderr);
  const shown = JSON.parse(json.stdout);
  assert.deepEqual([shown.status, shown.child, shown.machines], ['active', null, { child: 'idleStopped' }]);
  const text = cli('show', sessionId);
  assert.equal(text.status, 0, text.stderr);
  assert.match(text.stdout, /status {7}active\n/);
  assert.match(text.stdout, /process {6}not running\n/);
  assert.match(text.stdout, /machines {5}child: idleStopped\n/);

  const other = d.connect('ws');
  t.after(() => other.close());
  await other.init();
  await other.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  assert.equal((await prompt(other, sessionId, 'again')).stopReason, 'end_turn');
  assert.equal((await show()).status, 'active');
});

test('cancel and steer of a failed session are refused session_failed, through the management API and the CLI, held by a client or not; revived, they answer as for a session at rest; a failed session is deleted', { timeout: 120_000 }, async (t) => {
  const { d, c, sessionId, cwd, broken } = await answeredSession(t);
  const cancel = () => d.api('POST', `/v1/sessions/${sessionId}/cancel`, {});
  const steer = () => d.api('POST', `/v1/sessions/${sessionId}/steer`, { expectedTurnId: 'turn_00000000000000000000000000', text: 'go on' });
  const refusedFailed = async (why: string) => {
    for (const [name, r] of [['cancel', await cancel()], ['steer', await steer()]] as const) {
      assert.deepEqual([r.status, r.json.error?.code, r.json.error?.data?.sessionId], [503, 'session_failed', sessionId], `${name}, ${why}: ${JSON.stringify(r.json)}`);
    }
    // The CLI says so, with --turn too (it then does not ask the daemon for the running turn first),
    // and how to bring it back.
    const hint = `troupe sessions revive ${sessionId}`;
    for (const args of [['cancel', sessionId], ['steer', sessionId, 'go on'], ['steer', sessionId, '--turn', 'turn_00000000000000000000000000', 'go on']]) {
      const r = troupe(d, ...args);
      assert.equal(r.status, 1, `${args.join(' ')}, ${why}: ${r.stdout}${r.stderr}`);
      assert.ok(r.stderr.endsWith(`'${hint}' once its cause is fixed (session_failed)\n`), `${args.join(' ')}, ${why}: ${r.stderr}`);
    }
  };

  await failIt(d, sessionId, broken);
  // Until 2026-12-07 cancel answered {cancelled: false} and steer 409 no_active_turn (the CLI's steer
  // said session_failed only when it asked for the running turn, not with --turn).
  await refusedFailed('held by its client');
  c.close();
  await waitFor('the failed session released', async () => (await d.metric('troupe_sessions_held')) === 0);
  await refusedFailed('released');

  rmSync(broken);
  assert.equal((await revive(d, sessionId)).status, 200);
  assert.deepEqual([(await cancel()).status, (await cancel()).json], [200, { sessionId, cancelled: false }]);
  assert.deepEqual([(await steer()).status, (await steer()).json.error?.code], [409, 'no_active_turn']);
  const idle = troupe(d, 'cancel', sessionId);
  assert.deepEqual([idle.status, idle.stdout], [0, `${sessionId} has no running turn\n`]);
  const other = d.connect('ws');
  t.after(() => other.close());
  await other.init();
  await other.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  assert.equal((await prompt(other, sessionId, 'again')).stopReason, 'end_turn');

  // Failed again: deleted all the same, as any session.
  await failIt(d, sessionId, broken);
  const deleted = await d.api('DELETE', `/v1/sessions/${sessionId}`);
  assert.deepEqual([deleted.status, deleted.json], [200, { sessionId, deleted: true }]);
  assert.equal((await d.api('GET', `/v1/sessions/${sessionId}`)).status, 404);
  assert.equal((await cancel()).json.error?.code, 'session_not_found');
});
