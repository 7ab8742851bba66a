// run_command with real child processes: exit codes, output limits, timeouts and cancellation
// that take the whole process group down.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createLocalCommandBackend, createWorkspaceTools } from '../../../src/tools/index.js';
import type { ToolHost } from '../../../src/core/ports.js';
import { makeWorkspace, run, type Workspace } from './workspace.fixture.js';

let ws: Workspace;
let host: ToolHost;

before(() => {
  ws = makeWorkspace();
  host = createWorkspaceTools({ cwd: ws.cwd, commands: createLocalCommandBackend({ killGraceMs: 300 }) });
});
after(() => ws.dispose());

/** Alive and not a zombie (a zombie has already died; only its parent has not reaped it). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2)[0];
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** Polls (bounded) until the condition holds; returns whether it did. */
async function eventually(cond: () => boolean, tries = 200): Promise<boolean> {
  for (let i = 0; i < tries; i++) {
    if (cond()) return true;
    await sleep(25);
  }
  return cond();
}

function pidFrom(file: string): number {
  return Number(readFileSync(join(ws.cwd, file), 'utf8').trim());
}

const pidWritten = (file: string) => existsSync(join(ws.cwd, file)) && readFileSync(join(ws.cwd, file), 'utf8').endsWith('\n');

/**
 * Runs `command`, which starts a grandchild and writes its pid to `file`, under a timeout of 300 ms,
 * doubled until the grandchild had started before the timeout: on a loaded machine the shell may not
 * get that far in 300 ms, and then there is no grandchild to check.
 */
async function timedOutAfterGrandchild(command: string, file: string): Promise<{ r: Awaited<ReturnType<typeof run>>; timeoutMs: number }> {
  for (let timeoutMs = 300; ; timeoutMs *= 2) {
    rmSync(join(ws.cwd, file), { force: true });
    const r = await run(host, 'run_command', { command, timeout_ms: timeoutMs });
    if (pidWritten(file) || timeoutMs >= 9600) return { r, timeoutMs };
  }
}

describe('run_command', () => {
  test('success: output, exit code 0, no separate content (the output is shown)', async () => {
    const r = await run(host, 'run_command', { command: 'echo hello; echo oops 1>&2' });
    assert.equal(r.isError, false);
    assert.equal(r.output, 'hello\noops\n[exit code: 0]');
    assert.equal(r.content, undefined);
  });

  test('a non-zero exit code is an error that shows the code', async () => {
    const r = await run(host, 'run_command', { command: 'printf partial; exit 3' });
    assert.deepEqual([r.isError, r.errorCode], [true, 'tool_failed']);
    assert.equal(r.output, 'partial\n[exit code: 3]');
    const silent = await run(host, 'run_command', { command: 'false' });
    assert.equal(silent.output, '(no output)\n[exit code: 1]');
  });

  test('runs in the cwd, or in a cwd argument inside the workspace; stdin is empty', async () => {
    mkdirSync(join(ws.cwd, 'sub'));
    assert.equal((await run(host, 'run_command', { command: 'pwd' })).output, `${ws.cwd}\n[exit code: 0]`);
    assert.equal((await run(host, 'run_command', { command: 'pwd', cwd: 'sub' })).output, `${join(ws.cwd, 'sub')}\n[exit code: 0]`);
    assert.equal((await run(host, 'run_command', { command: 'cat; echo done' })).output, 'done\n[exit code: 0]');
    const missing = await run(host, 'run_command', { command: 'pwd', cwd: 'nope' });
    assert.equal(missing.isError, true);
    assert.match(missing.output, /not an existing directory/);
  });

  test('output over the limit keeps the head and the tail with a marker', async () => {
    const small = createWorkspaceTools({ cwd: ws.cwd, limits: { commandOutputBytes: 1000 } });
    const r = await run(small, 'run_command', { command: `printf START; head -c 20000 /dev/zero | tr '\\0' x; printf END` });
    assert.equal(r.isError, false);
    const [body, status] = [r.output.slice(0, r.output.lastIndexOf('\n[exit')), r.output.slice(r.output.lastIndexOf('\n') + 1)];
    assert.equal(status, '[exit code: 0]');
    assert.ok(body.startsWith('START'), body.slice(0, 20));
    assert.ok(body.endsWith('END'), body.slice(-20));
    const marker = /\n\[\.\.\. (\d+) bytes of output omitted \.\.\.\]\n/.exec(body);
    assert.ok(marker, 'truncation marker');
    assert.equal(Number(marker[1]), 5 + 20000 + 3 - 1000);
    assert.equal(Buffer.byteLength(body) - marker[0].length, 1000);
  });

  test('timeout kills the whole process group, grandchildren included', async () => {
    const { r, timeoutMs } = await timedOutAfterGrandchild(`sh -c 'sleep 1000 & echo $! > gc.pid; wait'`, 'gc.pid');
    assert.deepEqual([r.isError, r.errorCode], [true, 'tool_timeout']);
    assert.ok(r.output.endsWith(`[timed out after ${timeoutMs} ms; the command and its child processes were killed]`), r.output);
    const gc = pidFrom('gc.pid');
    assert.ok(await eventually(() => !isAlive(gc)), `grandchild ${gc} survived`);
  });

  test('a grandchild that ignores SIGTERM is killed with SIGKILL', async () => {
    const { r } = await timedOutAfterGrandchild(`sh -c 'trap "" TERM; sleep 1000 & echo $! > stubborn.pid; wait'`, 'stubborn.pid');
    assert.equal(r.errorCode, 'tool_timeout');
    const gc = pidFrom('stubborn.pid');
    assert.ok(await eventually(() => !isAlive(gc)), `grandchild ${gc} survived`);
  });

  test('background jobs do not outlive a command that exits', async () => {
    const r = await run(host, 'run_command', { command: 'sleep 1000 & echo $! > bg.pid; echo started' });
    assert.equal(r.output, 'started\n[exit code: 0]');
    const bg = pidFrom('bg.pid');
    assert.ok(await eventually(() => !isAlive(bg)), `background job ${bg} survived`);
  });

  test('a process that leaves the process group (setsid, daemonizing fork) does not outlive the command', async () => {
    const r = await run(host, 'run_command', {
      command: `setsid sleep 1000 >/dev/null 2>&1 & echo $! > setsid.pid; (setsid sh -c 'echo $$ > daemon.pid; exec sleep 1001' >/dev/null 2>&1 &); sleep 0.2; echo started`,
    });
    assert.equal(r.output, 'started\n[exit code: 0]');
    for (const file of ['setsid.pid', 'daemon.pid']) {
      assert.ok(await eventually(() => pidWritten(file)), file);
      const pid = pidFrom(file);
      assert.ok(await eventually(() => !isAlive(pid)), `${file}: process ${pid} survived`);
    }
  });

  test('a process that left the group and cleared its environment (setsid, env -i) but holds the output does not outlive the command', async () => {
    // Neither the group kill nor the marker reaches it; what it still holds, the command's output, does.
    const r = await run(host, 'run_command', { command: `env -i setsid sh -c 'echo $$ > escaped.pid; exec sleep 1000' & sleep 0.2; echo started` });
    assert.equal(r.output, 'started\n[exit code: 0]');
    assert.ok(await eventually(() => pidWritten('escaped.pid')));
    const pid = pidFrom('escaped.pid');
    const gone = await eventually(() => !isAlive(pid));
    if (!gone) process.kill(pid, 'SIGKILL');
    assert.ok(gone, `process ${pid} survived`);
  });

  test('a timed-out command whose escaped process holds the output is killed with it', async () => {
    const { r } = await timedOutAfterGrandchild(`env -i setsid sh -c 'echo $$ > escaped-t.pid; exec sleep 1000' & wait`, 'escaped-t.pid');
    assert.equal(r.errorCode, 'tool_timeout');
    const pid = pidFrom('escaped-t.pid');
    const gone = await eventually(() => !isAlive(pid));
    if (!gone) process.kill(pid, 'SIGKILL');
    assert.ok(gone, `process ${pid} survived`);
  });

  test('abort via the signal stops the command and its children promptly', async () => {
    const controller = new AbortController();
    const pending = run(host, 'run_command', { command: `sh -c 'sleep 1000 & echo $! > abort.pid; wait'` }, controller.signal);
    assert.ok(await eventually(() => pidWritten('abort.pid')));
    controller.abort();
    const r = await pending;
    assert.deepEqual([r.isError, r.errorCode], [true, 'request_cancelled']);
    assert.match(r.output, /\[cancelled; the command and its child processes were stopped\]$/);
    const gc = pidFrom('abort.pid');
    assert.ok(await eventually(() => !isAlive(gc)), `grandchild ${gc} survived`);
  });

  test('an already aborted signal runs nothing', async () => {
    const controller = new AbortController();
    controller.abort();
    const r = await run(host, 'run_command', { command: 'touch ran.txt' }, controller.signal);
    assert.equal(r.errorCode, 'request_cancelled');
    assert.equal(existsSync(join(ws.cwd, 'ran.txt')), false);
  });

  test('the daemon token (TROUPE_TOKEN) is never inherited; the withheld list and the rest of the environment as asked', async (t) => {
    process.env['TROUPE_TOKEN'] = 'daemon-token-not-for-commands';
    process.env['TROUPE_TEST_WITHHELD'] = 'withheld-by-option';
    process.env['TROUPE_TEST_VISIBLE'] = 'inherited';
    t.after(() => {
      for (const name of ['TROUPE_TOKEN', 'TROUPE_TEST_WITHHELD', 'TROUPE_TEST_VISIBLE']) delete process.env[name];
    });
    const withholding = createWorkspaceTools({ cwd: ws.cwd, commands: createLocalCommandBackend({ withheldEnv: ['TROUPE_TEST_WITHHELD'] }) });
    const command = 'echo "token=${TROUPE_TOKEN-withheld} option=${TROUPE_TEST_WITHHELD-withheld} other=${TROUPE_TEST_VISIBLE-missing}"';
    assert.equal((await run(withholding, 'run_command', { command })).output, 'token=withheld option=withheld other=inherited\n[exit code: 0]');
    // With no list of its own, the token is still withheld.
    assert.equal((await run(host, 'run_command', { command })).output, 'token=withheld option=withheld-by-option other=inherited\n[exit code: 0]');
  });

  test('timeout_ms is bounded by the configured maximum', () => {
    const capped = createWorkspaceTools({ cwd: ws.cwd, limits: { commandMaxTimeoutMs: 5000 } });
    assert.throws(() => capped.describe({ id: 'c', name: 'run_command', input: { command: 'true', timeout_ms: 5001 } }), { code: 'invalid_params' });
    const spec = capped.specs().find((s) => s.name === 'run_command')!;
    assert.equal((spec.inputSchema as { properties: { timeout_ms: { maximum: number } } }).properties.timeout_ms.maximum, 5000);
  });
});

test('a command that ends before its timeout is not timed out while something it left, ignoring SIGTERM, holds its output open', async () => {
  // The shell exits at once; the sleep it left in the background ignores the SIGTERM its group gets
  // then and holds the pipes until the SIGKILL after the grace period, well past the timeout. Until
  // 2026-12-07 the timeout's timer ran on between the exit and the pipes' close, and its firing made
  // the command "[timed out after 1500 ms; … killed]" (tool_timeout) though it had exited 0 in time.
  const backend = createLocalCommandBackend({ killGraceMs: 4000 });
  const outcome = await backend.run(
    { command: "(trap '' TERM; exec sleep 30) & echo done", cwd: ws.cwd, timeoutMs: 1500, outputByteLimit: 65_536 },
    { signal: new AbortController().signal, update: () => undefined },
  );
  assert.deepEqual({ exitCode: outcome.exitCode, timedOut: outcome.timedOut, output: outcome.output }, { exitCode: 0, timedOut: false, output: 'done\n' });
});
