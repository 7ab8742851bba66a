// `daemon_state_lost` (a daemon holds the home's lock, but daemon.json does not lead to it) says how
// to be rid of that daemon, and what it says must be what `troupe daemon stop` does: stop signals the
// lock's holder when the lock names its start time too (where /proc gives it), and leaves a pid alone
// otherwise (no /proc: the pid may be another process's by now). A lock line without a start time
// is what a daemon writes where there is no /proc. The holder here is a real process standing for
// the daemon (only its pid and start are looked at).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DaemonStateLostError, findDaemon } from '../../../src/cli/daemon-locate.js';
import { stopDaemon } from '../../../src/cli/daemon-process.js';
import { isProcessAlive, processStartTicks } from '../../../src/store/index.js';
import { tempDir } from '../../support/store/store-fixtures.js';

/** A home with no daemon.json whose daemon.lock, taken a minute ago, holds `line(pid)` of a live process. */
async function homeHeldBy(t: { after(fn: () => void): void }, line: (pid: number) => string): Promise<{ home: string; holder: ChildProcess & { pid: number } }> {
  const { dir, cleanup } = tempDir('troupe-state-lost-');
  const holder = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  t.after(() => {
    holder.kill('SIGKILL');
    cleanup();
  });
  await once(holder, 'spawn');
  const lock = join(dir, 'daemon.lock');
  writeFileSync(lock, line(holder.pid!));
  // Not a daemon still starting (the CLI waits up to 15 s after the lock was taken for one).
  const longAgo = new Date(Date.now() - 60_000);
  utimesSync(lock, longAgo, longAgo);
  return { home: dir, holder: holder as ChildProcess & { pid: number } };
}

async function lost(home: string): Promise<DaemonStateLostError> {
  const err = await findDaemon(home).then(
    () => assert.fail('findDaemon found a daemon'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof DaemonStateLostError, String(err));
  return err;
}

const preamble = (pid: number, home: string) =>
  `a daemon (pid ${pid}) holds ${join(home, 'daemon.lock')}, but ${join(home, 'daemon.json')} is missing, and the daemon has not written it again (stopping, hung, a full disk, or older than this CLI: 'troupe daemon logs' may say): `;

describe('the hint of daemon_state_lost is what daemon stop does', { concurrency: true }, () => {
  test("a lock naming its holder's start time: daemon stop stops it, as the hint says", async (t) => {
    const { home, holder } = await homeHeldBy(t, (pid) => `${pid} ${processStartTicks(pid)}`);
    const err = await lost(home);
    assert.equal(err.pid, holder.pid);
    assert.equal(err.message, `${preamble(holder.pid, home)}'troupe daemon stop' stops it, then the next command starts one`);
    const exited = once(holder, 'exit');
    assert.deepEqual(await stopDaemon(home, 10_000), { pid: holder.pid });
    assert.deepEqual(await exited, [null, 'SIGTERM']);
  });

  test('a lock naming its pid only (no /proc): daemon stop leaves it alone, and the hint says so and what to do instead', async (t) => {
    const { home, holder } = await homeHeldBy(t, (pid) => String(pid));
    const err = await lost(home);
    assert.equal(err.pid, holder.pid);
    // Until 2026-12-07: "'troupe daemon stop' stops it, then the next command starts one".
    assert.equal(
      err.message,
      `${preamble(holder.pid, home)}its lock names pid ${holder.pid} without its start time, so 'troupe daemon stop' cannot tell it is still that daemon and leaves it alone: if it is a troupe daemon, kill ${holder.pid}, else remove ${join(home, 'daemon.lock')}; then the next command starts one`,
    );
    await assert.rejects(stopDaemon(home, 10_000), (e: any) => e.code === 'daemon_unreachable' && e.message.includes(`kill ${holder.pid}`));
    assert.ok(isProcessAlive(holder.pid) && holder.exitCode === null && holder.signalCode === null, 'left alone');
  });
});
