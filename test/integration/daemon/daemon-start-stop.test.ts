// The daemon's own start and stop with real processes: SIGTERM (once or twice, with turns running or
// session/new under way) and Ctrl-C stop it cleanly and leave no process behind; a start it cannot
// make (another daemon on the home, a port in use, a home or TLS files it cannot use) exits 1 with
// one line and a code.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Daemon, processAlive, processesOfHome, tempDir, waitFor } from '../../support/daemon.js';
import { script } from './supervision.fixture.js';

/** A daemon with one session whose turn is streaming, and the daemon's children at that moment. */
async function daemonWithRunningTurn(t: { after(fn: () => unknown): void }, transport: 'ws' | 'http', options: Parameters<typeof Daemon.start>[0] = {}) {
  const d = await Daemon.start({ script, ...options });
  const c = d.connect(transport);
  t.after(() => c.close());
  await c.init();
  const sessionId = (await c.agent.request('session/new', { cwd: tempDir(), mcpServers: [] })).sessionId;
  const running = c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'long' }] }).catch((e) => e);
  await c.until(() => c.updatesFor(sessionId, 'agent_message_chunk').length > 0, 'a running turn');
  return { d, running, children: d.childPids() };
}

test('SIGTERM: running turns cancelled, children stopped, state removed, exit 0, nothing left behind', async (t) => {
  const { d, running, children } = await daemonWithRunningTurn(t, 'ws');
  assert.ok(children.length >= 2, 'the session child and a warm one');
  assert.equal(await d.stop(), 0);
  for (const pid of children) assert.ok(!processAlive(pid), `child ${pid} is gone`);
  const r: any = await running;
  assert.ok(r?.stopReason === 'cancelled' || r?.data?.code === 'agent_crashed' || /closed/i.test(String(r?.message)), 'the turn ended');
  assert.ok(!existsSync(`${d.home}/daemon.json`) && !existsSync(`${d.home}/daemon.lock`));
});

test('a second SIGTERM while the daemon stops (a supervisor or a reaper repeating it) does not cut the clean stop: exit 0, nothing left behind', async (t) => {
  // Each session child lingers 2 s after its stdin ends, so the stop is still under way when the
  // second signal comes.
  const linger = join(tempDir(), 'linger.mjs');
  writeFileSync(linger, "if (process.argv.includes('acp')) process.stdin.once('end', () => setTimeout(() => {}, 2000));\n");
  const { d, children } = await daemonWithRunningTurn(t, 'http', { env: { TROUPE_LOG: 'info', NODE_OPTIONS: `--import=${pathToFileURL(linger).href}` } });
  const exited = new Promise<[number | null, string | null]>((r) => d.proc.once('exit', (code, signal) => r([code, signal])));
  d.proc.kill('SIGTERM');
  await waitFor('the stop begun', () => /stopping/.test(d.stderr));
  assert.equal(d.proc.exitCode, null, 'still stopping when the second SIGTERM comes');
  d.proc.kill('SIGTERM');
  assert.deepEqual(await exited, [0, null], 'a clean stop, not killed by the second signal');
  for (const pid of children) assert.ok(!processAlive(pid), `child ${pid} is gone`);
  assert.deepEqual(processesOfHome(d.home), [], 'no process of this home is left');
  assert.ok(!existsSync(`${d.home}/daemon.json`), 'its state file removed');
});

// The timeout is a hang detector: before, the daemon spun on the EPIPE and answered nothing more.
test('a daemon whose stderr reader is gone (its terminal closed) drops its logs, serves on and stops on SIGTERM (no EPIPE loop)', { timeout: 60_000 }, async (t) => {
  // Debug logs: every request writes to the closed stderr.
  const d = await Daemon.start({ script, env: { TROUPE_LOG: 'debug' } });
  t.after(() => d.stop());
  d.proc.stderr!.destroy();
  const c = d.connect('http');
  t.after(() => c.close());
  await c.init();
  const sessionId = (await c.agent.request('session/new', { cwd: tempDir(), mcpServers: [] })).sessionId;
  assert.equal((await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'ping' }] })).stopReason, 'end_turn');
  assert.equal((await d.api('GET', '/v1/health')).status, 200);
  c.close();
  // Before, the EPIPE was an uncaught exception, which the last resort logged to the same stderr:
  // the daemon spun at 100% CPU and never finished its shutdown (the helper SIGKILLs it after 20 s).
  assert.equal(await d.stop(), 0);
});

test('SIGTERM during a burst of session/new: exit 0 and no child outlives the daemon, also one spawned for a request it stopped', async (t) => {
  // No pool: each session/new waits for a child spawned for it; stopped while it waits, the child
  // that comes for it anyway must be stopped and waited for too.
  const d = await Daemon.start({ script, args: ['--pool', '0'] });
  const c = d.connect('http');
  t.after(() => c.close());
  await c.init();
  const cwd = tempDir();
  const burst = Array.from({ length: 10 }, () => c.agent.request('session/new', { cwd, mcpServers: [] }).catch(() => undefined));
  await waitFor('a child spawned for the burst', () => d.childPids().length > 0);
  assert.equal(await d.stop(), 0);
  assert.deepEqual(processesOfHome(d.home), [], 'no process of this home is left');
  void burst;
});

test("Ctrl-C in a terminal (SIGINT to the daemon's whole process group) is a clean stop: the spawner waits to be let go, nothing is logged as lost", async (t) => {
  const { spawn } = await import('node:child_process');
  const { existsSync } = await import('node:fs');
  const home = tempDir();
  // Its own process group, as a shell gives a foreground job: the terminal signals the whole group.
  const serve = spawn(process.execPath, ['bin/troupe.js', 'serve', '--port', '0', '--pool', '1'], { env: { PATH: process.env.PATH, TROUPE_HOME: home }, stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  let stderr = '';
  serve.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((r) => serve.once('exit', (code) => r(code)));
  // Detached, the group outlives the test runner if the test fails half-way: whatever is left goes.
  t.after(() => {
    for (const pid of processesOfHome(home)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
  });
  // The spawner and the pooled child it started: the processes the group signal also reaches.
  await waitFor('the daemon to serve, with a pooled child', () => existsSync(`${home}/daemon.json`) && processesOfHome(home).length >= 3, 20_000);
  process.kill(-serve.pid!, 'SIGINT');
  assert.equal(await exited, 0, stderr);
  assert.doesNotMatch(stderr, /spawner process exited/, 'the spawner did not die of the signal before the daemon let it go');
  assert.doesNotMatch(stderr, / error /);
  await waitFor('no process of this home left', () => processesOfHome(home).length === 0, 15_000);
});

test('one daemon per TROUPE_HOME: a second one exits 1 with daemon_running', async (t) => {
  const d = await Daemon.start();
  t.after(() => d.stop());
  const { spawnSync } = await import('node:child_process');
  const second = spawnSync(process.execPath, ['bin/troupe.js', 'serve', '--port', '0'], { env: { PATH: process.env.PATH, TROUPE_HOME: d.home }, encoding: 'utf8', timeout: 15_000 });
  assert.equal(second.status, 1);
  assert.match(second.stderr, /already serves .*\(daemon_running\)/);
});

test('a port in use: troupe serve exits 1 with listen_failed and the reason, and leaves the home unlocked', async (t) => {
  const { createServer } = await import('node:net');
  const { spawnSync } = await import('node:child_process');
  const { existsSync } = await import('node:fs');
  const holder = createServer();
  await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
  t.after(() => holder.close());
  const port = (holder.address() as { port: number }).port;
  const home = tempDir();
  const served = spawnSync(process.execPath, ['bin/troupe.js', 'serve', '--port', String(port)], { env: { PATH: process.env.PATH, TROUPE_HOME: home }, encoding: 'utf8', timeout: 15_000 });
  assert.equal(served.status, 1);
  assert.match(served.stderr, new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}: the address is in use .*\\(listen_failed\\)`));
  assert.ok(!existsSync(`${home}/daemon.lock`) && !existsSync(`${home}/daemon.json`));
});

test('a TROUPE_HOME it cannot make: troupe serve exits 1 with one line that says so and daemon_start_failed', async () => {
  const file = `${tempDir()}/a-file`;
  writeFileSync(file, '');
  const served = spawnSync(process.execPath, ['bin/troupe.js', 'serve', '--port', '0', '--pool', '0'], { env: { PATH: process.env.PATH, TROUPE_HOME: `${file}/home` }, encoding: 'utf8', timeout: 15_000 });
  assert.equal(served.status, 1, served.stderr);
  // Until 2026-12-06: "troupe serve: ENOTDIR: not a directory, mkdir '…'", with no code.
  assert.match(served.stderr, /^troupe serve: cannot use the state directory .*a-file\/home \(ENOTDIR\): set TROUPE_HOME to a directory you can write \(daemon_start_failed\)\n$/);
});

test('a TLS certificate or key it cannot use: troupe serve exits 1 with one line and listen_failed, and leaves the home unlocked', async () => {
  const files = tempDir();
  writeFileSync(`${files}/cert.pem`, 'not a certificate\n');
  writeFileSync(`${files}/key.pem`, 'not a key\n');
  // Until 2026-12-06 these ended as 'troupe serve: App construction failed' and a bare ENOENT, with no code.
  for (const [cert, key, why] of [
    [`${files}/missing.pem`, `${files}/key.pem`, /cannot read .*missing\.pem \(ENOENT\)/],
    [`${files}/cert.pem`, `${files}/key.pem`, /they are not a PEM certificate and its private key/],
  ] as const) {
    const home = tempDir();
    const served = spawnSync(process.execPath, ['bin/troupe.js', 'serve', '--port', '0', '--pool', '0', '--tls-cert', cert, '--tls-key', key], { env: { PATH: process.env.PATH, TROUPE_HOME: home }, encoding: 'utf8', timeout: 15_000 });
    assert.equal(served.status, 1, served.stderr);
    assert.equal(served.stderr.trim().split('\n').length, 1, served.stderr);
    assert.match(served.stderr, /^troupe serve: cannot serve HTTPS with the certificate .* \(listen_failed\)\n$/);
    assert.match(served.stderr, why);
    assert.ok(!existsSync(`${home}/daemon.lock`) && !existsSync(`${home}/daemon.json`));
  }
});
