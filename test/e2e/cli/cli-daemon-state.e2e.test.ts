// The daemon's state file ($TROUPE_HOME/daemon.json) removed, cut short or edited while the daemon
// runs (a stray `rm`, an editor, a full disk): the daemon writes it again, and clients find it. The
// same for its token file, which it also keeps closed to others.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeHome, pidAlive, until, SUITE_TIMEOUT_MS } from '../../support/cli/cli-harness.js';

/** A file's text, or undefined while there is none. */
function textOf(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** Whether `pid` has a SIGTERM waiting (a stopped process takes it once continued): /proc's ShdPnd. */
function sigtermPending(pid: number): boolean {
  const shd = /^ShdPnd:\s*([0-9a-f]+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return shd !== undefined && (BigInt(`0x${shd}`) & (1n << 14n)) !== 0n;
}

// The suites at once (and the tests of the second): each has a home and daemons of its own, and
// spends its time waiting on a daemon held still or on the daemon's checks of its files, one a
// second, not on the CPU.
// The time budget stays each suite's own (SUITE_TIMEOUT_MS), as when they ran one after another.
/**
 * A home whose daemon was started and then held still (SIGSTOP); `body` gets it and the daemon's pid.
 * The daemon is continued (if it still runs) and the home closed after, whatever `body` did.
 */
async function withHeldDaemon(body: (h: ReturnType<typeof makeHome>, pid: number) => Promise<void>): Promise<void> {
  const h = makeHome();
  let pid = 0;
  try {
    assert.equal((await h.run(['daemon', 'start'])).code, 0);
    pid = h.daemonState()!.pid;
    process.kill(pid, 'SIGSTOP');
    await body(h, pid);
  } finally {
    if (pid && pidAlive(pid)) process.kill(pid, 'SIGCONT');
    await h.close();
  }
}

describe('daemon.json and daemon.lock changed under a running daemon', { concurrency: true }, () => {
  describe('a running daemon keeps its state file true', { timeout: SUITE_TIMEOUT_MS }, () => {
    test('removed, cut short, or naming another process and URL: written again as it was; no second daemon', async () => {
      const h = makeHome();
      try {
        const started = await h.run(['daemon', 'start']);
        assert.equal(started.code, 0, started.stderr);
        const file = join(h.dir, 'daemon.json');
        const original = readFileSync(file, 'utf8');
        const state = JSON.parse(original) as { pid: number; url: string };
        const damages: [string, () => void][] = [
          ['removed', () => rmSync(file)],
          ['cut short', () => writeFileSync(file, original.slice(0, 20))],
          ['emptied', () => writeFileSync(file, '')],
          // Another live process (this one) and a URL where nothing answers.
          ['naming another process and URL', () => writeFileSync(file, JSON.stringify({ ...state, pid: process.pid, url: 'http://127.0.0.1:9' }))],
        ];
        for (const [what, damage] of damages) {
          damage();
          await until(() => textOf(file) === original, `the state file ${what}, written again`).catch((err) => {
            throw new Error(`${err.message}; daemon.log: ${readFileSync(join(h.dir, 'daemon.log'), 'utf8')}`);
          });
          assert.equal(statSync(file).mode & 0o777, 0o600, what);
          const listed = await h.run(['sessions', '--json']);
          assert.equal(listed.code, 0, `${what}: ${listed.stderr}`);
        }
        const log = readFileSync(join(h.dir, 'daemon.log'), 'utf8');
        assert.match(log, /daemon\.json was gone; written again/);
        assert.match(log, /daemon\.json was changed; written again/);
        assert.equal(log.match(/daemon listening on/g)?.length, 1, `one daemon started: ${log}`);
        assert.equal(h.daemonState()!.pid, state.pid);
      } finally {
        await h.close();
      }
    });

    test('its token file removed or cut short: written again as it was; another token in its place is left, and said', async () => {
      // Until 2026-12-07 a removed token stayed gone, and every command was refused forbidden until a restart.
      const h = makeHome();
      try {
        assert.equal((await h.run(['daemon', 'start'])).code, 0);
        const file = join(h.dir, 'token');
        const original = readFileSync(file, 'utf8');
        for (const [what, damage] of [['removed', () => rmSync(file)], ['cut short', () => writeFileSync(file, original.slice(0, 8))]] as const) {
          damage();
          await until(() => textOf(file) === original, `the token file ${what}, written again`);
          assert.equal(statSync(file).mode & 0o777, 0o600, what);
          const listed = await h.run(['sessions', '--json']);
          assert.equal(listed.code, 0, `${what}: ${listed.stderr}`);
        }
        const other = `${'x'.repeat(43)}\n`;
        writeFileSync(file, other);
        await until(() => /token holds another token than the one this daemon accepts/.test(readFileSync(join(h.dir, 'daemon.log'), 'utf8')), 'the other token said');
        assert.equal(textOf(file), other, 'left as written');
      } finally {
        await h.close();
      }
    });

    test('a token file others can read is made 0600 as the daemon starts, and said', async () => {
      // Until 2026-12-07 it was taken as it was: any user of the machine could read it and drive the sessions.
      const h = makeHome();
      try {
        const file = join(h.dir, 'token');
        const token = `${'t'.repeat(43)}\n`;
        writeFileSync(file, token, { mode: 0o644 });
        chmodSync(file, 0o644);
        assert.equal((await h.run(['daemon', 'start'])).code, 0);
        assert.deepEqual([statSync(file).mode & 0o777, textOf(file)], [0o600, token]);
        assert.match(readFileSync(join(h.dir, 'daemon.log'), 'utf8'), /token was open to others \(mode 0644\): anyone who reads it drives the sessions; made 0600/);
        assert.equal((await h.run(['sessions', '--json'])).code, 0, 'the token it had is the one it takes');
      } finally {
        await h.close();
      }
    });
  });

  describe('a daemon whose state file does not lead to it', { concurrency: true, timeout: SUITE_TIMEOUT_MS }, () => {
    test('the CLI waits for the daemon to write it again, and uses that daemon', () =>
      // Held still, so the file stays missing until the CLI is seen waiting for it.
      withHeldDaemon(async (h, pid) => {
        rmSync(join(h.dir, 'daemon.json'));
        const b = h.start(['sessions', '--json'], { env: { TROUPE_LOG: 'debug' } });
        await until(() => /waiting for the daemon to write it again/.test(b.stderr()) || b.child.exitCode !== null, 'the CLI waiting, or its exit');
        // Until 2026-12-07: "no troupe daemon is running for HOME (start one with 'troupe daemon start')".
        assert.equal(b.child.exitCode, null, `the CLI waits: ${b.stderr()}`);
        assert.equal(b.stderr(), `troupe: the daemon (pid ${pid}) holds ${join(h.dir, 'daemon.lock')}, but ${join(h.dir, 'daemon.json')} is missing; waiting for the daemon to write it again\n`);
        process.kill(pid, 'SIGCONT');
        const r = await b.done;
        assert.equal(r.code, 0, r.stderr);
        assert.deepEqual(JSON.parse(r.stdout), []);
        assert.equal(h.daemonState()!.pid, pid);
        assert.equal(readFileSync(join(h.dir, 'daemon.log'), 'utf8').match(/daemon listening on/g)?.length, 1, 'no second daemon');
      }));

    test('daemon stop of a daemon held still (SIGSTOP) says so and how to end it, instead of waiting 35 s to say it did not stop; continued, it stops on the SIGTERM sent', () =>
      withHeldDaemon(async (h, pid) => {
        const r = await h.run(['daemon', 'stop']);
        // Until 2026-12-07: "the daemon (pid …) did not stop within 35 s", 35 s later, and nothing more.
        assert.deepEqual([r.code, r.stdout, r.stderr], [1, '', `troupe daemon stop: the daemon (pid ${pid}) is stopped (SIGSTOP, or Ctrl-Z in its terminal), so it has not acted on the SIGTERM sent to it: 'kill -CONT ${pid}' lets it stop cleanly, 'kill -9 ${pid}' ends it at once (daemon_unreachable)\n`]);
        assert.ok(sigtermPending(pid), 'the SIGTERM waits in it');
        process.kill(pid, 'SIGCONT');
        await until(() => !pidAlive(pid), 'the daemon to stop once continued');
        assert.ok(!existsSync(join(h.dir, 'daemon.json')), 'cleanly: its state file removed');
      }));

    test('one that does not write it again (held still): daemon_state_lost, no second daemon; daemon stop stops it by its lock', () =>
      withHeldDaemon(async (h, pid) => {
        const state = h.daemonState()!;
        const file = join(h.dir, 'daemon.json');
        const lost = (command: string, problem: string) =>
          `troupe ${command}: a daemon (pid ${pid}) holds ${join(h.dir, 'daemon.lock')}, but ${file} ${problem}, and the daemon has not written it again (stopping, hung, a full disk, or older than this CLI: 'troupe daemon logs' may say): 'troupe daemon stop' stops it, then the next command starts one (daemon_state_lost)\n`;
        rmSync(file);
        // The commands at once: each waits for the file on its own (a lock taken under 15 s ago, by a
        // daemon that may still be starting, is waited for until then: daemon-locate.ts), and none may
        // start a second daemon whatever the others do.
        // Until 2026-12-07: sessions and status said no daemon was running; run and daemon start
        // started a second daemon, which failed on the lock (daemon_start_failed).
        const commands = [['sessions', ['sessions']], ['run', ['run', 'hello']], ['daemon start', ['daemon', 'start']], ['daemon status', ['daemon', 'status']]] as const;
        const [status, ...results] = await Promise.all([h.run(['daemon', 'status', '--json']), ...commands.map(([, args]) => h.run([...args]))]);
        commands.forEach(([name], i) => {
          const r = results[i]!;
          assert.deepEqual([r.code, r.stdout, r.stderr], [1, '', lost(name, 'is missing')], name);
        });
        assert.equal(status.code, 1);
        assert.deepEqual(JSON.parse(status.stdout), { running: true, url: null, pid, home: h.dir, error: { code: 'daemon_state_lost', message: lost('daemon status', 'is missing').replace(/^troupe daemon status: (.*) \(daemon_state_lost\)\n$/, '$1') } });
        const damaged: [string, string, string][] = [
          ['cut short', '{"pid": 12', 'is not a valid state file (damaged or cut short)'],
          // This test's own process stands for another live process.
          ['another process', JSON.stringify({ ...state, pid: process.pid }), `names pid ${process.pid}, not the daemon's`],
          ['another URL', JSON.stringify({ ...state, url: 'http://127.0.0.1:9' }), 'names http://127.0.0.1:9, where nothing answers'],
        ];
        for (const [what, text, problem] of damaged) {
          writeFileSync(file, text);
          const r = await h.run(['sessions']);
          assert.deepEqual([r.code, r.stderr], [1, lost('sessions', problem)], what);
        }
        const log = readFileSync(join(h.dir, 'daemon.log'), 'utf8');
        assert.equal(log.match(/daemon listening on/g)?.length, 1, `no second daemon: ${log}`);
        assert.doesNotMatch(log, /troupe serve: /, 'none was even tried');

        // The lock names the daemon (its pid and start time): stop signals it, file or not.
        rmSync(file);
        const stop = h.start(['daemon', 'stop']);
        await until(() => sigtermPending(pid) || stop.child.exitCode !== null, 'the SIGTERM, or the exit of stop');
        process.kill(pid, 'SIGCONT');
        const r = await stop.done;
        // Until 2026-12-07: "no daemon is running", exit 0, and the daemon went on.
        assert.deepEqual([r.code, r.stdout, r.stderr], [0, `stopped the daemon (pid ${pid})\n`, '']);
        assert.ok(!pidAlive(pid), 'the daemon exited');
        assert.ok(!existsSync(join(h.dir, 'daemon.lock')), 'and released its lock');
      }));
  });

  describe('a running daemon whose lock is removed', { timeout: SUITE_TIMEOUT_MS }, () => {
    test('a daemon started meanwhile keeps the home: the first leaves its state file alone, takes its home again when it stops, and removes nothing of it when stopped itself', async () => {
      const h = makeHome();
      const pids = new Set<number>();
      const file = join(h.dir, 'daemon.json');
      const lock = join(h.dir, 'daemon.lock');
      const log = () => readFileSync(join(h.dir, 'daemon.log'), 'utf8');
      /** Holds `pid` still while both files go and another daemon starts in the gap; the new one's pid and state file. */
      const supplant = async (pid: number) => {
        process.kill(pid, 'SIGSTOP');
        rmSync(lock);
        rmSync(file);
        const started = await h.run(['daemon', 'start']);
        assert.equal(started.code, 0, started.stderr);
        const other = h.daemonState()!.pid;
        pids.add(other);
        assert.notEqual(other, pid);
        const text = readFileSync(file, 'utf8');
        process.kill(pid, 'SIGCONT');
        // Until 2026-12-07 each daemon wrote the state file again as its own: the two in turn, every second.
        await until(() => log().includes(`another daemon (pid ${other}) holds ${lock} now`), 'the first daemon to find the lock taken');
        assert.equal(readFileSync(file, 'utf8'), text, 'the new daemon state file, untouched');
        assert.doesNotMatch(log(), /daemon\.json was changed; written again/);
        return { other, text };
      };
      try {
        assert.equal((await h.run(['daemon', 'start'])).code, 0);
        const firstText = readFileSync(file, 'utf8');
        const first = h.daemonState()!.pid;
        pids.add(first);
        const { other: second } = await supplant(first);
        const stop = await h.run(['daemon', 'stop']);
        assert.deepEqual([stop.code, stop.stdout], [0, `stopped the daemon (pid ${second})\n`], stop.stderr);
        await until(() => textOf(lock)?.startsWith(`${first} `) && textOf(file) === firstText, 'the first daemon to take its lock and state file again');
        assert.match(log(), /daemon\.lock was gone; taken again/);
        assert.equal((await h.run(['sessions', '--json'])).code, 0);

        // Stopped while another daemon has its home (as its log asks), it leaves that one's files alone.
        const { other: third, text: thirdText } = await supplant(first);
        // The third held still meanwhile, so that it could not write its file again.
        process.kill(third, 'SIGSTOP');
        process.kill(first, 'SIGTERM');
        await until(() => !pidAlive(first), 'the first daemon to exit');
        assert.equal(textOf(file), thirdText);
        assert.ok(textOf(lock)?.startsWith(`${third} `));
        process.kill(third, 'SIGCONT');
        const listed = await h.run(['sessions', '--json']);
        assert.equal(listed.code, 0, listed.stderr);
      } finally {
        for (const pid of pids) if (pidAlive(pid)) (process.kill(pid, 'SIGCONT'), process.kill(pid, 'SIGTERM'));
        await h.close();
      }
    });
  });
});
