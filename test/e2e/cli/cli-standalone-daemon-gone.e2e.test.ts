// `troupe run --standalone`, which must leave no process, port or directory behind however it ends,
// and clients (run, chat, attach, watch) whose daemon goes away under them or whose session fails.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHttpStream } from '@agentclientprotocol/sdk/experimental/http-client';
import { AcpClient, Daemon, tempDir } from '../../support/daemon.js';
import { jsonLines, makeHome, pidAlive, processesOfHome, until, type Background, type Home, SUITE_TIMEOUT_MS } from '../../support/cli/cli-harness.js';
import { REPLIES } from '../../support/cli/control-replies.js';

/** What run, chat, attach and watch say of a local daemon that went away under them. */
const DAEMON_GONE = "the daemon at http://127\\.0\\.0\\.1:\\d+ went away \\(it stopped or died\\): 'troupe daemon start' starts it again, and 'troupe daemon logs' may say why it stopped";

/** No process with the standalone daemon's home, nothing listening on its port, its directory gone. */
async function assertNothingLeft(pid: number, port: number, home: string): Promise<void> {
  assert.equal(pidAlive(pid), false, 'the daemon process is gone');
  assert.equal(existsSync(home), false, 'its directory is removed');
  const refused = await new Promise<boolean>((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => (s.destroy(), resolve(false)));
    s.once('error', () => resolve(true));
  });
  assert.ok(refused, 'nothing accepts connections on its port');
  const hexPort = `:${port.toString(16).toUpperCase().padStart(4, '0')} `;
  const listening = readFileSync('/proc/net/tcp', 'utf8').split('\n').filter((l) => l.includes(hexPort) && / 0A /.test(l));
  assert.deepEqual(listening, [], 'no listening socket on that port');
  // No process (the daemon or a session child) still runs with that home.
  const leftovers = processesOfHome(home);
  assert.deepEqual(leftovers, []);
}

/**
 * `troupe run --standalone --json 'please hang'` (in a process group of its own with `group`), in a
 * fresh TMPDIR, once its turn runs: `body` is given the command and its private daemon, as the command
 * names it on stderr; the TMPDIR is removed after.
 */
async function withHangingStandalone(
  h: Home,
  group: boolean,
  body: (b: Background, daemon: { pid: number; port: number; home: string }) => Promise<void>,
): Promise<void> {
  const tmp = mkdtempSync(join(tmpdir(), 'troupe-cli-standalone-'));
  try {
    const b = h.start(['run', '--standalone', '--json', 'please hang'], { env: { TMPDIR: tmp, TROUPE_LOG: 'debug' }, ...(group ? { group } : {}) });
    await until(() => b.stdout().includes('Working on it.'), 'the turn to run');
    const m = /standalone daemon pid (\d+) at http:\/\/127\.0\.0\.1:(\d+) \(home (\S+)\)/.exec(b.stderr());
    assert.ok(m, b.stderr());
    await body(b, { pid: Number(m[1]), port: Number(m[2]), home: m[3]! });
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

// Split from the turn-control suite (cli-turn-control.e2e.test.ts), with a home and daemons of its
// own: together they outgrew one suite's budget (SUITE_TIMEOUT_MS) at a load of 15 on 2 cores.
describe('troupe run --standalone, and clients whose daemon goes away', { concurrency: 1, timeout: SUITE_TIMEOUT_MS }, () => {
  let h: Home;
  // The home's own daemon runs, as a home's daemon is left running after a turn: --standalone must
  // not use it.
  before(async () => {
    h = makeHome({ replies: REPLIES });
    const started = await h.run(['daemon', 'start']);
    assert.equal(started.code, 0, started.stderr);
  });
  after(() => h.close());

  test('--standalone runs on a private daemon and leaves nothing behind', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'troupe-cli-standalone-'));
    try {
      const r = await h.run(['run', '--standalone', '--json', 'hello'], { env: { TMPDIR: tmp, TROUPE_LOG: 'debug' } });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(jsonLines(r.stdout).at(-1)!.stopReason, 'end_turn');
      const m = /standalone daemon pid (\d+) at (http:\/\/127\.0\.0\.1:(\d+)) \(home (\S+)\)/.exec(r.stderr);
      assert.ok(m, r.stderr);
      const [, pid, , port, home] = m;
      assert.ok(home!.startsWith(tmp), 'its state directory is a fresh temporary one');
      await assertNothingLeft(Number(pid), Number(port), home!);
      // The home's own daemon did not serve it.
      const standaloneId = jsonLines(r.stdout).at(-1)!.sessionId;
      const shared = await h.run(['sessions', '--all', '--json']);
      assert.equal(shared.code, 0, shared.stderr);
      assert.equal((JSON.parse(shared.stdout) as { id: string }[]).some((s) => s.id === standaloneId), false);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });

  test('--standalone killed with SIGTERM mid-turn still leaves nothing behind', async () => {
    await withHangingStandalone(h, false, async (b, daemon) => {
      b.child.kill('SIGTERM');
      const done = await b.done;
      assert.equal(done.code, null, 'it died of the signal');
      assert.doesNotMatch(done.stderr, /troupe run:/, 'no error is reported: nothing failed, it was told to stop');
      await assertNothingLeft(daemon.pid, daemon.port, daemon.home);
    });
  });

  test('--standalone interrupted by Ctrl-C in a terminal (SIGINT to its whole process group) cancels the turn, exits 130 and leaves nothing behind', async () => {
    await withHangingStandalone(h, true, async (b, daemon) => {
      // The terminal signals the foreground group: before, the private daemon was in it, stopped at
      // once, and the command failed with daemon_unreachable (exit 1).
      process.kill(-b.child.pid!, 'SIGINT');
      const done = await b.done;
      assert.equal(done.code, 130, done.stderr);
      assert.equal(jsonLines(done.stdout).at(-1)!.stopReason, 'cancelled');
      assert.doesNotMatch(done.stderr, /daemon_unreachable/);
      await assertNothingLeft(daemon.pid, daemon.port, daemon.home);
    });
  });

  test('--standalone killed with SIGKILL (the command alone, or its whole group): its daemon is stopped and its directory removed all the same', async () => {
    for (const whole of [false, true]) {
      await withHangingStandalone(h, true, async (b, { pid, port, home }) => {
        // Nothing runs in the command after a SIGKILL: before, its daemon ran on for ever (the
        // command alone killed), or died with the group and left its directory.
        process.kill(whole ? -b.child.pid! : b.child.pid!, 'SIGKILL');
        assert.equal((await b.done).code, null);
        await until(() => !pidAlive(pid) && !existsSync(home) && processesOfHome(home).length === 0, `the daemon stopped and its directory removed (${whole ? 'group' : 'command'} killed)`, 30_000);
        await assertNothingLeft(pid, port, home);
      });
    }
  });

  test('--standalone whose stdout closes early (| head) stops quietly and leaves nothing behind', async () => {
    await withHangingStandalone(h, false, async (b, daemon) => {
      b.child.stdout!.destroy();
      // Ctrl-C cancels the turn; the final line then hits the closed pipe.
      b.child.kill('SIGINT');
      const done = await b.done;
      assert.equal(done.code, 0, done.stderr);
      assert.doesNotMatch(done.stderr, /troupe run:|EPIPE/, 'no error is reported');
      await assertNothingLeft(daemon.pid, daemon.port, daemon.home);
    });
  });

  test('chat, attach and watch end with an error when the daemon goes away, instead of waiting on a dead connection', async () => {
    const d = makeHome({ replies: REPLIES });
    try {
      // A session deleted while watched or attached ends the watch and the attach normally (attach
      // waited for updates forever: it is told by _troupe/session_deleted).
      const other = jsonLines((await d.run(['run', '--json', 'hello'])).stdout).at(-1)!.sessionId as string;
      const watchDeleted = d.start(['watch', other]);
      const attachDeleted = d.start(['attach', other]);
      await until(() => watchDeleted.stdout().includes('turn_completed'), 'watch to catch up');
      await until(() => attachDeleted.stderr().includes('attached to'), 'attach to resume the session');
      assert.equal((await d.run(['sessions', 'delete', other])).code, 0);
      const deleted = await watchDeleted.done;
      assert.equal(deleted.code, 0, deleted.stderr);
      assert.equal(deleted.stderr, `troupe watch: session ${other} was deleted\n`);
      await until(() => attachDeleted.child.exitCode !== null, 'attach to end with the session');
      const detached = await attachDeleted.done;
      assert.equal(detached.code, 0, detached.stderr);
      assert.match(detached.stderr, new RegExp(`\\ntroupe attach: session ${other} was deleted\\n$`));

      // Its stdin stays open, as a program feeding it would keep it.
      const chat = d.start(['chat']);
      chat.child.stdin!.write('please hang\n');
      await until(() => chat.stdout().includes('Working on it.'), 'the chat turn to run');
      const sessionId = /session (ses_\w+) in/.exec(chat.stdout())![1]!;
      const attach = d.start(['attach', sessionId, '--json']);
      await until(() => attach.stderr().includes('attached to'), 'attach to resume the session');
      const watch = d.start(['watch', sessionId]);
      await until(() => watch.stdout().includes('Working on it.'), 'watch to catch up');
      const stop = await d.run(['daemon', 'stop']);
      assert.equal(stop.code, 0, stop.stderr);
      for (const [name, b] of [['chat', chat], ['attach', attach]] as const) {
        await until(() => b.child.exitCode !== null, `${name} to exit once the daemon is gone`);
        const r = await b.done;
        assert.equal(r.code, 1, `${name}: ${r.stderr}`);
        assert.match(r.stderr, new RegExp(`(^|\\n)troupe ${name}: ${DAEMON_GONE} \\(daemon_unreachable\\)\\n$`));
      }
      await until(() => watch.child.exitCode !== null, 'watch to exit once the daemon is gone');
      const w = await watch.done;
      assert.equal(w.code, 1, w.stderr);
      // Depending on when it looks, the daemon is stopping (and still answers) or gone.
      assert.match(w.stderr, new RegExp(`^troupe watch: (${DAEMON_GONE}|the daemon at \\S+ ended the event stream) \\(daemon_unreachable\\)\\n$`));
    } finally {
      await d.close();
    }
  });

  test('a daemon killed hard: run --session, watch and attach each say in plain words that it went away and what to do (daemon_unreachable, exit 1), the transport\'s words only with TROUPE_LOG=debug', async () => {
    const d = makeHome({ replies: REPLIES });
    try {
      const sessionId = jsonLines((await d.run(['run', '--json', 'hello'])).stdout).at(-1)!.sessionId as string;
      const run = d.start(['run', '--session', sessionId, 'please hang']);
      await until(() => run.stdout().includes('Working on it.'), 'the turn to run');
      // Its prompt waits behind the running turn: its request too is cut off by the kill.
      const debugRun = d.start(['run', '--session', sessionId, 'hello'], { env: { TROUPE_LOG: 'debug' } });
      const watch = d.start(['watch', sessionId]);
      const attach = d.start(['attach', sessionId]);
      await until(() => watch.stdout().includes('Working on it.'), 'watch to catch up');
      await until(() => attach.stderr().includes('attached to'), 'attach to resume the session');
      // Killed before it has found the daemon, it would start another one.
      await until(async () => JSON.parse((await d.run(['sessions', 'show', sessionId, '--json'])).stdout).connections === 3, 'the debug run to be connected');
      process.kill(d.daemonState()!.pid, 'SIGKILL');
      for (const [name, b] of [['run', run], ['watch', watch], ['attach', attach]] as const) {
        await until(() => b.child.exitCode !== null, `${name} to exit once the daemon is gone`);
        const r = await b.done;
        assert.equal(r.code, 1, `${name}: ${r.stderr}`);
        // Until 2026-12-07 run said `lost the connection to the daemon at URL (terminated: UND_ERR_SOCKET)`.
        assert.match(r.stderr, new RegExp(`(^|\\n)troupe ${name}: ${DAEMON_GONE} \\(daemon_unreachable\\)\\n$`));
        assert.doesNotMatch(r.stderr, /terminated|fetch failed|other side closed|UND_ERR|ECONN|stream (is )?closed/i, name);
      }
      await until(() => debugRun.child.exitCode !== null, 'the debug run to exit once the daemon is gone');
      const debug = await debugRun.done;
      assert.equal(debug.code, 1, debug.stderr);
      assert.match(debug.stderr, new RegExp(`(^|\\n)troupe run: ${DAEMON_GONE} \\(daemon_unreachable\\)\\n`));
      assert.match(debug.stderr, /\ncaused by: \w*Error: \S/);
    } finally {
      // The dead daemon's children end by themselves (spec/daemon.md §Spawner, Deaths).
      await until(() => processesOfHome(d.dir).length === 0, "the killed daemon's children to exit", 30_000).catch(() => undefined);
      await d.close();
    }
  });

  test('attach to a session that fails (its child crashes past the restart intensity) ends with session_failed, exit 1', async () => {
    const d = await Daemon.start({ script: { replies: REPLIES }, args: ['--restart-intensity', '1', '--restart-period-ms', '60000'] });
    const c = d.connect('http');
    try {
      await c.init();
      const { sessionId } = await c.agent.request('session/new', { cwd: tempDir(), mcpServers: [] });
      const attach = h.start(['attach', sessionId], { env: { TROUPE_URL: d.url, TROUPE_TOKEN: d.token } });
      await until(() => attach.stderr().includes('attached to'), 'attach to resume the session');
      const child = async () => (await d.api('GET', `/v1/sessions/${sessionId}`)).json.child as { pid: number; state: string };
      const first = (await child()).pid;
      process.kill(first, 'SIGKILL');
      const second = await until(async () => {
        const ch = await child();
        return ch.pid !== first && ch.state === 'ready' && ch.pid;
      }, 'a restart');
      process.kill(second, 'SIGKILL');
      await until(() => attach.child.exitCode !== null, 'attach to end with the failed session');
      const r = await attach.done;
      assert.equal(r.code, 1, r.stderr);
      const hint = `'troupe sessions revive ${sessionId}' once its cause is fixed (session_failed)\n`;
      assert.ok(r.stderr.endsWith(`\ntroupe attach: session ${sessionId} crashed too often and is no longer restarted: ${hint}`), r.stderr);
      // Steering it says so too, and how to bring it back: until 2026-12-07 no_active_turn, with a
      // hint to start a turn with run --session, which fails with session_failed.
      const steer = await h.run(['steer', sessionId, 'go on'], { env: { TROUPE_URL: d.url, TROUPE_TOKEN: d.token } });
      assert.equal(steer.code, 1, steer.stderr);
      assert.equal(steer.stderr, `troupe steer: session ${sessionId} crashed too often and is no longer restarted: ${hint}`);
      // And a turn in it: until 2026-12-07 run --session named no way back.
      const run = await h.run(['run', '--session', sessionId, 'go on'], { env: { TROUPE_URL: d.url, TROUPE_TOKEN: d.token } });
      assert.equal(run.code, 1, run.stderr);
      assert.ok(run.stderr.endsWith(`: ${hint}`), run.stderr);
    } finally {
      c.close();
      await d.stop();
    }
  });

  test('attach --json: a permission request it rejects is noted on stderr, and stdout stays JSON lines', async () => {
    const d = makeHome({
      replies: [
        // The command is the model's text: its title is one printable line (the ESC a space, since
        // 2026-12-07), and the note spells out the command's escape sequence.
        [{ text: 'Soon.' }, { delay_ms: 3000 }, { tool_call: { name: 'run_command', input: { command: 'echo \x1b[2Jhi' } } }],
        [{ text: 'Done.' }],
      ],
    });
    try {
      assert.equal((await d.run(['daemon', 'start'])).code, 0);
      const state = d.daemonState()!;
      // A client prompts, then goes away before the tool call: its permission request then reaches
      // the attached client (spec/daemon.md, Relay).
      const a = new AcpClient(createHttpStream(`${state.url}/acp`, { headers: { Authorization: `Bearer ${d.token()}` } }), {});
      await a.init();
      const { sessionId } = await a.agent.request('session/new', { cwd: d.work, mcpServers: [] });
      const attach = d.start(['attach', sessionId, '--json']);
      await until(() => attach.stderr().includes('attached to'), 'attach to resume the session');
      void a.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'go' }] }).catch(() => undefined);
      await a.until(() => a.updatesFor(sessionId, 'agent_message_chunk').length > 0, 'the turn to start');
      a.close();
      await until(() => attach.stdout().includes('Done.'), 'the turn to go on without the tool call');
      attach.child.kill('SIGINT');
      const r = await attach.done;
      assert.equal(r.code, 0, r.stderr);
      assert.equal(a.permissions.length, 0, 'the permission request did not reach the client that left');
      const lines = jsonLines(r.stdout);
      assert.ok(lines.some((l) => l.update?.sessionUpdate === 'tool_call_update' && l.update.status === 'failed'), 'the tool call was rejected');
      assert.match(r.stderr, /\[attach is read-only: rejected Run `echo \[2Jhi` \(echo \\x1b\[2Jhi\); use --interactive to answer\]/);
      assert.ok(!r.stderr.includes('\x1b'), `no raw ESC in the note: ${JSON.stringify(r.stderr)}`);
    } finally {
      await d.close();
    }
  });
});
