// A stale lock is removed as the very file found stale, by one process at a time (src/store/stale-lock.ts):
// the "breaker" file named by its identity. These cases set the files up as processes killed at the
// worst moment would leave them; lock-race.test.ts races real processes on a stale lock.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createExclusive } from '../../../src/store/exclusive-create.js';
import { withFileLock } from '../../../src/store/file-lock.js';
import { takeProcessLock } from '../../../src/store/process-lock.js';
import { ownLockLine, readLock, removeLockIfStill } from '../../../src/store/stale-lock.js';
import { tempDir } from '../../support/store/store-fixtures.js';

// Above the default pid_max: no such process exists.
const DEAD = String(2 ** 22 + 1);
const refused = (holder: number | undefined) => Object.assign(new Error('refused'), { holder });

/** A dead process's lock at `lock`, and the breaker file a process breaking it would make, holding `breakerLine`. */
function staleLockBeingBroken(lock: string, breakerLine: string): string {
  writeFileSync(lock, DEAD);
  const breaker = `${lock}.${readLock(lock)!.key}.break`;
  writeFileSync(breaker, breakerLine);
  return breaker;
}

test('the race, one step at a time: a contender that found the lock stale, but was overtaken, leaves the fresh lock of the one that overtook it', (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const lock = join(dir, 's.log.lock');
  writeFileSync(lock, DEAD);
  // Contender A reads the lock and finds its holder dead...
  const seenByA = readLock(lock)!;
  // ...contender B does the same, and is first to break it and take its own.
  const release = takeProcessLock(lock, refused);
  const fresh = readFileSync(lock, 'utf8');
  // A now breaks what it found stale: it must not take B's lock away (then both would hold it).
  assert.equal(removeLockIfStill(lock, seenByA), true, 'A may try to take the lock now');
  assert.equal(readFileSync(lock, 'utf8'), fresh, "B's lock is in place");
  assert.throws(() => takeProcessLock(lock, refused), (err: Error & { holder?: number }) => err.holder === process.pid, 'A is refused, B named');
  release();
  assert.deepEqual(readdirSync(dir), []);
});

test('a breaker left by a process killed while breaking a stale lock does not keep that lock for good', async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const lock = join(dir, 's.log.lock');
  staleLockBeingBroken(lock, `${Number(DEAD) + 1} 12345`);
  const release = takeProcessLock(lock, refused);
  assert.equal(readFileSync(lock, 'utf8'), ownLockLine());
  release();
  assert.deepEqual(readdirSync(dir), [], 'the lock, the breaker and the temp files are gone');

  const index = join(dir, 'index.json.lock');
  staleLockBeingBroken(index, String(Number(DEAD) + 1));
  assert.equal(await withFileLock(index, async () => readFileSync(index, 'utf8'), { timeoutMs: 5_000 }), String(process.pid));
  assert.deepEqual(readdirSync(dir), []);
});

test('a stale lock that a live process is breaking is left to it; once that process is gone, it is taken over', async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const other = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  t.after(() => other.kill('SIGKILL'));
  await new Promise((r) => other.once('spawn', r));
  const lock = join(dir, 's.log.lock');
  const breaker = staleLockBeingBroken(lock, String(other.pid));
  assert.throws(() => takeProcessLock(lock, refused), (err: Error & { holder?: number }) => err.message === 'refused' && err.holder === undefined);
  assert.equal(readFileSync(lock, 'utf8'), DEAD, 'not removed under the breaker');
  assert.equal(readFileSync(breaker, 'utf8'), String(other.pid), "the breaker is the other's still");
  other.kill('SIGKILL');
  await new Promise((r) => other.once('exit', r));
  takeProcessLock(lock, refused)();
  assert.deepEqual(readdirSync(dir), []);
});

test("a holder whose lock was broken meanwhile (held past staleMs) does not remove the next holder's lock when it finishes", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const lock = join(dir, 'index.json.lock');
  const next = `${Number(DEAD) + 2}`;
  await withFileLock(lock, async () => {
    // What another writer does when it finds this lock older than staleMs: it breaks it and takes its own.
    rmSync(lock);
    createExclusive(lock, next);
  });
  assert.equal(readFileSync(lock, 'utf8'), next);
});
