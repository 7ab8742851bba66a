// A foreground `troupe serve` and the signals of its terminal, which go to the terminal's foreground
// process group. Its close (SIGHUP): the daemon stops as on SIGTERM (docs/daemon.md §Start and stop),
// and its spawner and children, in a session of their own, are stopped by the daemon alone. Until
// 2026-12-07 every one of them died of Node's default action: daemon.json and the lock were left,
// and each running turn was cut off in its log, never completed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Daemon, printDaemonIfFailed, processesOfHome, tempDir, waitFor, type TestHooks } from '../../support/daemon.js';
import { readLogFile, sessionLogPath, sessionsDir } from '../../../src/store/index.js';

const script = { replies: [{ when: 'hang', items: [{ text: 'hanging' }, { hang: true }] }] };

/** Kills what is left of a daemon started in its own process group (the group outlives a test that fails half-way). */
function killLeftovers(t: TestHooks, d: Daemon): void {
  t.after(() => {
    for (const pid of processesOfHome(d.home)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
  });
}

test("SIGHUP to a foreground daemon's process group (its terminal closed) is a clean stop: the turn cancelled by the daemon, exit 0, its files removed, no process left", async (t) => {
  const d = await Daemon.start({ script, detached: true, env: { TROUPE_LOG: 'info' } });
  printDaemonIfFailed(t, d);
  killLeftovers(t, d);
  const c = d.connect('http');
  t.after(() => c.close());
  await c.init();
  const sessionId = (await c.agent.request('session/new', { cwd: tempDir(), mcpServers: [] })).sessionId;
  const prompt = c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hang' }] }).catch((e) => e);
  await c.until(() => c.updatesFor(sessionId, 'agent_message_chunk').length > 0, 'a running turn');
  const exited = new Promise<[number | null, string | null]>((r) => d.proc.once('exit', (code, signal) => r([code, signal])));
  process.kill(-d.proc.pid!, 'SIGHUP');
  assert.deepEqual(await exited, [0, null], 'a clean stop, not killed by the signal');
  await prompt;
  assert.deepEqual([existsSync(join(d.home, 'daemon.json')), existsSync(join(d.home, 'daemon.lock'))], [false, false], 'its state file and lock removed');
  await waitFor('no process of this home left', () => processesOfHome(d.home).length === 0);
  // The child neither died of the signal nor stopped on its own: the daemon cancelled its turn, and
  // the log has the turn's end.
  const { events } = (await readLogFile(sessionLogPath(sessionsDir(d.home), sessionId))) as { events: any[] };
  const end = events.find((e) => e.type === 'turn_completed');
  assert.deepEqual([end?.stopReason, end?.message], ['cancelled', 'cancelled: the daemon is shutting down']);
  assert.match(d.stderr, /stopping \{"signal":"SIGHUP"\}/);
  // Neither the spawner (an error: lost) nor a pooled child (replaced) went before the daemon let it.
  assert.doesNotMatch(d.stderr, / error |died/);
});

test("kill -9 of a foreground daemon's whole process group: its spawner, out of that group, still ends a child that outlives the daemon", async (t) => {
  // The session child lingers after its stdin ends (as a hung one would): only the spawner's SIGTERM
  // after its grace ends it. Had each child a session of its own and the spawner stayed in the
  // daemon's group, the kill would take the spawner and leave the child running for good.
  const linger = join(tempDir(), 'linger.mjs');
  writeFileSync(linger, "if (process.argv.includes('acp')) process.stdin.once('end', () => setInterval(() => {}, 1000));\n");
  const d = await Daemon.start({ script, detached: true, env: { NODE_OPTIONS: `--import=${pathToFileURL(linger).href}` } });
  killLeftovers(t, d);
  const c = d.connect('http');
  t.after(() => c.close());
  await c.init();
  await c.agent.request('session/new', { cwd: tempDir(), mcpServers: [] });
  const exited = new Promise((r) => d.proc.once('exit', r));
  process.kill(-d.proc.pid!, 'SIGKILL');
  await exited;
  await waitFor('no process of this home left', () => processesOfHome(d.home).length === 0, 30_000);
});
