// `troupe daemon` against a daemon of another version (a stand-in process that answers /v1/health
// like an older troupe and records itself in the state file): reported, kept without --force,
// replaced with it. Then `daemon logs` of the new one.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, makeHome, pidAlive, until, type Home, SUITE_TIMEOUT_MS } from '../../support/cli/cli-harness.js';
import { boundByFileModes, canDropFileOverride } from '../../support/cli/unprivileged.js';

const OLD_DAEMON = `
const http = require('node:http');
const fs = require('node:fs');
const home = process.env.TROUPE_HOME;
const body = (res, value) => { res.setHeader('content-type', 'application/json'); res.end(JSON.stringify(value)); };
const server = http.createServer((req, res) => {
  if (req.url === '/v1/health') return body(res, { version: '0.0.1-old', uptimeMs: 61000, sessions: { live: 0, total: 3 } });
  if (req.url.startsWith('/v1/sessions')) return body(res, { sessions: [] });
  res.statusCode = 404;
  body(res, { error: { code: 'method_not_found', message: 'no' } });
});
server.listen(0, '127.0.0.1', () => {
  fs.writeFileSync(home + '/token', 'old-token\\n');
  // Written and renamed, as troupe writes it: the test reads the file as soon as it appears.
  const tmp = home + '/daemon.json.' + process.pid + '.tmp';
  fs.writeFileSync(tmp, JSON.stringify({ pid: process.pid, url: 'http://127.0.0.1:' + server.address().port, version: '0.0.1-old', startedAt: Date.now() }));
  fs.renameSync(tmp, home + '/daemon.json');
});
process.on('SIGTERM', () => { fs.rmSync(home + '/daemon.json', { force: true }); process.exit(0); });
`;

// The suites at once: each has a home and daemons of its own, and much of their time is waiting on
// commands and daemons. Each suite's own tests stay one after another (concurrency: 1, as a suite
// would otherwise take its parent's): a suite's tests share its home.
// The time budget stays each suite's own (SUITE_TIMEOUT_MS), as when they ran one after another.
describe('troupe daemon end to end', { concurrency: true }, () => {
  describe('troupe daemon and versions', { concurrency: 1, timeout: SUITE_TIMEOUT_MS }, () => {
    let h: Home;
    let old: ChildProcess;
    before(async () => {
      h = makeHome();
      old = spawn(process.execPath, ['-e', OLD_DAEMON], { env: { ...process.env, TROUPE_HOME: h.dir }, stdio: 'ignore' });
      await until(() => h.daemonState(), 'the old daemon to record itself');
    });
    after(async () => {
      if (old.exitCode === null) old.kill('SIGKILL');
      await h.close();
    });

    test('a daemon of another version is reported and kept without --force', async () => {
      const status = await h.run(['daemon', 'status', '--json']);
      assert.equal(status.code, 0, status.stderr);
      const s = JSON.parse(status.stdout);
      assert.equal(s.version, '0.0.1-old');
      assert.equal(s.versionMatches, false);
      assert.equal(s.url, h.daemonState()!.url);
      const text = await h.run(['daemon', 'status']);
      assert.match(text.stdout, /troupe daemon 0\.0\.1-old \(this CLI is [^)]+: 'troupe daemon start --force' replaces it\)/);
      assert.match(text.stdout, /uptime {4}1m 1s/);
      const start = await h.run(['daemon', 'start']);
      assert.equal(start.code, 1);
      assert.match(start.stderr, /a daemon of version 0\.0\.1-old runs at .*--force.*\(daemon_version_mismatch\)\n$/);
      assert.ok(pidAlive(old.pid!), 'the old daemon still runs');
    });

    test('--force replaces it; logs shows the new one', async () => {
      const start = await h.run(['daemon', 'start', '--force']);
      assert.equal(start.code, 0, start.stderr);
      await until(() => old.exitCode !== null, 'the old daemon to exit');
      const state = h.daemonState()!;
      assert.notEqual(state.pid, old.pid);
      assert.ok(pidAlive(state.pid));
      const status = JSON.parse((await h.run(['daemon', 'status', '--json'])).stdout);
      assert.equal(status.versionMatches, true);
      const logs = await h.run(['daemon', 'logs']);
      assert.equal(logs.code, 0, logs.stderr);
      assert.match(logs.stdout, new RegExp(`daemon listening on ${state.url.replace(/\./g, '\\.')}`));
      const last = await h.run(['daemon', 'logs', '-n', '1']);
      assert.equal(last.stdout, `${logs.stdout.trimEnd().split('\n').at(-1)}\n`);
      const none = await h.run(['daemon', 'logs', '-n', '0']);
      assert.equal(none.code, 0, none.stderr);
      assert.equal(none.stdout, '', '-n 0 prints no line, as tail -n 0');
    });
  });

  describe('troupe daemon stop and a stale state file', { concurrency: 1, timeout: SUITE_TIMEOUT_MS }, () => {
    test('a state file left by a daemon killed hard, whose pid is now another process: that process is left alone', async () => {
      const h = makeHome();
      // Stands for whatever process got the dead daemon's pid (after a reboot, say): not a daemon.
      const other = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
      try {
        const url = 'http://127.0.0.1:9'; // nothing answers there
        writeFileSync(join(h.dir, 'daemon.json'), JSON.stringify({ pid: other.pid, url, version: '0.0.1', startedAt: Date.now() }));
        const stop = await h.run(['daemon', 'stop']);
        assert.equal(stop.code, 1, stop.stdout + stop.stderr);
        assert.equal(stop.stdout, '');
        assert.match(stop.stderr, new RegExp(`^troupe daemon stop: pid ${other.pid} .* does not answer at ${url.replace(/\./g, '\\.')}: left alone.*\\(daemon_unreachable\\)\\n$`));
        assert.ok(pidAlive(other.pid!), 'the other process was not signalled');
        assert.equal(other.exitCode, null);
      } finally {
        other.kill('SIGKILL');
        rmSync(join(h.dir, 'daemon.json'), { force: true });
        await h.close();
      }
    });
  });

  describe('starts at once', { concurrency: 1, timeout: SUITE_TIMEOUT_MS }, () => {
    let h: Home;
    before(() => void (h = makeHome()));
    after(() => h.close());

    test('three `daemon start` at once on a fresh home: one says it started the daemon, the others that it runs, all of the same pid', async () => {
      const starts = await Promise.all([0, 1, 2].map(() => h.run(['daemon', 'start'])));
      for (const s of starts) assert.equal(s.code, 0, s.stderr);
      const pid = h.daemonState()!.pid;
      const said = starts.map((s) => s.stdout.replace(/ at \S+/, '')).sort();
      assert.deepEqual(said, [`started the daemon (pid ${pid})\n`, `the daemon is already running (pid ${pid})\n`, `the daemon is already running (pid ${pid})\n`].sort(), JSON.stringify(starts.map((s) => s.stdout)));
    });
  });

  describe('a daemon that cannot start', { concurrency: 1, timeout: SUITE_TIMEOUT_MS }, () => {
    test('its own reason is in the line (a token it cannot write: a directory in its place)', async () => {
      const h = makeHome();
      try {
        mkdirSync(join(h.dir, 'token'));
        for (const [name, args] of [['daemon start', ['daemon', 'start']], ['run', ['run', 'hello']]] as const) {
          const r = await h.run([...args]);
          assert.equal(r.code, 1, `${name}: ${r.stderr}`);
          // Until 2026-12-06: "the daemon did not start: it exited with code 1; see …/daemon.log".
          assert.equal(r.stderr, `troupe ${name}: the daemon did not start: EISDIR: illegal operation on a directory, open '${join(h.dir, 'token')}'; see ${join(h.dir, 'daemon.log')} (daemon_start_failed)\n`);
        }
      } finally {
        await h.close();
      }
    });
  });

  describe('a local daemon serving HTTPS with its own certificate', { concurrency: 1, timeout: SUITE_TIMEOUT_MS }, () => {
    test('a CLI that does not trust the certificate says so, not "no daemon is running"; trusting it, the CLI works and stops the daemon', async () => {
      const h = makeHome();
      const cert = join(h.dir, 'cert.pem');
      const key = join(h.dir, 'key.pem');
      execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
      // No extra CA (the test runner's own environment may carry one): the self-signed certificate is untrusted.
      const untrusted = { NODE_EXTRA_CA_CERTS: '' };
      try {
        h.start(['serve', '--port', '0', '--tls-cert', cert, '--tls-key', key]);
        const state = await until(() => h.daemonState(), 'the HTTPS daemon to record itself');
        assert.match(state.url, /^https:\/\/127\.0\.0\.1:\d+$/);
        const clear = new RegExp(`^troupe (sessions|daemon stop|run): the daemon at ${state.url.replace(/\./g, '\\.')} serves a TLS certificate this process does not trust \\((DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN)\\): run the CLI with NODE_EXTRA_CA_CERTS .*\\(daemon_unreachable\\)\\n$`);
        for (const args of [['sessions'], ['daemon', 'stop'], ['run', 'hello']]) {
          const r = await h.run(args, { env: untrusted });
          assert.equal(r.code, 1, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
          assert.match(r.stderr, clear, args.join(' '));
        }
        const status = await h.run(['daemon', 'status', '--json'], { env: untrusted });
        assert.equal(status.code, 1);
        const reported = JSON.parse(status.stdout) as { running: boolean; url: string; error: { code: string; message: string } };
        assert.deepEqual([reported.running, reported.url, reported.error.code], [false, state.url, 'daemon_unreachable']);
        assert.match(reported.error.message, /does not trust/);
        assert.ok(pidAlive(state.pid), 'the untrusting stop left the daemon alone');

        const trusted = { NODE_EXTRA_CA_CERTS: cert };
        const listed = await h.run(['sessions', '--json'], { env: trusted });
        assert.equal(listed.code, 0, listed.stderr);
        // Trusted, but reached by a name it does not have (it names IP:127.0.0.1 only): the line says
        // so, where until 2026-12-07 it sent the user to set NODE_EXTRA_CA_CERTS, as set already.
        const byName = state.url.replace('127.0.0.1', 'localhost');
        const misnamed = await h.run(['sessions'], { env: { ...trusted, TROUPE_URL: byName } });
        assert.equal(misnamed.code, 1, misnamed.stderr);
        assert.equal(misnamed.stderr, `troupe sessions: the daemon at ${byName} serves a TLS certificate that does not name localhost (ERR_TLS_CERT_ALTNAME_INVALID): reach it by a name the certificate has (the daemon's --host, or TROUPE_URL), or make one with that name (a subjectAltName such as DNS:localhost) (daemon_unreachable)\n`);
        const stop = await h.run(['daemon', 'stop'], { env: trusted });
        assert.equal(stop.code, 0, stop.stderr);
        assert.equal(stop.stdout, `stopped the daemon (pid ${state.pid})\n`);
        assert.ok(!pidAlive(state.pid));
      } finally {
        await h.close();
      }
    });
  });

  /** `troupe ...args` in `h`, as a process that file modes bind (root too). */
  function runBound(h: Home, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    const [file, argv] = boundByFileModes([process.execPath, BIN, ...args]);
    return new Promise((done) =>
      execFile(file, argv, { env: h.env, timeout: 20_000 }, (err, stdout, stderr) => done({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr })),
    );
  }

  describe('a daemon whose token this user cannot read', { concurrency: 1, timeout: SUITE_TIMEOUT_MS }, () => {
    test('says so, not that the daemon refused the token or that there is none yet', { skip: !canDropFileOverride }, async () => {
      const h = makeHome();
      try {
        assert.equal((await h.run(['daemon', 'start'])).code, 0);
        const state = h.daemonState()!;
        const token = join(h.dir, 'token');
        chmodSync(token, 0o000);
        // Until 2026-12-06: "the daemon at … refused the token … (forbidden)", and for `daemon token`
        // "no token in … yet (start the daemon once …)".
        const line = `cannot read the daemon's token ${token}: permission denied (EACCES); run the CLI as the user who started the daemon (daemon_unreachable)`;
        for (const [name, args] of [['sessions', ['sessions']], ['run', ['run', 'hello']], ['daemon token', ['daemon', 'token']], ['daemon status', ['daemon', 'status']]] as const) {
          const r = await runBound(h, [...args]);
          assert.deepEqual([r.code, r.stdout, r.stderr], [1, '', `troupe ${name}: ${line}\n`], name);
        }
        // --json: on stdout, as for a daemon that refuses the token.
        const status = await runBound(h, ['daemon', 'status', '--json']);
        assert.equal(status.code, 1);
        assert.deepEqual(JSON.parse(status.stdout), { running: true, url: state.url, pid: state.pid, home: h.dir, error: { code: 'daemon_unreachable', message: line.replace(/ \(daemon_unreachable\)$/, '') } });
        chmodSync(token, 0o600);
      } finally {
        await h.close();
      }
    });
  });

  describe('troupe daemon logs and its file', { concurrency: 1, timeout: SUITE_TIMEOUT_MS }, () => {
    test('--follow goes on across the log removed and made again (a rotation), and Ctrl-C ends it: exit 0, nothing on stderr', async () => {
      const h = makeHome();
      try {
        const log = join(h.dir, 'daemon.log');
        writeFileSync(log, 'first\n');
        const b = h.start(['daemon', 'logs', '-f', '-n', '1']);
        await until(() => b.stdout() === 'first\n', 'the last line');
        appendFileSync(log, 'second\n');
        await until(() => b.stdout().endsWith('second\n'), 'the appended line');
        // Until 2026-12-06 the follower threw from its watch callback here: a stack trace, exit 1.
        rmSync(log);
        writeFileSync(log, 'rotated\n');
        await until(() => b.stdout().endsWith('rotated\n') || b.child.exitCode !== null, 'the new file, or an exit');
        assert.equal(b.child.exitCode, null, `still following; stderr: ${b.stderr()}`);
        b.child.kill('SIGINT');
        const r = await b.done;
        assert.deepEqual([r.code, r.stdout, r.stderr], [0, 'first\nsecond\nrotated\n', '']);
      } finally {
        await h.close();
      }
    });

    test('a log it may not read is log_read_failed with the errno, one line', { skip: !canDropFileOverride }, async () => {
      const h = makeHome();
      try {
        const log = join(h.dir, 'daemon.log');
        writeFileSync(log, 'secret\n');
        chmodSync(log, 0o000);
        const r = await runBound(h, ['daemon', 'logs']);
        // Until 2026-12-06: "troupe daemon logs: EACCES: permission denied, open '…'", with no code.
        assert.deepEqual([r.code, r.stdout, r.stderr], [1, '', `troupe daemon logs: cannot read ${log}: permission denied (EACCES) (log_read_failed)\n`]);
      } finally {
        await h.close();
      }
    });
  });
});
