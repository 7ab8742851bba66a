// The heartbeat watchdog with real processes and the kernel's own view of them (spec/daemon.md
// §Supervision, Heartbeats): a child that is silent because the machine gives the CPU to others is
// waited for; one whose loop is stuck is killed, as one stopped with SIGSTOP is
// (daemon-child-lifecycle.test.ts). Under 100 streaming sessions on 2 cores, children starved like
// the first were killed as hung (bench/aggregate-rounds.ts, 2026-12-02).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { setPriority } from 'node:os';
import { SupervisedChild } from '../../../src/actors/supervised-child.actor.js';
import { ChildProcessHandle } from '../../../src/actors/child-process.actor.js';
import { ChildSpawner } from '../../../src/actors/child-spawner.js';
import { DEFAULT_STARTUP_TIMEOUT_MS } from '../../../src/actors/child-watchdog.js';
import { DEFAULT_CHILD_SPEC } from '../../../src/machines/restart-window.js';
import { silentLogger, type LogFields, type Logger } from '../../../src/core/ports.js';
import { processAlive, waitFor } from '../../support/daemon.js';

const FIXTURE = new URL('../../support/watched-child.js', import.meta.url).pathname;
const TIMEOUT_MS = 1_000;
const spawner = new ChildSpawner(silentLogger);

/** A SupervisedChild over real watched-child processes, with what it reported and logged. */
function supervise() {
  const procs: ChildProcessHandle[] = [];
  const exits: string[] = [];
  const messages: Record<string, unknown>[] = [];
  const warnings: { msg: string; meta?: LogFields }[] = [];
  let slow = 0;
  const logger: Logger = { ...silentLogger, warn: (msg: string, meta?: LogFields) => void warnings.push({ msg, meta }) };
  const child = new SupervisedChild({
    spec: DEFAULT_CHILD_SPEC,
    idleMs: 60_000,
    heartbeatTimeoutMs: TIMEOUT_MS,
    startupTimeoutMs: DEFAULT_STARTUP_TIMEOUT_MS,
    acquire: async () => {
      const p = await ChildProcessHandle.start(spawner, { command: process.execPath, args: [FIXTURE], env: { ...process.env, WATCHED_HEARTBEAT_MS: '100' } }, silentLogger);
      procs.push(p);
      await p.started;
      return p;
    },
    boot: async () => undefined,
    onMessage: (m) => void messages.push(m),
    onControl: () => undefined,
    onExit: (e) => void exits.push(e.reason),
    onSpawnFailed: () => undefined,
    onSlow: () => void slow++,
    logger,
  });
  return { child, procs, exits, messages, warnings, slow: () => slow };
}

test('a child silent because the machine gives the CPU to others is waited for, not killed as hung', { skip: process.platform !== 'linux' && 'procfs' }, async (t) => {
  const { child, procs, exits, messages, warnings, slow } = supervise();
  t.after(() => child.stop('shutdown'));
  await waitFor('the child ready', () => child.state === 'ready');
  const pid = procs[0]!.pid;
  // The child and a CPU hog share one core (the first this process may use), the child at niceness
  // 10: about a tenth of that core (CFS weights 110 and 1024), less when other work runs there (the
  // rest of the suite). The spawner and its children run in a session of their own, which a kernel
  // with autogroup schedules as one group, its nice the group's (written below): so the hog runs in a
  // session of its own too (detached), a group of nice 0, and the child's group is given nice 10.
  // Niceness 19 (weight 15) starved the child for over a minute while the whole suite ran.
  const core = /^Cpus_allowed_list:\s*(\d+)/m.exec(readFileSync('/proc/self/status', 'utf8'))![1]!;
  const hog = spawn('taskset', ['-c', core, process.execPath, '-e', 'for (;;);'], { stdio: 'ignore', detached: true });
  t.after(() => void hog.kill('SIGKILL'));
  execFileSync('taskset', ['-pc', core, String(pid)], { stdio: 'ignore' });
  setPriority(pid, 10);
  try {
    writeFileSync(`/proc/${pid}/autogroup`, '10');
  } catch {
    // No autogroup on this kernel: the child's nice alone decides.
  }
  // 250 ms of CPU without yielding: seconds on the clock, past the timeout, with no heartbeat and no
  // output. The watchdog's budget is half the timeout of CPU time (500 ms): not reached.
  child.send({ jsonrpc: '2.0', method: 'work', params: { cpuMs: 250 } });
  await waitFor('the work done, or the child killed', () => exits.length > 0 || messages.some((m) => m.method === 'worked'), 60_000);
  hog.kill('SIGKILL');
  assert.deepEqual(exits, [], 'not killed');
  const { wallMs } = messages.find((m) => m.method === 'worked')!.params as { wallMs: number };
  assert.ok(wallMs > 2 * TIMEOUT_MS, `the child was starved past the timeout (its 250 ms of CPU took ${wallMs} ms)`);
  assert.equal(procs.length, 1);
  assert.ok(processAlive(pid));
  // Said once for the silence, with what the kernel said of the child.
  const waits = warnings.filter((w) => w.msg === 'child silent but short of CPU (the machine is busy); waiting for it');
  assert.equal(waits.length, 1, JSON.stringify(warnings));
  assert.equal(waits[0]!.meta?.process, 'R');
  assert.ok((waits[0]!.meta?.cpuMs as number) < TIMEOUT_MS / 2);
  assert.equal(slow(), 1, 'counted once (troupe_child_slow_waits_total)');
  assert.equal(child.state, 'ready');
});

test('a child whose loop is stuck is killed as hung once it has had half the timeout of CPU time', { skip: process.platform !== 'linux' && 'procfs' }, async (t) => {
  const { child, procs, exits, warnings } = supervise();
  t.after(() => child.stop('shutdown'));
  await waitFor('the child ready', () => child.state === 'ready');
  const pid = procs[0]!.pid;
  child.send({ jsonrpc: '2.0', method: 'spin' });
  await waitFor('the stuck child killed', () => exits.length > 0, 60_000);
  assert.deepEqual(exits, ['hung']);
  const kill = warnings.find((w) => w.msg === 'child missed its heartbeats; killing it');
  assert.equal(kill?.meta?.process, 'R', JSON.stringify(warnings));
  assert.ok((kill!.meta!.cpuMs as number) >= TIMEOUT_MS / 2, `killed after ${String(kill!.meta!.cpuMs)} ms of CPU`);
  await waitFor('the killed process gone', () => !processAlive(pid));
  await waitFor('a new process', () => procs.length === 2 && child.state === 'ready');
});
