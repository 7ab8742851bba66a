import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ChildProcessHandle } from '../../../src/actors/child-process.actor.js';
import { ChildSpawner } from '../../../src/actors/child-spawner.js';
import { silentLogger } from '../../../src/core/ports.js';
import type { ControlMessage } from '../../../src/wire/control-messages.js';
import { waitFor } from '../../support/daemon.js';

const FIXTURE = new URL('../../support/watched-child.js', import.meta.url).pathname;

test('a child that beats while nobody is attached (a pooled child waiting for a session) is not held with every heartbeat: the session gets its hello and the latest one', async (t) => {
  const spawner = new ChildSpawner(silentLogger);
  let proc: ChildProcessHandle | undefined;
  // The child first: node:test runs after hooks in the order they were added, and a spawner closed
  // while its child runs waits out its orphan grace (5 s) for it (until 2026-12-06 this test did).
  t.after(async () => {
    await proc?.stop(1000);
    await spawner.close();
  });
  // A beat every millisecond: what a pooled child sends in minutes at the default second, at once.
  proc = await ChildProcessHandle.start(spawner, { command: process.execPath, args: [FIXTURE], env: { ...process.env, WATCHED_HEARTBEAT_MS: '1' } }, silentLogger);
  await proc.started;
  await new Promise((r) => setTimeout(r, 500));
  const got: ControlMessage[] = [];
  proc.attach({ message: () => undefined, control: (m) => void got.push(m), exit: () => undefined });
  const early = got.length;
  assert.deepEqual(got.slice(0, early).map((m) => m.t), ['hello', 'hb'], `held before the attach: ${early} messages`);
  // And the beats go on once attached.
  await waitFor('a heartbeat after the attach', () => got.length > early);
});
