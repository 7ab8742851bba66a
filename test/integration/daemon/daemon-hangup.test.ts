// The terminal of a foreground `troupe serve` closes: the kernel (or the shell) sends SIGHUP to the
// terminal's foreground process group. The daemon stops as on SIGTERM (docs/daemon.md §Start and
// stop), its spawner waits to be let go, and its children, each in a session of its own, are stopped
// by the daemon alone. Until 2026-12-07 every one of them died of Node's default action: daemon.json
// and the lock were left, and each running turn was cut off in its log, never completed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Daemon, printDaemonIfFailed, processesOfHome, tempDir, waitFor } from '../../support/daemon.js';
import { readLogFile, sessionLogPath, sessionsDir } from '../../../src/store/index.js';

const script = { replies: [{ when: 'hang', items: [{ text: 'hanging' }, { hang: true }] }] };

test("SIGHUP to a foreground daemon's process group (its terminal closed) is a clean stop: the turn cancelled by the daemon, exit 0, its files removed, no process left", async (t) => {
  const d = await Daemon.start({ script, detached: true, env: { TROUPE_LOG: 'info' } });
  printDaemonIfFailed(t, d);
  // Detached, the group outlives the test if it fails half-way: whatever is left goes.
  t.after(() => {
    for (const pid of processesOfHome(d.home)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
  });
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
