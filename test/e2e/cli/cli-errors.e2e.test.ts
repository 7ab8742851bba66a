// Bad input end to end: an unknown session, an unreachable daemon, a wrong token, usage mistakes.
// Each must give exactly one clear line on stderr (no stack trace) and the documented exit code.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { CliIo } from '../../../src/cli/cli-io.js';
import { BIN, makeHome, runEach, until, type CliResult, type Home, SUITE_TIMEOUT_MS } from '../../support/cli/cli-harness.js';

function oneLine(r: CliResult, pattern: RegExp): void {
  const lines = r.stderr.split('\n').filter(Boolean);
  assert.equal(lines.length, 1, `one line on stderr, got: ${r.stderr}`);
  assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
  assert.match(lines[0]!, pattern);
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  await new Promise((r) => server.close(r));
  return port;
}

describe('troupe CLI errors', { timeout: SUITE_TIMEOUT_MS }, () => {
  let h: Home;
  before(async () => {
    h = makeHome();
    const started = await h.run(['daemon', 'start']);
    assert.equal(started.code, 0, started.stderr);
  });
  after(() => h.close());

  /** `troupe watch ID …args` against a stand-in daemon whose event stream of `id` is `stream` (SSE text). */
  async function watchStandIn(id: string, stream: string, args: string[] = []): Promise<CliResult> {
    const server = createHttpServer((req, res) => {
      const json = (v: unknown) => (res.writeHead(200, { 'Content-Type': 'application/json' }), res.end(JSON.stringify(v)));
      if (req.url === '/v1/health') return json({ version: 'x', uptimeMs: 1, sessions: { live: 1, total: 1 } });
      if (req.url === `/v1/sessions/${id}`) return json({ id, cwd: '/', status: 'active', lastSeq: 50, machines: {}, transitions: [] });
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.end(stream);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
      return await h.run(['watch', id, ...args], { env: { TROUPE_URL: url, TROUPE_TOKEN: 'x'.repeat(43) } });
    } finally {
      await new Promise((r) => server.close(r));
    }
  }

  test('an unknown session id', async () => {
    const id = 'ses_0doesnotexist';
    for (const [args, r] of await runEach([['run', '--session', id, 'hello'], ['sessions', 'show', id], ['watch', id], ['cancel', id], ['steer', id, 'x'], ['attach', id], ['sessions', 'delete', id]], (args) => h.run(args))) {
      assert.equal(r.code, 1, `${args.join(' ')}: ${r.stderr}`);
      oneLine(r, new RegExp(`^troupe ${args[0]}.*: no session ${id} \\(session_not_found\\)$`));
    }
  });

  test('an id no session can have (`..`, `.`, `%2e%2e`, `a/b`) is an unknown session too, not a route of the daemon', async () => {
    // Until 2026-12-06 `..` was a dot segment fetch resolved away: "No route for GET /v1/ (method_not_found)".
    const cases = ['..', '.', '%2e%2e', 'a/b'].flatMap((id) => [['sessions', 'show', id], ['watch', id], ['cancel', id], ['steer', id, 'x'], ['sessions', 'delete', id], ['sessions', 'revive', id], ['inspect', id]].map((args) => [id, args] as const));
    for (const [[id, args], r] of await runEach(cases, ([, args]) => h.run(args))) {
      assert.equal(r.code, 1, `${args.join(' ')}: ${r.stderr}`);
      const command = args[0] === 'sessions' ? `sessions ${args[1]}` : args[0];
      assert.equal(r.stderr, `troupe ${command}: no session ${id} (session_not_found)\n`, args.join(' '));
    }
  });

  test('a deleted session is unknown to watch too (its log holds only a tombstone)', async () => {
    const run = await h.run(['run', '--json', 'hello']);
    assert.equal(run.code, 0, run.stderr);
    const id = (JSON.parse(run.stdout.trimEnd().split('\n').at(-1)!) as { sessionId: string }).sessionId;
    assert.equal((await h.run(['sessions', 'delete', id])).code, 0);
    for (const [args, r] of await runEach([['watch', id], ['watch', id, '--no-follow']], (args) => h.run(args))) {
      assert.equal(r.code, 1, `${args.join(' ')}: ${r.stderr}`);
      oneLine(r, new RegExp(`^troupe watch: no session ${id} \\(session_not_found\\)$`));
    }
  });

  test('a replay gap: the daemon\'s reason once, what to do, the code', async () => {
    // A stand-in daemon whose event stream of ses_0gap starts with a gap.
    const gap = `event: replay_gap\ndata: ${JSON.stringify({ code: 'replay_gap', message: 'events after seq 3 are no longer available (retained from 9)', after: 3 })}\n\n`;
    const r = await watchStandIn('ses_0gap', gap, ['--after', '3']);
    assert.equal(r.code, 1, r.stderr);
    oneLine(r, /^troupe watch: events after seq 3 are no longer available \(retained from 9\); watch from a later cursor or reload the session \(replay_gap\)$/);
  });

  test('a replay gap of a log cut short under the stream (`lastSeq`): what to do is to watch from before where the log ends now', async () => {
    const message = "the session's log holds events through seq 4 only (cut short: a damaged tail or a machine crash); the events after it that were sent, through seq 7, are gone";
    const gap = `event: replay_gap\ndata: ${JSON.stringify({ code: 'replay_gap', message, after: 0, lastSeq: 4 })}\n\n`;
    const r = await watchStandIn('ses_0cut', gap);
    assert.equal(r.code, 1, r.stderr);
    // Until 2026-12-07 a stream of a cut log just ended; "a later cursor" would be refused there.
    oneLine(r, /; watch again from seq 4 or before or reload the session \(replay_gap\)$/);
  });

  test('an event stream that fails with a code of the daemon (a damaged log): watch shows that code, not daemon_unreachable', async () => {
    const failed = `event: error\ndata: ${JSON.stringify({ code: 'log_corrupt', message: 'ses_0bad.log is damaged after seq 12', after: 0 })}\n\n`;
    const r = await watchStandIn('ses_0bad', failed);
    assert.equal(r.code, 1, r.stderr);
    oneLine(r, /^troupe watch: the event stream failed: ses_0bad\.log is damaged after seq 12 \(log_corrupt\)$/);
  });

  test('an unreachable daemon (TROUPE_URL to a closed port), with no auto-start', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const other = makeHome({ env: { TROUPE_URL: url, TROUPE_TOKEN: 'x'.repeat(43) } });
    try {
      for (const [args, r] of await runEach([['run', 'hello'], ['sessions'], ['daemon', 'status'], ['watch', 'ses_0abc']], (args) => other.run(args))) {
        assert.equal(r.code, 1, `${args.join(' ')}: ${r.stderr}`);
        oneLine(r, new RegExp(`cannot reach the troupe daemon at ${url} \\(ECONNREFUSED\\) \\(daemon_unreachable\\)$`));
      }
      // status --json says so on stdout, as it does when no local daemon runs (a script reads it).
      const status = await other.run(['daemon', 'status', '--json']);
      assert.equal(status.code, 1);
      assert.deepEqual(JSON.parse(status.stdout), { running: false, url, error: { code: 'daemon_unreachable', message: `cannot reach the troupe daemon at ${url} (ECONNREFUSED)` } });
      assert.equal(other.daemonState(), undefined, 'TROUPE_URL disables auto-start');
    } finally {
      await other.close();
    }
  });

  test('a TROUPE_URL that does not parse, or carries a password, a query or a fragment, is a usage mistake (exit 2) that never prints the password', async () => {
    // Until 2026-12-06 these were daemon_unreachable (exit 1), and the line quoted the URL, password and all.
    const urls = [
      ['http://', /TROUPE_URL is not a valid URL, got 'http:\/\/'$/],
      ['http://[::1', /TROUPE_URL is not a valid URL, got 'http:\/\/\[::1'$/],
      ['http://127.0.0.1:99999', /TROUPE_URL is not a valid URL, got 'http:\/\/127\.0\.0\.1:99999'$/],
      ['http://me:s3cret@[::1', /TROUPE_URL is not a valid URL, got 'http:\/\/…@\[::1'$/],
      ['ftp://me:s3cret@host', /TROUPE_URL must start with http:\/\/ or https:\/\/, got 'ftp:\/\/…@host'$/],
      ['http://me:s3cret@127.0.0.1:7433', /TROUPE_URL must not carry a user or password \(the token goes in TROUPE_TOKEN\), got 'http:\/\/…@127\.0\.0\.1:7433'$/],
      // Until 2026-12-07 the routes were appended after the query: `No route for GET /`, exit 1.
      ['http://127.0.0.1:7433/?token=s3cret', /TROUPE_URL must not carry a query or a fragment \(the daemon's address only\), got 'http:\/\/127\.0\.0\.1:7433\/\?…'$/],
      ['http://127.0.0.1:7433#s3cret', /TROUPE_URL must not carry a query or a fragment \(the daemon's address only\), got 'http:\/\/127\.0\.0\.1:7433\?…'$/],
    ] as const;
    const cases = urls.flatMap(([url, pattern]) => [['sessions'], ['run', 'hello'], ['daemon', 'status', '--json']].map((args) => [url, pattern, args] as const));
    for (const [[url, pattern, args], r] of await runEach(cases, ([url, , args]) => h.run(args, { env: { TROUPE_URL: url, TROUPE_TOKEN: 'x'.repeat(43) } }))) {
      assert.equal(r.code, 2, `${url} ${args.join(' ')}: ${r.stderr}`);
      oneLine(r, new RegExp(`^troupe ${args[0]}[a-z ]*: ${pattern.source}`));
      assert.doesNotMatch(r.stderr + r.stdout, /s3cret/);
    }
  });

  test('TROUPE_URL naming a server that is not a troupe daemon: daemon_unreachable, not internal_error', async () => {
    const server = createHttpServer((_req, res) => {
      res.writeHead(404, { 'Content-Type': 'text/html' });
      res.end('<!DOCTYPE html><title>Not Found</title>');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      for (const [args, r] of await runEach([['run', 'hello'], ['sessions'], ['daemon', 'status']], (args) => h.run(args, { env: { TROUPE_URL: url, TROUPE_TOKEN: 'x'.repeat(43) } }))) {
        assert.equal(r.code, 1, `${args.join(' ')}: ${r.stderr}`);
        oneLine(r, new RegExp(`: the server at ${url} is not a troupe daemon: it answered HTTP 404 to /v1/health \\(daemon_unreachable\\)$`));
      }
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  test("a daemon whose token file is missing: the CLI says so, naming the file and what to do, not that the token was refused", async () => {
    // A stand-in daemon of a home of its own (this process's pid in its daemon.json), which refuses an
    // empty token as a daemon does; the home has no token file, and nothing writes one again.
    const other = makeHome();
    const server = createHttpServer((req, res) => {
      const ok = req.url === '/v1/health';
      res.writeHead(ok ? 200 : 401, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(ok ? { version: '0.0.0' } : { error: { code: 'unauthorized', message: 'missing token' } }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
      writeFileSync(join(other.dir, 'daemon.json'), JSON.stringify({ pid: process.pid, url }));
      const r = await other.run(['sessions']);
      assert.equal(r.code, 1, r.stderr);
      // Until 2026-12-07: "the daemon at … refused the token: missing token (check TROUPE_TOKEN or $TROUPE_HOME/token) (unauthorized)".
      oneLine(r, new RegExp(`^troupe sessions: the daemon at ${url} runs, but its token file ${join(other.dir, 'token')} is missing or empty .*troupe daemon stop, then troupe daemon start.*\\(daemon_unreachable\\)$`));
    } finally {
      await new Promise((r) => server.close(r));
      await other.close();
    }
  });

  test('a wrong token', async () => {
    const env = { TROUPE_URL: h.daemonState()!.url, TROUPE_TOKEN: 'not-the-token' };
    for (const [args, r] of await runEach([['run', 'hello'], ['sessions'], ['chat'], ['daemon', 'status'], ['sessions', 'show', 'ses_0abc'], ['watch', 'ses_0abc'], ['steer', 'ses_0abc', 'x'], ['cancel', 'ses_0abc']], (args) => h.run(args, { env }))) {
      assert.equal(r.code, 1, `${args.join(' ')}: ${r.stderr}`);
      oneLine(r, /refused the token.*\(forbidden\)$/);
    }
    // status --json: the daemon runs (its health needs no token) and refuses the token; a script
    // reading stdout gets that as JSON, not nothing.
    const status = await h.run(['daemon', 'status', '--json'], { env });
    assert.equal(status.code, 1, status.stderr);
    const json = JSON.parse(status.stdout);
    assert.deepEqual([json.running, json.url, json.error.code], [true, env.TROUPE_URL, 'forbidden']);
    assert.match(json.error.message, /refused the token/);
  });

  test('a TROUPE_HOME that cannot be written: one line, daemon_start_failed', async () => {
    // A file where the directory should be: unwritable as a directory, even for root.
    const home = join(h.work, 'not-a-directory');
    writeFileSync(home, '');
    for (const [[name], r] of await runEach([['run', ['run', 'hello']], ['chat', ['chat']], ['daemon start', ['daemon', 'start']]] as const, ([, args]) => h.run([...args], { env: { TROUPE_HOME: home } }))) {
      assert.equal(r.code, 1, `${name}: ${r.stderr}`);
      oneLine(r, new RegExp(`^troupe ${name}: cannot use the state directory ${home} \\(EEXIST\\).*\\(daemon_start_failed\\)$`));
    }
  });

  test('run --standalone with a TMPDIR it cannot make its home in: one line, daemon_start_failed', async () => {
    const tmp = join(h.work, 'tmp-is-a-file');
    writeFileSync(tmp, '');
    const r = await h.run(['run', '--standalone', 'hello'], { env: { TMPDIR: tmp } });
    assert.equal(r.code, 1, r.stderr);
    // Until 2026-12-06: "troupe run: ENOTDIR: not a directory, mkdtemp '…'", with no code.
    oneLine(r, new RegExp(`^troupe run: cannot make the standalone daemon's state directory in ${tmp} \\(ENOTDIR\\): set TMPDIR to a directory you can write \\(daemon_start_failed\\)$`));
  });

  test('run and chat in a directory removed under the shell: one line that says so, invalid_params', async () => {
    // The shell stands in the directory, removes it, and runs troupe there (as after `git worktree remove`).
    const inGone = (args: string[]) => {
      const gone = join(h.work, `gone-${Math.random().toString(36).slice(2, 8)}`);
      mkdirSync(gone);
      const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
      return new Promise<CliResult>((done) =>
        execFile('sh', ['-c', `cd ${q(gone)} && rmdir ${q(gone)} && exec ${q(process.execPath)} ${q(BIN)} ${args.map(q).join(' ')} </dev/null`], { env: h.env, timeout: 30_000 }, (err, stdout, stderr) =>
          done({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
        ),
      );
    };
    // Until 2026-12-06: "troupe run: ENOENT: no such file or directory, uv_cwd", with no code.
    for (const [[name, args, line], r] of await runEach(
      [
        ['run', ['run', 'hello'], 'the current directory is gone (ENOENT): cd to one that exists, or give --cwd DIR'],
        ['chat', ['chat'], 'the current directory is gone (ENOENT): cd to one that exists, or give --cwd DIR'],
        ['run', ['run', '--cwd', h.work, '--add-dir', 'rel', 'hello'], "'rel' is relative to the current directory, which is gone (ENOENT): give an absolute path"],
      ] as const,
      ([, args]) => inGone([...args]),
    )) {
      assert.equal(r.code, 1, `${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stderr, `troupe ${name}: ${line} (invalid_params)\n`, args.join(' '));
    }
    // An absolute --cwd needs no current directory.
    const ok = await inGone(['run', '--cwd', h.work, 'hello']);
    assert.equal(ok.code, 0, ok.stderr);
  });

  test('a TROUPE_HOME under /proc (no directory can be made there): one line, daemon_start_failed, at once', { skip: !existsSync('/proc/self') }, async () => {
    // Node's recursive mkdirSync never returned for such a path: run and daemon start hung at full CPU.
    const home = '/proc/troupe-nope';
    for (const [name, args] of [['daemon start', ['daemon', 'start']], ['run', ['run', 'hello']]] as const) {
      const b = h.start([...args], { env: { TROUPE_HOME: home } });
      b.child.stdin!.end();
      try {
        await until(() => b.child.exitCode !== null, `${name} to give up on ${home}`, 20_000);
      } finally {
        b.child.kill('SIGKILL');
      }
      const r = await b.done;
      assert.equal(r.code, 1, `${name}: ${r.stderr}`);
      oneLine(r, new RegExp(`^troupe ${name}: cannot use the state directory ${home} \\(ENOENT\\).*\\(daemon_start_failed\\)$`));
    }
    // The daemon itself gives up too (the same one-line error, exit 1), before it serves anything.
    const b = h.start(['serve', '--port', '0'], { env: { TROUPE_HOME: home } });
    try {
      await until(() => b.child.exitCode !== null, `serve to give up on ${home}`, 20_000);
    } finally {
      b.child.kill('SIGKILL');
    }
    const served = await b.done;
    assert.equal(served.code, 1, served.stderr);
    oneLine(served, new RegExp(`^troupe serve: cannot use the state directory ${home} \\(ENOENT\\).*\\(daemon_start_failed\\)$`));
  });

  test('a mistyped --model or --mode: the error, and no empty session left behind', async () => {
    const ids = async () => (JSON.parse((await h.run(['sessions', '--json'])).stdout) as { id: string }[]).map((x) => x.id).sort();
    const before = await ids();
    for (const [[args, pattern], r] of await runEach(
      [
        [['run', '--model', 'nope/x', 'hello'], /^troupe run: no provider serves 'nope\/x'.*\(model_not_found\)$/],
        // A model the provider has not, when the provider's catalogue is all it has: until 2026-12-07 taken, and the turn failed.
        [['run', '--model', 'scripted/nope', 'hello'], /^troupe run: scripted has no model 'nope': its models are scripted\/demo, scripted\/replay \(model_not_found\)$/],
        [['run', '--mode', 'bogus', 'hello'], /^troupe run: unknown mode 'bogus'.*\(invalid_params\)$/],
        [['chat', '--mode', 'bogus'], /^troupe chat: unknown mode 'bogus'.*\(invalid_params\)$/],
      ] as const,
      ([args]) => h.run([...args]),
    )) {
      assert.equal(r.code, 1, `${args.join(' ')}: ${r.stderr}`);
      oneLine(r, pattern);
    }
    assert.deepEqual(await ids(), before);
  });

  test('the commands that need no daemon report errors the same way: one line with the code', async () => {
    const missing = await h.run(['log', 'dump', 'ses_0doesnotexist']);
    assert.equal(missing.code, 1);
    oneLine(missing, /^troupe log dump: no log at .*ses_0doesnotexist\.log \(session_not_found\)$/);
    const config = join(h.work, 'config');
    mkdirSync(join(config, 'troupe'), { recursive: true });
    writeFileSync(join(config, 'troupe', 'config.json'), '{not json');
    const models = await h.run(['models'], { env: { XDG_CONFIG_HOME: config } });
    assert.equal(models.code, 1);
    oneLine(models, /^troupe models: the troupe config .* is not valid JSON: .* \(invalid_params\)$/);
  });

  test('models and log dump take the options every command takes: --no-color changes nothing in output that has no colour', async () => {
    const run = await h.run(['run', '--json', 'hello']);
    assert.equal(run.code, 0, run.stderr);
    const id = (JSON.parse(run.stdout.trimEnd().split('\n').at(-1)!) as { sessionId: string }).sessionId;
    for (const [args, [plain, noColor]] of await runEach([['models'], ['models', '--json'], ['log', 'dump', id], ['log', 'dump', id, '--json']], (args) => Promise.all([h.run(args), h.run([...args, '--no-color'])]), 2)) {
      assert.equal(plain.code, 0, `${args.join(' ')}: ${plain.stderr}`);
      assert.equal(noColor.code, 0, `${args.join(' ')} --no-color: ${noColor.stderr}`);
      assert.ok(plain.stdout.length > 0);
      assert.equal(noColor.stdout, plain.stdout, args.join(' '));
    }
  });

  test('usage mistakes exit 2', async () => {
    const cases = [
      [['run'], /missing the prompt/],
      // Until 2026-12-07 Node's two sentences, their quotes unbalanced: "Unknown option '--bogus'. To specify a
      // positional argument starting with a '-', place it at the end of the command after '--', as in '-- "--bogus"".
      [['run', '--bogus', 'x'], /^troupe run: unknown option '--bogus' \(a prompt that starts with '-' goes after '--': troupe run -- "--bogus"\) \(try 'troupe run --help'\)$/],
      [['run', 'fix', '-yx'], /^troupe run: unknown option '-x' in '-yx' \(a prompt that starts with '-' goes after '--': troupe run fix -- "-yx"\) \(try 'troupe run --help'\)$/],
      [['steer', 'ses_0abc', '--bogus'], /^troupe steer: unknown option '--bogus' \(a text that starts with '-' goes after '--': troupe steer ses_0abc -- "--bogus"\) \(try 'troupe steer --help'\)$/],
      [['log', 'dump', '-weird.log'], /^troupe log dump: unknown option '-w' in '-weird\.log' \(a file name that starts with '-' goes after '--': troupe log dump -- "-weird\.log"\) \(try 'troupe log dump --help'\)$/],
      // Until 2026-12-07 "Option '--json' does not take an argument", "Option '--cwd <value>' argument missing".
      [['run', '--json=1', 'x'], /^troupe run: --json takes no value, got '1' \(try 'troupe run --help'\)$/],
      [['run', 'x', '--cwd'], /^troupe run: --cwd needs a value \(try 'troupe run --help'\)$/],
      [['daemon', 'logs', '-n'], /^troupe daemon logs: -n needs a value \(try 'troupe daemon logs --help'\)$/],
      [['frobnicate'], /unknown command 'frobnicate'/],
      // Named as the command it is (until 2026-12-07 `troupe daemon restart: unknown subcommand …`).
      [['daemon', 'restart'], /^troupe daemon: unknown subcommand 'restart'/],
      [['watch', 'ses_0abc', '--after', 'soon'], /--after must be a non-negative integer/],
      // What Number() reads as a number is not a seq either.
      [['watch', 'ses_0abc', '--after', '0x10'], /--after must be a non-negative integer, got '0x10'/],
      [['watch', 'ses_0abc', '--after', '1e21'], /--after must be a non-negative integer, got '1e21'/],
      [['watch', 'ses_0abc', '--after='], /^troupe watch: --after needs a value, got an empty one \(try 'troupe watch --help'\)$/],
      // No option takes an empty value: `--session "$ID"` with ID unset started a new session (until 2026-12-06).
      [['run', '--session', '', 'hello'], /^troupe run: --session needs a value, got an empty one \(try 'troupe run --help'\)$/],
      [['run', '--cwd=', 'hello'], /^troupe run: --cwd needs a value, got an empty one/],
      [['run', '--add-dir', '.', '--add-dir', '', 'hello'], /^troupe run: --add-dir needs a value, got an empty one/],
      [['chat', '--model', ''], /^troupe chat: --model needs a value, got an empty one \(try 'troupe chat --help'\)$/],
      [['steer', 'ses_0abc', 'x', '--turn', ''], /^troupe steer: --turn needs a value, got an empty one/],
      [['daemon', 'logs', '-n', ''], /^troupe daemon logs: -n needs a value, got an empty one \(try 'troupe daemon logs --help'\)$/],
      // An empty id is a missing one: it was read as /v1/sessions//inspect, "no session inspect".
      [['inspect', ''], /^troupe inspect: missing the session id \(try 'troupe inspect --help'\)$/],
      [['steer', 'ses_0abc'], /missing the text/],
      [['daemon', 'logs', '-n', 'ten'], /^troupe daemon logs: --lines must be a non-negative integer, got 'ten'/],
      [['daemon', 'stop', '--force'], /^troupe daemon stop: unknown option '--force' for 'daemon stop' \(try 'troupe daemon --help'\)$/],
      [['daemon', 'token', '--json'], /^troupe daemon token: unknown option '--json' for 'daemon token'/],
      [['daemon', 'stop', 'now'], /^troupe daemon stop: unexpected argument 'now'/],
      [['cancel', 'ses_0abc', 'ses_0def'], /^troupe cancel: unexpected argument 'ses_0def' \(try 'troupe cancel --help'\)$/],
      [['watch', 'ses_0abc', '120'], /^troupe watch: unexpected argument '120'/],
      [['attach', 'ses_0abc', 'x'], /^troupe attach: unexpected argument 'x'/],
      [['sessions', 'show', 'ses_0abc', 'x'], /^troupe sessions show: unexpected argument 'x'/],
      [['chat', 'fix the bug'], /^troupe chat: takes no prompt argument, got 'fix the bug'.*troupe run/],
      [['models', '--bogus'], /^troupe models: unknown option '--bogus' \(try 'troupe models --help'\)$/],
      [['models', 'anthropic'], /^troupe models: unexpected argument 'anthropic' \(try 'troupe models --help'\)$/],
      [['log'], /^troupe log: missing the subcommand/],
      // As for `log`: a missing subcommand is a usage mistake, not the help (exit 0, before 2026-12-02).
      [['daemon'], /^troupe daemon: missing the subcommand \(start, stop, status, logs or token\) \(try 'troupe daemon --help'\)$/],
      // A value that starts with a dash: what to write, not Node's first line ("argument is ambiguous").
      [['watch', 'ses_0abc', '--after', '-1'], /^troupe watch: --after needs a value, and '-1' looks like an option \(a value that starts with '-' is written --after=-1\) \(try 'troupe watch --help'\)$/],
      [['daemon', 'logs', '-n', '-5'], /^troupe daemon logs: -n needs a value, and '-5' looks like an option \(a value that starts with '-' is written --lines=-5\) \(try 'troupe daemon logs --help'\)$/],
      [['watch', 'ses_0abc', '--after=-1'], /^troupe watch: --after must be a non-negative integer, got '-1'/],
      [['log', 'dump'], /^troupe log dump: missing the session id or log file \(try 'troupe log dump --help'\)$/],
      [['log', 'dump', '--bogus', 'ses_0abc'], /^troupe log dump: unknown option '--bogus' \(a file name that starts with '-' goes after '--': troupe log dump -- "--bogus"\) \(try 'troupe log dump --help'\)$/],
      [['log', 'dump', 'ses_0abc', 'ses_0def'], /^troupe log dump: unexpected argument 'ses_0def' \(try 'troupe log dump --help'\)$/],
      [['inspect', '--bogus'], /^troupe inspect: unknown option '--bogus' \(try 'troupe inspect --help'\)$/],
      [['inspect', 'ses_0abc', '--last', '0'], /^troupe inspect: --last must be a positive integer/],
      // Until 2026-12-07: exit 1 invalid_params from the daemon, and without an id, ignored (exit 0).
      [['inspect', 'ses_0abc', '--last', '5000'], /^troupe inspect: --last must be from 1 to 500 \(the most transitions the daemon sends\), got '5000' \(try 'troupe inspect --help'\)$/],
      [['inspect', '--last', '5'], /^troupe inspect: --last needs a session id \(try 'troupe inspect --help'\)$/],
    ] as const;
    for (const [[args, pattern], r] of await runEach(cases, ([args]) => h.run([...args]))) {
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      oneLine(r, pattern);
    }
  });

  test('troupe serve: a number that is not decimal digits within its range is a usage mistake (exit 2), found before the lock', async () => {
    // This home's daemon holds the lock: a serve that got as far as the lock would exit 1 with
    // daemon_running (and on a free home, --port 70000 served on port 4464, 0x10 on 16).
    const cases = [
      [['--port', '70000'], /--port must be an integer from 0 to 65535, got '70000'/],
      [['--port', '65536'], /--port must be an integer from 0 to 65535, got '65536'/],
      [['--port', '0x10'], /--port must be an integer from 0 to 65535, got '0x10'/],
      [['--port', '1e3'], /--port must be an integer from 0 to 65535, got '1e3'/],
      [['--port', ''], /--port must be an integer from 0 to 65535, got ''/],
      [['--port', 'abc'], /--port must be an integer from 0 to 65535, got 'abc'/],
      [['--child-nice', '20'], /--child-nice must be an integer from 0 to 19, got '20'/],
      [['--idle-ms', '3000000000'], /--idle-ms must be an integer from 1 to 2147483647, got '3000000000'/],
      [['--pool', '-1'], /--pool needs a value, and '-1' looks like an option \(a value that starts with '-' is written --pool=-1\)/],
      [['--pool=-1'], /--pool must be an integer from 0 to 1000, got '-1'/],
      [['--heartbeat-ms', '1000', '--heartbeat-timeout-ms', '2000'], /--heartbeat-timeout-ms \(2000\) must be at least three heartbeats/],
      [['--startup-timeout-ms', '50'], /--startup-timeout-ms must be an integer from 100 to 2147483647, got '50'/],
      [['--tls-cert', 'x.pem'], /--tls-cert and --tls-key go together/],
      [['--bogus'], /unknown option '--bogus'/],
      [['--snapshot=1'], /--snapshot takes no value, got '1'/],
      [['--port'], /--port needs a value/],
      // Until 2026-12-07: "Unexpected argument 'now'. This command does not take positional arguments".
      [['now'], /unexpected argument 'now'/],
      // Until 2026-12-07 an empty host (`--host "$HOST"`, HOST unset) bound every interface and wrote
      // the URL `http://:PORT`; and an --allow-origin that is no origin was taken, never to match.
      [['--host', ''], /--host needs an address \(127\.0\.0\.1, or 0\.0\.0\.0 for every interface\), got ''/],
      [['--allow-origin', '*'], /--allow-origin takes an origin as a browser sends it, http\(s\):\/\/host\[:port\] \(e\.g\. http:\/\/localhost:3000\), got '\*': every origin at once is not offered, name each one/],
      [['--allow-origin', 'localhost:3000'], /--allow-origin takes an origin .*, got 'localhost:3000'/],
      [['--allow-origin', 'http://localhost:3000/app'], /--allow-origin takes an origin .*, got 'http:\/\/localhost:3000\/app'/],
    ] as const;
    for (const [[args, pattern], r] of await runEach(cases, ([args]) => h.run(['serve', ...args]))) {
      assert.equal(r.code, 2, `serve ${args.join(' ')}: ${r.stderr}`);
      oneLine(r, new RegExp(`^troupe serve: ${pattern.source}.* \\(try 'troupe serve --help'\\)$`));
    }
  });

  test('watch --no-follow refuses a cursor beyond the latest seq, as following does (invalid_cursor)', async () => {
    const run = await h.run(['run', '--json', 'hello']);
    assert.equal(run.code, 0, run.stderr);
    const id = (JSON.parse(run.stdout.trimEnd().split('\n').at(-1)!) as { sessionId: string }).sessionId;
    const lastSeq = (JSON.parse((await h.run(['sessions', 'show', id, '--json'])).stdout) as { lastSeq: number }).lastSeq;
    for (const [args, r] of await runEach([['watch', id, '--after', String(lastSeq + 1)], ['watch', id, '--after', String(lastSeq + 1), '--no-follow']], (args) => h.run(args))) {
      assert.equal(r.code, 1, `${args.join(' ')}: ${r.stderr}`);
      oneLine(r, new RegExp(`^troupe watch: cursor ${lastSeq + 1} is beyond the latest seq ${lastSeq} \\(invalid_cursor\\)$`));
    }
    // At the latest seq there is simply nothing after it.
    const atEnd = await h.run(['watch', id, '--after', String(lastSeq), '--no-follow']);
    assert.deepEqual([atEnd.code, atEnd.stdout, atEnd.stderr], [0, '', '']);
  });

  test('sessions --help says what delete leaves: a tombstone, not the log', async () => {
    const help = await h.run(['sessions', '--help']);
    assert.equal(help.code, 0);
    assert.doesNotMatch(help.stdout, /log stays on disk/);
    assert.match(help.stdout, /its log is replaced by a one-event tombstone/);
  });

  test('--help names the short options and what --json prints (docs/cli.md says the same)', async () => {
    // Until 2026-12-06 attach's -i was in no help, and sessions' --json left out revive's object.
    const attach = await h.run(['attach', '--help']);
    assert.match(attach.stdout, /^ {2}-i, --interactive /m);
    const sessions = await h.run(['sessions', '--help']);
    assert.match(sessions.stdout, /an object for show, revive and delete\)/);
  });

  test('every command has --help with examples (in process: the same functions the binary calls)', async () => {
    const { PassThrough } = await import('node:stream');
    const commands: [string, (args: string[], io: CliIo) => Promise<number>][] = [
      ['run', (await import('../../../src/cli/run.command.js')).runCommand],
      ['chat', (await import('../../../src/cli/chat.command.js')).chatCommand],
      ['attach', (await import('../../../src/cli/attach.command.js')).attachCommand],
      ['watch', (await import('../../../src/cli/watch.command.js')).watchCommand],
      ['sessions', (await import('../../../src/cli/sessions.command.js')).sessionsCommand],
      ['cancel', (await import('../../../src/cli/control.command.js')).cancelCommand],
      ['steer', (await import('../../../src/cli/control.command.js')).steerCommand],
      ['daemon', (await import('../../../src/cli/daemon.command.js')).daemonCommand],
      ['models', (await import('../../../src/cli/models.command.js')).modelsCommand],
      ['log dump', (await import('../../../src/cli/log-dump.command.js')).logDumpCommand],
      ['inspect', (await import('../../../src/cli/inspect.command.js')).inspectCommand],
    ];
    for (const [name, command] of commands) {
      const stdout = new PassThrough();
      let out = '';
      stdout.on('data', (d) => (out += d));
      const code = await command(['--help'], { stdout, stderr: new PassThrough(), env: h.env });
      assert.equal(code, 0, name);
      assert.match(out, new RegExp(`^Usage:( |\\n {2})troupe ${name}`), name);
      assert.match(out, /Examples:\n {2}troupe /, name);
    }
    const top = await h.run(['--help']);
    assert.equal(top.code, 0);
    for (const [name] of commands) assert.match(top.stdout, new RegExp(`\\n {2}troupe ${name}\\b`), `the overview lists ${name}`);
    assert.match(top.stdout, /\n {2}troupe inspect\b/);
  });
});
