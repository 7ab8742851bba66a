// One writer per session log (spec/event-log.md §2): a second writer, in this process or another, is
// refused before it reads, repairs or writes anything; a lock whose process is gone is taken over.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isTroupeError } from '../../../src/core/errors.js';
import { FileEventLog } from '../../../src/store/file-event-log.store.js';
import { logLockPath } from '../../../src/store/log-lock.js';
import { processStartTicks } from '../../../src/store/index.js';
import { chunk, tempDir } from '../../support/store/store-fixtures.js';
import { printedByModule } from '../../support/printed-by.js';

const SID = 'ses_locked';

/** A live process that is not troupe, and its lock line. */
async function otherProcess(t: { after(fn: () => void): void }): Promise<{ pid: number; line: string }> {
  const proc = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  t.after(() => proc.kill('SIGKILL'));
  await new Promise((r) => proc.once('spawn', r));
  return { pid: proc.pid!, line: `${proc.pid} ${processStartTicks(proc.pid!)}` };
}

test('a log open for writing is locked: a second writer is refused (session_locked), a reader is not; close releases it', async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const log = await FileEventLog.forSession(dir, SID, { create: true });
  log.append(chunk(SID, 'one'));
  const path = join(dir, `${SID}.log`);
  assert.equal(readFileSync(logLockPath(path), 'utf8'), `${process.pid} ${processStartTicks(process.pid)}`);
  await assert.rejects(FileEventLog.forSession(dir, SID), (err) => isTroupeError(err, 'session_locked') && /open for writing in this process/.test(err.message));
  const reader = await FileEventLog.open(path, { readOnly: true });
  await reader.close();
  await log.close();
  assert.ok(!existsSync(logLockPath(path)), 'released');
  const again = await FileEventLog.forSession(dir, SID);
  assert.equal(again.lastSeq(), 1);
  await again.close();
});

test("another live process's lock refuses the writer, and its log is left as it was (not repaired, not written)", async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const log = await FileEventLog.forSession(dir, SID, { create: true });
  log.append(chunk(SID, 'one'));
  await log.close();
  const path = join(dir, `${SID}.log`);
  // A torn tail, as a writer in the middle of a write leaves it: a second writer would cut it off.
  writeFileSync(path, Buffer.concat([readFileSync(path), Buffer.from([0x01, 0x02, 0x03])]));
  const bytes = statSync(path).size;
  const other = await otherProcess(t);
  writeFileSync(logLockPath(path), other.line);
  await assert.rejects(FileEventLog.forSession(dir, SID), (err) => isTroupeError(err, 'session_locked') && err.data.pid === other.pid && /another troupe process \(pid \d+\)/.test(err.message));
  assert.equal(statSync(path).size, bytes, 'the file is untouched');
  assert.equal(readFileSync(logLockPath(path), 'utf8'), other.line, 'the lock is still theirs');
});

test('a lock left by a process that is gone, or whose pid another process has since, is taken over', async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  await (await FileEventLog.forSession(dir, SID, { create: true })).close();
  const path = join(dir, `${SID}.log`);
  const other = await otherProcess(t);
  for (const stale of [`${2 ** 22 + 1} 12345`, `${other.pid} ${Number(processStartTicks(other.pid)) - 1}`]) {
    writeFileSync(logLockPath(path), stale);
    const log = await FileEventLog.forSession(dir, SID);
    assert.equal(readFileSync(logLockPath(path), 'utf8'), `${process.pid} ${processStartTicks(process.pid)}`, stale);
    await log.close();
  }
});

test('a lock that cannot be written whole (a nearly full disk; here a 1-byte file-size limit) is not left behind, half-written or empty', async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  // In a process of its own under the limit (prlimit, util-linux): the writes fail there for real.
  // One byte, because both locks must be longer than the limit: the file lock holds only the pid,
  // and in a container pids are small (a 3-byte limit let a 3-digit pid through in CI).
  const script = `
    const { takeProcessLock } = await import(${JSON.stringify(new URL('../../../src/store/process-lock.js', import.meta.url).href)});
    const { withFileLock } = await import(${JSON.stringify(new URL('../../../src/store/file-lock.js', import.meta.url).href)});
    const out = {};
    try { takeProcessLock(${JSON.stringify(join(dir, 'a.lock'))}, () => new Error('refused')); out.process = 'taken'; } catch (e) { out.process = e.code; }
    try { await withFileLock(${JSON.stringify(join(dir, 'b.lock'))}, async () => undefined); out.file = 'taken'; } catch (e) { out.file = e.code; }
    console.log(JSON.stringify(out));`;
  const out = await printedByModule(script, ['prlimit', '--fsize=1:unlimited']);
  assert.deepEqual(JSON.parse(out), { process: 'EFBIG', file: 'EFBIG' });
  assert.equal(existsSync(join(dir, 'a.lock')), false);
  assert.equal(existsSync(join(dir, 'b.lock')), false);
});
