// A SIGTERM that comes while `troupe serve` starts (a service manager stopping it, Ctrl-C on a slow
// start) stops it cleanly once it serves (docs/daemon.md §Start and stop). The start is held at a
// known point: the session index is a FIFO, which the daemon's read waits on until it is written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN } from '../../support/cli/cli-harness.js';

test('a SIGTERM while the daemon starts: it comes up, then stops cleanly (exit 0, its files removed)', async (t) => {
  const home = mkdtempSync(join(tmpdir(), 'troupe-start-signal-'));
  mkdirSync(join(home, 'sessions'));
  const index = join(home, 'sessions', 'index.json');
  execFileSync('mkfifo', [index]);
  const proc = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--pool', '0'], { env: { PATH: process.env.PATH ?? '', HOME: home, TROUPE_HOME: home }, stdio: ['ignore', 'ignore', 'pipe'] });
  t.after(() => proc.kill('SIGKILL'));
  let stderr = '';
  proc.stderr!.on('data', (x) => (stderr += x));
  const exited = once(proc, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  // Past its lock, the daemon reads the index: the FIFO opens for this writer once the daemon opens
  // it to read, and the daemon's read then waits for what is written.
  const writer = await open(index, 'w');
  proc.kill('SIGTERM');
  try {
    await writer.write('{"version":1,"sessions":[]}');
  } catch (err) {
    // A daemon the signal ended has no reader left.
    if ((err as NodeJS.ErrnoException).code !== 'EPIPE') throw err;
  }
  await writer.close();
  // Until 2026-12-07 Node's default action ended it there: killed by SIGTERM, its lock left.
  const [code, signal] = await exited;
  assert.deepEqual([code, signal], [0, null], stderr);
  assert.match(stderr, /daemon listening on/);
  assert.deepEqual([existsSync(join(home, 'daemon.json')), existsSync(join(home, 'daemon.lock'))], [false, false]);
});
