// The daemon's spawner process (src/actors/child-spawner.ts, spawner.process.ts; spec/daemon.md
// §Spawner) with real processes: what a child writes reaches the daemon whole and before its close,
// failures come back as errno names, and no child outlives both the daemon and the spawner.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { ChildSpawner, SpawnError, type SpawnedChild } from '../../../src/actors/child-spawner.js';
import { silentLogger } from '../../../src/core/ports.js';
import { processAlive, waitFor } from '../../support/daemon.js';

const HOST = new URL('../../support/spawner-host.js', import.meta.url).pathname;

function collect(stream: Readable): () => string {
  let text = '';
  stream.setEncoding('utf8');
  stream.on('data', (d: string) => (text += d));
  return () => text;
}

const closed = (child: SpawnedChild) => new Promise<{ code: number | null; signal: string | null }>((r) => child.onClose((code, signal) => r({ code, signal })));

test('what a child writes at once on stdout, stderr and fd 3 all reaches the daemon, though the daemon takes its pipes late', async (t) => {
  const spawner = new ChildSpawner(silentLogger);
  t.after(() => spawner.close());
  const code = `require('fs').writeSync(3, 'hello on 3'); process.stdout.write('out\\n'); process.stderr.write('err\\n'); process.stdin.resume().on('end', () => process.exit(0))`;
  const spawning = Array.from({ length: 4 }, () => spawner.spawn({ command: process.execPath, args: ['-e', code], env: process.env }));
  // This thread (the daemon's) is busy while the children write: the spawner's loop runs meanwhile
  // and holds pipes not yet handed over, and must not read them.
  const until = Date.now() + 500;
  while (Date.now() < until);
  for (const child of await Promise.all(spawning)) {
    const [out, err, control] = [collect(child.stdout), collect(child.stderr), collect(child.control)];
    const done = closed(child);
    await waitFor('the child to write', () => control().length > 0 && out().length > 0 && err().length > 0);
    child.stdin.end();
    assert.deepEqual(await done, { code: 0, signal: null });
    assert.deepEqual([out(), err(), control()], ['out\n', 'err\n', 'hello on 3']);
  }
});

test('a child that writes 4 MiB and exits is closed after the last byte, with its exit code; a killed one with its signal', async (t) => {
  const spawner = new ChildSpawner(silentLogger);
  t.after(() => spawner.close());
  const big = await spawner.spawn({ command: process.execPath, args: ['-e', `process.stdout.write('x'.repeat(4 * 1024 * 1024), () => process.exit(3))`], env: process.env });
  let bytesAtClose = -1;
  const out = collect(big.stdout);
  big.onClose(() => (bytesAtClose = out().length));
  assert.deepEqual(await closed(big), { code: 3, signal: null });
  assert.equal(bytesAtClose, 4 * 1024 * 1024);

  const sleeper = await spawner.spawn({ command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'], env: process.env });
  sleeper.kill('SIGTERM');
  assert.deepEqual(await closed(sleeper), { code: null, signal: 'SIGTERM' });
  assert.equal(spawner.children, 0);
});

test('children that exit before the daemon took their pipes are closed all the same, with their last words and exit codes', async (t) => {
  const spawner = new ChildSpawner(silentLogger);
  t.after(() => spawner.close());
  const codes = [0, 1, 2, 3];
  const spawning = codes.map((code) => spawner.spawn({ command: process.execPath, args: ['-e', `process.stderr.write('bye ${code}'); process.exit(${code})`], env: process.env }));
  // Held here while they exit: their pipes, 'handed' and their exits then come in few reads.
  const until = Date.now() + 1_500;
  while (Date.now() < until);
  const children = await Promise.all(spawning);
  const stderr = children.map((c) => collect(c.stderr));
  assert.deepEqual(await Promise.all(children.map(closed)), codes.map((code) => ({ code, signal: null })));
  assert.deepEqual(stderr.map((text) => text()), codes.map((code) => `bye ${code}`));
});

test('a spawn that fails says why with the errno name, and the spawner goes on', async (t) => {
  const spawner = new ChildSpawner(silentLogger);
  t.after(() => spawner.close());
  await assert.rejects(spawner.spawn({ command: '/nonexistent/node', args: [], env: process.env }), (e) => e instanceof SpawnError && e.code === 'ENOENT');
  // An argument over the kernel's limit: Node throws from spawn() at once.
  await assert.rejects(spawner.spawn({ command: process.execPath, args: ['-e', '', 'x'.repeat(200_000)], env: process.env }), (e) => e instanceof SpawnError && e.code === 'E2BIG');
  const ok = await spawner.spawn({ command: process.execPath, args: ['-e', ''], env: process.env });
  assert.deepEqual(await closed(ok), { code: 0, signal: null });
});

test('a daemon killed with SIGKILL leaves nothing: its children see their stdin end, one that ignores it is killed, and the spawner exits', async () => {
  const host = spawn(process.execPath, [HOST], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((r) => createInterface({ input: host.stdout! }).once('line', r));
  const { spawner, children } = JSON.parse(line) as { spawner: number; children: number[] };
  assert.ok([spawner, ...children].every(processAlive));
  host.kill('SIGKILL');
  await waitFor('the child that heeds its stdin to exit', () => !processAlive(children[0]!), 5_000);
  assert.ok(processAlive(children[1]!), 'the child deaf to its stdin and SIGTERM outlives the grace');
  await waitFor('the deaf child to be killed and the spawner to exit', () => !processAlive(children[1]!) && !processAlive(spawner), 10_000);
});

test('a spawner killed with SIGKILL leaves its children running and closable, and the next spawn starts another', async (t) => {
  const spawner = new ChildSpawner(silentLogger);
  t.after(() => spawner.close());
  const child = await spawner.spawn({ command: process.execPath, args: ['-e', `process.stdin.on('data', (d) => process.stdout.write('echo ' + d))`], env: process.env });
  const first = spawner.pid!;
  process.kill(first, 'SIGKILL');
  await waitFor('the spawner to be gone', () => !processAlive(first) && spawner.pid === undefined);
  const out = collect(child.stdout);
  child.stdin.write('still here\n');
  await waitFor('the orphan to answer', () => out() === 'echo still here\n');
  const done = closed(child);
  child.kill('SIGKILL');
  // Its exit is not reported any more: it closes when its pipes end.
  assert.deepEqual(await done, { code: null, signal: null });
  // (Its pipes close as the kernel tears it down, a moment before it is gone from the table.)
  await waitFor('the orphan gone', () => !processAlive(child.pid), 5_000);
  const next = await spawner.spawn({ command: process.execPath, args: ['-e', ''], env: process.env });
  assert.notEqual(spawner.pid, first);
  assert.deepEqual(await closed(next), { code: 0, signal: null });
});

test('a daemon out of descriptors when the pipes come: that spawn fails EMFILE, its process is killed, and the next spawn works', async () => {
  const host = spawn('prlimit', ['--nofile=64:64', process.execPath, new URL('../../support/spawner-emfile-host.js', import.meta.url).pathname], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((r) => createInterface({ input: host.stdout! }).once('line', r));
  assert.deepEqual(JSON.parse(line), { outcome: { failed: 'EMFILE' }, nextAlive: true, otherChildren: 0 });
});
