import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acquireLock } from '../../../src/daemon/daemon-home.js';
import { processStartTicks } from '../../../src/store/index.js';

/** A home whose daemon.lock holds `content`, and a live process that is not a daemon. */
async function homeWithLock(t: { after(fn: () => void): void }, content: (pid: number) => string): Promise<{ home: string; pid: number }> {
  const home = mkdtempSync(join(tmpdir(), 'troupe-lock-'));
  const other = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  t.after(() => {
    other.kill('SIGKILL');
    rmSync(home, { recursive: true, force: true });
  });
  await new Promise((r) => other.once('spawn', r));
  writeFileSync(join(home, 'daemon.lock'), content(other.pid!));
  return { home, pid: other.pid! };
}

const ownLock = () => `${process.pid} ${processStartTicks(process.pid)}`;

test('/proc gives the start of a process: the same for the same process, another for another one', () => {
  assert.match(processStartTicks(process.pid) ?? '', /^\d+$/);
  assert.equal(processStartTicks(process.pid), processStartTicks(process.pid));
  assert.notEqual(processStartTicks(process.ppid), processStartTicks(process.pid));
  assert.equal(processStartTicks(2 ** 22 + 1), undefined, 'no such pid');
});

test('a lock held by a running daemon (its pid and start) is refused with daemon_running', async (t) => {
  const { home, pid } = await homeWithLock(t, (p) => `${p} ${processStartTicks(p)}`);
  assert.throws(() => acquireLock(home), (err: any) => err.code === 'daemon_running' && err.data?.pid === pid);
});

test('a lock whose pid another process has since (a hard kill, then a reboot) is taken over', async (t) => {
  // The daemon that wrote it started at another time than the process that has its pid now.
  const { home } = await homeWithLock(t, (p) => `${p} ${Number(processStartTicks(p)) - 1}`);
  const lock = acquireLock(home);
  assert.equal(readFileSync(join(home, 'daemon.lock'), 'utf8'), ownLock());
  lock.release();
});

test('a lock naming a pid only (written by an older troupe) is held while that pid runs', async (t) => {
  const { home } = await homeWithLock(t, (p) => String(p));
  assert.throws(() => acquireLock(home), (err: any) => err.code === 'daemon_running');
});

test('a lock left by a process that is gone is taken over', async (t) => {
  const { home } = await homeWithLock(t, () => `${2 ** 22 + 1} 12345`);
  const lock = acquireLock(home);
  assert.equal(readFileSync(join(home, 'daemon.lock'), 'utf8'), ownLock());
  lock.release();
});
