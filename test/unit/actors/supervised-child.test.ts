import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SupervisedChild } from '../../../src/actors/supervised-child.actor.js';
import type { ChildExit, ChildHandlers, ChildProcessHandle } from '../../../src/actors/child-process.actor.js';
import { DEFAULT_STARTUP_TIMEOUT_MS, startupLeftMs } from '../../../src/actors/child-watchdog.js';
import { waitFor } from '../../support/daemon.js';
import { DEFAULT_CHILD_SPEC } from '../../../src/machines/restart-window.js';
import { silentLogger } from '../../../src/core/ports.js';

/** A process stand-in: records what it is sent; `stop` makes it exit cleanly. */
class FakeProcess {
  alive = true;
  sent: Record<string, unknown>[] = [];
  private handlers?: ChildHandlers;
  constructor(
    readonly pid: number,
    readonly spawnedAt = Date.now(),
  ) {}
  attach(h: ChildHandlers): void {
    this.handlers = h;
  }
  async send(m: Record<string, unknown>): Promise<void> {
    this.sent.push(m);
  }
  async stop(): Promise<ChildExit> {
    const exit = { code: 0, signal: null, reason: 'exit', stderrTail: '' };
    this.alive = false;
    this.handlers?.exit(exit);
    return exit;
  }
  kill(): void {
    void this.stop();
  }
  /** No system to ask: the watchdog decides by silence alone (real processes: child-watchdog.test.ts). */
  sample(): undefined {
    return undefined;
  }
  /** The child writes a line on stdout. */
  writeLine(): void {
    this.handlers?.heard?.('stdout');
    this.handlers?.message({ jsonrpc: '2.0', method: 'session/update', params: {} });
  }
}

/**
 * A SupervisedChild over FakeProcesses (each new process is pushed on `procs`), with its exit reasons.
 * `startup`: its start-up timeout, and how long before it is handed over each process was spawned
 * (a pooled child that has not said hello yet).
 */
function supervise(heartbeatTimeoutMs: number, onTransition?: (state: string, event: string) => void, startup = { timeoutMs: DEFAULT_STARTUP_TIMEOUT_MS, spawnedAgoMs: 0 }) {
  const procs: FakeProcess[] = [];
  const exits: string[] = [];
  const child = new SupervisedChild({
    ...(onTransition ? { onTransition } : {}),
    spec: DEFAULT_CHILD_SPEC,
    idleMs: 60_000,
    heartbeatTimeoutMs,
    startupTimeoutMs: startup.timeoutMs,
    acquire: async () => {
      const p = new FakeProcess(procs.length + 1, Date.now() - startup.spawnedAgoMs);
      procs.push(p);
      return p as unknown as ChildProcessHandle;
    },
    boot: async () => undefined,
    onMessage: () => undefined,
    onControl: () => undefined,
    onExit: (e) => void exits.push(e.reason),
    onSpawnFailed: () => undefined,
    logger: silentLogger,
  });
  return { child, procs, exits };
}

const until = async (f: () => boolean) => {
  while (!f()) await new Promise((r) => setImmediate(r));
};

test('a prompt that wakes an idle-stopped child keeps it busy once it is ready (no idle stop mid-prompt)', async () => {
  const { child, procs } = supervise(60_000);
  try {
    await until(() => child.state === 'ready');
    await child.stop('idle');
    assert.equal(child.state, 'idleStopped');
    // The relay's order for a prompt: begin, then send (which wakes the child).
    child.begin();
    child.send({ jsonrpc: '2.0', id: 1, method: 'session/prompt' });
    await until(() => procs.length === 2 && procs[1]!.sent.length === 1);
    assert.equal(child.state, 'busy', 'the woken child is busy with the prompt');
    child.end();
    assert.equal(child.state, 'ready');
  } finally {
    await child.stop('shutdown');
  }
});

test('the inspector is told the child machine\'s transitions only, not the events it takes without changing state', async () => {
  const told: string[] = [];
  const { child, procs } = supervise(60_000, (state, event) => void told.push(`${state} on ${event}`));
  try {
    await until(() => child.state === 'ready');
    await child.stop('idle');
    // A prompt for the idle-stopped child: BUSY (nothing for idleStopped to do), then WAKE.
    child.begin();
    child.send({ jsonrpc: '2.0', id: 1, method: 'session/prompt' });
    await until(() => procs.length === 2 && procs[1]!.sent.length === 1);
    child.end();
    assert.deepEqual(told, [
      'spawning on xstate.init',
      'initializing on SPAWNED',
      'ready on READY',
      'stopping on STOP',
      'idleStopped on EXITED',
      'spawning on WAKE',
      'initializing on SPAWNED',
      'ready on READY',
      'busy on BUSY',
      'ready on IDLE',
    ]);
  } finally {
    await child.stop('shutdown');
  }
});

test('a child that writes on stdout is not taken for hung while its heartbeats lag; one silent on both is', async () => {
  // Under load a daemon can read a child's control channel behind its stdout: a child streaming a
  // reply was killed as hung. Only a child silent everywhere for the timeout is.
  const { child, procs, exits } = supervise(1_000);
  try {
    await until(() => child.state === 'ready');
    // 2.5 s of output, a line every 50 ms, and no heartbeat.
    for (let i = 0; i < 50; i++) {
      procs[0]!.writeLine();
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.deepEqual([procs.length, exits], [1, []], 'the writing child was left alone');
    // Silent on both: killed as hung (waited for, not slept on: until 2026-12-06 a fixed 1.5 s), and started again.
    for (const giveUpAt = Date.now() + 15_000; exits.length === 0 && Date.now() < giveUpAt; ) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(exits, ['hung']);
    await until(() => procs.length === 2);
  } finally {
    await child.stop('closed').catch(() => undefined);
  }
});

test('a pooled child taken before its hello has what is left of its start-up time from its spawn, not a new one', async () => {
  // Spawned 9 s before a session took it, with a 10 s start-up time, silent: judged 2.5 s after the
  // take (a quarter of the start-up time, the least it is given), not 10 s after as until 2026-12-06.
  const { child, exits } = supervise(60_000, undefined, { timeoutMs: 10_000, spawnedAgoMs: 9_000 });
  try {
    const took = Date.now();
    await waitFor('the silent child killed as hung', () => exits.length > 0, 6_000);
    assert.deepEqual(exits, ['hung']);
    assert.ok(Date.now() - took >= 2_000, 'not before what was left of its start-up time');
  } finally {
    await child.stop('closed').catch(() => undefined);
  }
});

test('what is left of a start-up time: from the spawn, never under a quarter of it', () => {
  assert.equal(startupLeftMs(1_000, 30_000, 1_000), 30_000);
  assert.equal(startupLeftMs(1_000, 30_000, 11_000), 20_000);
  assert.equal(startupLeftMs(1_000, 30_000, 31_000), 7_500);
  assert.equal(startupLeftMs(1_000, 30_000, 90_000), 7_500);
});

test('a watcher of the machine that throws (the inspector feed) does not stop the supervision', async () => {
  const seen: string[] = [];
  const { child, procs } = supervise(60_000, (state) => {
    seen.push(state);
    throw new Error('a feed broke');
  });
  try {
    await until(() => child.state === 'ready');
    child.begin();
    assert.equal(child.state, 'busy');
    child.end();
    await child.stop('idle');
    assert.equal(child.state, 'idleStopped');
    child.send({ jsonrpc: '2.0', id: 1, method: 'session/prompt' });
    await until(() => procs.length === 2 && child.state === 'ready');
    assert.ok(seen.includes('busy') && seen.includes('idleStopped'), `every transition was still told: ${seen.join(' ')}`);
  } finally {
    await child.stop('shutdown');
  }
});
