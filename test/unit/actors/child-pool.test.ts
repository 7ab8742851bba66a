import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ChildPool } from '../../../src/actors/child-pool.actor.js';
import { ChildProcessHandle } from '../../../src/actors/child-process.actor.js';
import { ChildSpawner } from '../../../src/actors/child-spawner.js';
import { isTroupeError } from '../../../src/core/errors.js';
import { silentLogger } from '../../../src/core/ports.js';

test('a spawn that Node refuses at once (here E2BIG: an argument over the kernel limit) answers the waiting take with capacity_exceeded, and the next take gets a process', async () => {
  // Node throws from spawn() for some failures (ENOMEM, E2BIG) instead of reporting them later; a
  // single argument over 128 KiB makes the kernel's exec refuse it for real.
  const args = [['-e', '', 'x'.repeat(200_000)], ['-e', 'setTimeout(() => {}, 60_000)']];
  let launches = 0;
  const spawner = new ChildSpawner(silentLogger);
  const pool = new ChildPool(0, () => ChildProcessHandle.start(spawner, { command: process.execPath, args: args[launches++]!, env: process.env }, silentLogger), silentLogger);
  try {
    await assert.rejects(pool.take(), (err) => isTroupeError(err, 'capacity_exceeded') && err.data?.reason === 'E2BIG' && /spawn E2BIG/.test(err.message));
    const child = await pool.take();
    assert.ok(child.alive && child.pid > 0);
    assert.equal(launches, 2);
    await child.stop(100);
  } finally {
    await pool.close(100);
    await spawner.close();
  }
});
