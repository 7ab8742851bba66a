// `troupe daemon start` with options of `troupe serve`: passed on to the daemon it starts (until
// 2026-12-07 it took none, and started a bare `serve --port 0`); a mistake among them is a usage
// error before anything starts; a daemon already running is left with its own options, and says so.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createWebSocketStream } from '@agentclientprotocol/sdk/experimental/ws-client';
import WebSocket from 'ws';
import { makeHome, processesOfHome, type Home, SUITE_TIMEOUT_MS } from '../../support/cli/cli-harness.js';
import { AcpClient } from '../../support/daemon.js';

describe('troupe daemon start with serve options', { concurrency: 1, timeout: SUITE_TIMEOUT_MS }, () => {
  let h: Home;
  before(() => void (h = makeHome()));
  after(() => h.close());

  test('a mistake among them is a usage error, exit 2, and nothing is started', async () => {
    for (const [args, said] of [
      [['--max-sessions', '0'], /--max-sessions must be an integer from 1 to 1000000000, got '0'/],
      [['--pool', '4', '--heartbeat-ms', '1000', '--heartbeat-timeout-ms', '100'], /--heartbeat-timeout-ms \(100\) must be at least three heartbeats/],
      [['--tls-cert', 'cert.pem'], /--tls-cert and --tls-key go together/],
      [['--allow-origin', '*'], /allow-origin/],
      [['--pools', '4'], /unknown option '--pools'/],
      // A value joined to its option is passed on joined: split, one that starts with a dash is ambiguous to serve.
      [['--pool=-1'], /--pool must be an integer from 0 to 1000, got '-1'/],
    ] as const) {
      const r = await h.run(['daemon', 'start', ...args]);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, said);
      assert.match(r.stderr, /^troupe daemon start: .*\(try 'troupe (serve|daemon start) --help'\)\n$/);
      assert.equal(r.stdout, '');
    }
    for (const file of ['daemon.json', 'daemon.lock', 'daemon.log']) assert.equal(existsSync(join(h.dir, file)), false, `${file} made`);
    assert.deepEqual(processesOfHome(h.dir), [], 'no daemon started');
  });

  test('--pool 1 --max-sessions 1: the daemon runs with them (a second session/new is capacity_exceeded)', async () => {
    const r = await h.run(['daemon', 'start', '--pool', '1', '--max-sessions', '1']);
    assert.equal(r.code, 0, r.stderr);
    const state = h.daemonState()!;
    assert.match(r.stdout, new RegExp(`^started the daemon at ${state.url.replace(/\./g, '\\.')} \\(pid ${state.pid}\\)\\n$`));
    // The serve it started, as given, on a free port unless told another.
    const argv = readFileSync(`/proc/${state.pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    assert.deepEqual(argv.slice(argv.indexOf('serve')), ['serve', '--port', '0', '--pool', '1', '--max-sessions', '1']);
    const clients = [0, 1].map(() => new AcpClient(createWebSocketStream(`${state.url.replace(/^http/, 'ws')}/acp`, { WebSocket: WebSocket as never, headers: { Authorization: `Bearer ${h.token()}` } }), {}));
    try {
      for (const c of clients) await c.init();
      await clients[0]!.agent.request('session/new', { cwd: h.work, mcpServers: [] });
      const refused = await clients[1]!.agent.request('session/new', { cwd: h.work, mcpServers: [] }).then(
        (ok) => assert.fail(`a second live session past --max-sessions 1: ${JSON.stringify(ok)}`),
        (err) => err,
      );
      assert.equal(refused.data?.code, 'capacity_exceeded', JSON.stringify(refused));
    } finally {
      clients.forEach((c) => c.close());
    }
  });

  test('a daemon already running keeps its options, and the start says so and how to restart it with them', async () => {
    const state = h.daemonState()!;
    const r = await h.run(['daemon', 'start', '--pool', '4']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `the daemon is already running at ${state.url} (pid ${state.pid})\n`);
    assert.equal(r.stderr, `troupe daemon start: a daemon already runs, with the options it was started with (--pool 4 not applied): 'troupe daemon stop', then 'troupe daemon start --pool 4', restarts it with them\n`);
    assert.equal(h.daemonState()!.pid, state.pid);
  });
});
