// Temp files of writes killed midway (kill -9 between the temp file's create and its rename) are
// removed when the index opens, but only those whose writer is dead: a live writer's is its own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SessionIndex } from '../../../src/store/session-index.store.js';
import { tempDir } from '../../support/store/store-fixtures.js';

const CHILD = join(dirname(fileURLToPath(import.meta.url)), 'temp-writer-child.js');

/** A real process writing `target` atomically, stopped midway (its temp file made and partly written). */
async function writerMidway(target: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [CHILD, target], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => d.toString().includes('midway') && resolve());
    child.once('exit', (code) => reject(new Error(`writer exited with ${code} before it was midway`)));
  });
  return child;
}

async function kill9(child: ChildProcess): Promise<void> {
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
}

const tempsOf = (dir: string, pid: number) => readdirSync(dir).filter((n) => n.includes(`.${pid}.`) || n.includes(`.${pid}-`));

test('temp files of writers killed midway are removed when the index opens; a live writer\'s stays', async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const deadIndexWriter = await writerMidway(join(dir, 'index.json'));
  const deadTombstoneWriter = await writerMidway(join(dir, 'ses_gone.log'));
  const liveWriter = await writerMidway(join(dir, 'index.json'));
  t.after(() => liveWriter.kill('SIGKILL'));
  const [dead1, dead2, live] = [deadIndexWriter.pid!, deadTombstoneWriter.pid!, liveWriter.pid!];
  assert.equal(tempsOf(dir, dead1).length, 1);
  assert.equal(tempsOf(dir, dead2).length, 1);
  assert.match(tempsOf(dir, dead2)[0]!, /^\.ses_gone\.log\.\d+\.[0-9a-f]+\.tmp$/);
  await kill9(deadIndexWriter);
  await kill9(deadTombstoneWriter);
  // An exclusive create's temp (a lock being made) of a process killed the same way.
  writeFileSync(join(dir, `index.json.lock.${dead1}-0.tmp`), `${dead1}\n`);
  const liveLockTemp = `ses_a.log.lock.${live}-3.tmp`;
  writeFileSync(join(dir, liveLockTemp), `${live}\n`);
  const liveTemp = tempsOf(dir, live).find((n) => n.startsWith('.index.json.'))!;
  assert.ok(liveTemp);

  const index = await SessionIndex.open(dir);
  assert.equal(index.list().sessions.length, 0);
  assert.deepEqual(tempsOf(dir, dead1), [], 'the dead index writer\'s temp files are gone');
  assert.deepEqual(tempsOf(dir, dead2), [], 'the dead tombstone writer\'s temp file is gone');
  assert.deepEqual(tempsOf(dir, live).sort(), [liveTemp, liveLockTemp].sort(), 'the live writer\'s are left alone');
});
