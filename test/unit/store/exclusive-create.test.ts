// Lock files appear with their content already in them (src/store/exclusive-create.ts): a reader
// never sees one empty, which was what a maker killed between its create and its write left behind,
// holding every other process off for 10 s.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createExclusive } from '../../../src/store/exclusive-create.js';
import { tempDir } from '../../support/store/store-fixtures.js';

test('createExclusive: the file is made with its content and mode 0600; made again it is EEXIST and left as it was; no temp file stays', (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const path = join(dir, 'x.lock');
  createExclusive(path, '123 456');
  assert.equal(readFileSync(path, 'utf8'), '123 456');
  assert.equal(statSync(path).mode & 0o777, 0o600);
  assert.throws(() => createExclusive(path, '789'), (e: NodeJS.ErrnoException) => e.code === 'EEXIST');
  assert.equal(readFileSync(path, 'utf8'), '123 456');
  assert.deepEqual(readdirSync(dir), ['x.lock']);
});

test('a temp file left by a killed process whose pid this one now has does not stop a create', async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const path = join(dir, 'x.lock');
  // What this process would name its next temp files, had a process with its pid been killed there.
  for (let i = 0; i < 1000; i++) writeFileSync(`${path}.${process.pid}-${i}.tmp`, 'stale');
  createExclusive(path, 'mine');
  assert.equal(readFileSync(path, 'utf8'), 'mine');
});

test('another process taking and releasing the index lock and a process lock 1,500 times each: a reader sees them with their pid, never empty', async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const [fileLock, processLock] = [join(dir, 'index.json.lock'), join(dir, 's.log.lock')];
  const script = `
    const { withFileLock } = await import(${JSON.stringify(new URL('../../../src/store/file-lock.js', import.meta.url).href)});
    const { takeProcessLock } = await import(${JSON.stringify(new URL('../../../src/store/process-lock.js', import.meta.url).href)});
    for (let i = 0; i < 1500; i++) {
      await withFileLock(${JSON.stringify(fileLock)}, async () => undefined);
      takeProcessLock(${JSON.stringify(processLock)}, () => new Error('refused'))();
    }`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'ignore', 'inherit'] });
  t.after(() => child.kill('SIGKILL'));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  let running = true;
  void exited.then(() => (running = false));
  const seen = { empty: 0, withPid: 0 };
  for (let i = 0; running; i++) {
    for (const path of [fileLock, processLock]) {
      let text: string;
      try {
        text = readFileSync(path, 'utf8');
      } catch {
        continue; // not held at that moment
      }
      if (text === '') seen.empty++;
      else if (text.startsWith(`${child.pid}`)) seen.withPid++;
    }
    // Let the exit be seen now and then (the child runs on its own).
    if (i % 64 === 0) await new Promise((r) => setImmediate(r));
  }
  assert.equal(await exited, 0);
  assert.ok(seen.withPid > 0, `the reader saw the locks held: ${JSON.stringify(seen)}`);
  assert.equal(seen.empty, 0, `never empty: ${JSON.stringify(seen)}`);
  assert.deepEqual(readdirSync(dir), [], 'no lock and no temp file left');
});
