// A revive (SessionIndex.clearFailed) while its write is under way, on a real index file: the file is
// a FIFO, so the write's read of it (under the lock, before it replaces it) waits for this test to
// open the other end. The daemon's side of it: test/integration/daemon/daemon-revive.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { SessionIndex } from '../../../src/store/session-index.store.js';
import { FileEventLog } from '../../../src/store/file-event-log.store.js';
import { sessionCreated, tempDir, turnCompleted } from '../../support/store/store-fixtures.js';

/** A failed session `id` with a log, in an index of `dir` whose file is a FIFO from now on. */
async function failedBehindFifo(dir: string, id: string): Promise<SessionIndex> {
  const log = await FileEventLog.forSession(dir, id, { create: true });
  log.append(sessionCreated(id, '/p'));
  log.append(turnCompleted(id));
  await log.close();
  const index = await SessionIndex.open(dir);
  await index.setStatus(id, 'failed');
  rmSync(index.path);
  assert.equal(spawnSync('mkfifo', [index.path]).status, 0);
  return index;
}

/** Turns of the loop until `f` holds (the other end of the FIFO is read on the thread pool). */
async function until(f: () => boolean): Promise<void> {
  while (!f()) await new Promise((r) => setImmediate(r));
}

test('a revive is in memory only once the file holds it: failed while it is written, active after', async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const index = await failedBehindFifo(dir, 'ses_a');
  const reviving = index.clearFailed('ses_a');
  const held = await open(index.path, 'w'); // the write is reading the file
  // Until 2026-12-07 it was `active` here, and the daemon started a process for a message that came now.
  assert.equal(index.get('ses_a')!.status, 'failed');
  await held.close(); // an empty read: nothing to merge, and the file is replaced
  await reviving;
  assert.equal(index.get('ses_a')!.status, 'active');
  assert.equal(JSON.parse(readFileSync(index.path, 'utf8')).sessions[0].status, 'active');
});

test('a delete that comes while a revive is being written stays: the revive does not put the session back', async (t) => {
  const { dir, cleanup } = tempDir();
  t.after(cleanup);
  const index = await failedBehindFifo(dir, 'ses_a');
  const reviving = index.clearFailed('ses_a');
  const held = await open(index.path, 'w');
  const deleting = index.tombstone('ses_a');
  await until(() => index.get('ses_a')!.status === 'deleted'); // its own write waits behind the revive's
  await held.close();
  await reviving;
  // The revive wrote nothing (the session was not failed any more once the file was read): the
  // delete's write reads the FIFO in its turn.
  if (statSync(index.path).isFIFO()) await (await open(index.path, 'w')).close();
  await deleting;
  assert.equal(index.get('ses_a')!.status, 'deleted', 'in memory');
  await index.flush();
  assert.equal(JSON.parse(readFileSync(index.path, 'utf8')).sessions[0].status, 'deleted', 'on disk');
});
