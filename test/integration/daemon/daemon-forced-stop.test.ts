// A stop that takes longer than its time (TROUPE_SHUTDOWN_TIMEOUT_MS, 30 s by default): a session's
// process stopped by SIGSTOP takes neither its stdin's end nor SIGTERM, so its stop waits for the
// SIGKILL after twice the children's grace (5 s). The daemon kills its children, and still removes
// daemon.json and releases its lock before it exits 1: until 2026-12-07 it exited with both left behind.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Daemon, printDaemonIfFailed, processesOfHome, tempDir, waitFor } from '../../support/daemon.js';

test('a stop past TROUPE_SHUTDOWN_TIMEOUT_MS (a session process held by SIGSTOP): children killed, daemon.json and the lock removed, exit 1, no process left', async (t) => {
  const d = await Daemon.start({ env: { TROUPE_SHUTDOWN_TIMEOUT_MS: '1000', TROUPE_LOG: 'info' } });
  printDaemonIfFailed(t, d);
  t.after(() => {
    for (const pid of processesOfHome(d.home)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
  });
  const c = d.connect('ws');
  t.after(() => c.close());
  await c.init();
  const sessionId = (await c.agent.request('session/new', { cwd: tempDir(), mcpServers: [] })).sessionId;
  const child = (await d.api('GET', `/v1/sessions/${sessionId}`)).json.child;
  assert.equal(typeof child?.pid, 'number', JSON.stringify(child));
  process.kill(child.pid, 'SIGSTOP');
  assert.equal(await d.stop(), 1, 'the forced stop exits 1');
  assert.match(d.stderr, /shutdown took too long; killing children \{"timeoutMs":1000\}/);
  assert.deepEqual([existsSync(join(d.home, 'daemon.json')), existsSync(join(d.home, 'daemon.lock'))], [false, false], 'its state file and lock removed');
  await waitFor('no process of this home left', () => processesOfHome(d.home).length === 0);
});
