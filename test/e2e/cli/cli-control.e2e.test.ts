// Acting on a running turn from a second process: `steer`, `watch` with a cursor, `attach`, `cancel`,
// against a real daemon whose scripted model hangs until cancelled; and `--standalone`, which must
// leave no process, port or directory behind.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHttpStream } from '@agentclientprotocol/sdk/experimental/http-client';
import { AcpClient, Daemon, tempDir } from '../../support/daemon.js';
import { eventSchemaError } from '../../support/event-schema.js';
import { jsonLines, makeHome, pidAlive, processesOfHome, until, type Background, type Home, SUITE_TIMEOUT_MS } from '../../support/cli/cli-harness.js';

/** What run, chat, attach and watch say of a local daemon that went away under them. */
const DAEMON_GONE = "the daemon at http://127\\.0\\.0\\.1:\\d+ went away \\(it stopped or died\\): 'troupe daemon start' starts it again, and 'troupe daemon logs' may say why it stopped";

const REPLIES = [
  { when: 'please hang', items: [{ text: 'Working on it.' }, { hang: true }] },
  { when: 'hello', items: [{ text: 'Hello there.' }] },
  { when: 'fail please', items: [{ error: { kind: 'auth', message: 'the key was refused' } }] },
  { when: 'in two parts', items: [{ text: 'Part one.' }, { delay_ms: 1500 }, { text: 'Part two.' }, { hang: true }] },
  { when: 'write it down', items: [{ tool_call: { name: 'write_file', input: { path: 'noted.txt', content: 'noted' } } }] },
  // What follows the tool's result (plain replies answer those calls, in order).
  [{ text: 'Noted.' }],
];

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

/** A real HTTP proxy on 127.0.0.1 in front of `target` that notes each request it forwards (`METHOD /path?query`). */
async function recordingProxy(target: string): Promise<{ url: string; requests: string[]; server: Server }> {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const out = request(new URL(req.url!, target), { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(res);
    });
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, requests, server };
}

/**
 * A real HTTP proxy on 127.0.0.1 in front of `target` that loses every ACP `session/cancel` on the
 * way (answers it 202 and forwards nothing): a turn the client cancels goes on, for as long as the
 * test wants, as a turn whose cancel is slow to take effect would.
 */
async function cancelLosingProxy(target: string): Promise<{ url: string; lost: () => number; server: Server }> {
  let lost = 0;
  const server = createServer((req, res) => {
    const body: Buffer[] = [];
    req.on('data', (c: Buffer) => body.push(c));
    req.on('end', () => {
      const sent = Buffer.concat(body);
      if (req.method === 'POST' && sent.toString('utf8').includes('"session/cancel"')) {
        lost++;
        return void res.writeHead(202).end();
      }
      const out = request(new URL(req.url!, target), { method: req.method, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      });
      out.on('error', () => res.destroy());
      out.end(sent);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, lost: () => lost, server };
}

// The three suites at once: each has a home and daemons of its own, and much of their time is
// waiting on commands, daemons and turns. Each suite's own tests stay one after another (they share
// its home, daemon and sessions): concurrency: 1, as a suite would otherwise take its parent's.
// The time budget stays each suite's own (SUITE_TIMEOUT_MS), as when they ran one after another.
describe('troupe clients acting on sessions, turns and daemons', { concurrency: true }, () => {
  describe('troupe steer, watch, attach, cancel from another process', { concurrency: 1, timeout: SUITE_TIMEOUT_MS }, () => {
    let h: Home;
    before(() => {
      h = makeHome({ replies: REPLIES });
    });
    after(() => h.close());

    test('a hanging turn is steered, watched, followed and cancelled', async () => {
      const first = await h.run(['run', '--json', 'hello']);
      assert.equal(first.code, 0, first.stderr);
      const sessionId = jsonLines(first.stdout).at(-1)!.sessionId as string;
      const firstSeqs = jsonLines(first.stdout).map((l) => l.update?._meta?.troupe?.seq).filter(Boolean) as number[];
      const cursor = Math.max(...firstSeqs);

      const runner = h.start(['run', '--json', '--session', sessionId, 'please hang']);
      const turnId = await until(() => jsonLines(runner.stdout()).find((l) => l.update?.content?.text === 'Working on it.')?.update._meta.troupe.turnId as string, 'the turn to start');

      const attach = h.start(['attach', sessionId, '--json']);
      await until(() => attach.stderr().includes('attached to'), 'attach to resume the session');

      const steer = await h.run(['steer', sessionId, 'go left', '--json']);
      assert.equal(steer.code, 0, steer.stderr);
      const steered = JSON.parse(steer.stdout);
      assert.equal(steered.turnId, turnId, 'the daemon named the running turn');
      assert.match(steered.steerId, /^steer_/);

      // The attached client sees the steer as it happens (it resumed after the turn had started).
      await until(() => jsonLines(attach.stdout()).some((l) => l.update.sessionUpdate === 'user_message_chunk' && l.update.content.text === 'go left'), 'attach to show the steer');
      assert.ok(jsonLines(attach.stdout()).every((l) => l.sessionId === sessionId));

      const watch = await h.run(['watch', sessionId, '--after', String(cursor), '--json', '--no-follow']);
      assert.equal(watch.code, 0, watch.stderr);
      const events = jsonLines(watch.stdout);
      assert.ok(events.length > 0);
      assert.equal(events[0]!.seq, cursor + 1, 'starts right after the cursor');
      events.forEach((e, i) => {
        assert.equal(eventSchemaError(e), undefined);
        if (i) assert.equal(e.seq, events[i - 1]!.seq + 1, 'no gaps, no repeats');
      });
      assert.deepEqual(
        events.filter((e) => e.type === 'user_message' || e.type === 'steer_received').map((e) => e.type),
        ['user_message', 'steer_received'],
      );
      const human = await h.run(['watch', sessionId, '--after', String(cursor), '--no-follow']);
      assert.match(human.stdout, /steer_received {2}go left/);

      const cancel = await h.run(['cancel', sessionId, '--json']);
      assert.equal(cancel.code, 0, cancel.stderr);
      assert.deepEqual(JSON.parse(cancel.stdout), { sessionId, cancelled: true });
      const done = await runner.done;
      assert.equal(done.code, 130, 'a cancelled turn exits 130');
      const last = jsonLines(done.stdout).at(-1)!;
      assert.deepEqual(last, { sessionId, stopReason: 'cancelled', turnId });

      const idle = await h.run(['cancel', sessionId]);
      assert.match(idle.stdout, /has no running turn/);
      const noTurn = await h.run(['steer', sessionId, 'too late']);
      assert.equal(noTurn.code, 1);
      assert.match(noTurn.stderr, /no_active_turn/);
      attach.child.kill('SIGINT');
      assert.equal((await attach.done).code, 0, 'Ctrl-C detaches cleanly');
    });

    test('steer on an idle session fails with no_active_turn from the daemon\'s answer, without reading the session\'s log', async (t) => {
      const first = await h.run(['run', '--json', 'hello']);
      assert.equal(first.code, 0, first.stderr);
      const sessionId = jsonLines(first.stdout).at(-1)!.sessionId as string;
      const proxy = await recordingProxy(h.daemonState()!.url);
      t.after(() => proxy.server.close());
      const r = await h.run(['steer', sessionId, 'too late'], { env: { TROUPE_URL: proxy.url, TROUPE_TOKEN: h.token() } });
      assert.equal(r.code, 1, r.stderr);
      assert.equal(r.stderr, `troupe steer: session ${sessionId} has no running turn to steer (use 'troupe run --session ${sessionId} …' to start one) (no_active_turn)\n`);
      // The daemon's session detail names the running turn, or none: until 2026-12-06 an idle session's
      // whole log was streamed from seq 0 to make sure, on every steer.
      assert.deepEqual(proxy.requests.filter((x) => x.includes('/events')), [], proxy.requests.join(', '));
      assert.ok(proxy.requests.includes(`GET /v1/sessions/${sessionId}`), proxy.requests.join(', '));
    });

    test("chat shows what another client asks in its session, and not its own prompts again", async () => {
      const chat = h.start(['chat']);
      chat.child.stdin!.write('hello from the chat\n');
      await until(() => chat.stdout().includes('Hello there.'), 'the chat turn');
      const sessionId = /session (ses_\w+) in/.exec(chat.stdout())![1]!;
      const other = await h.run(['run', '--session', sessionId, 'hello from elsewhere']);
      assert.equal(other.code, 0, other.stderr);
      await until(() => chat.stdout().split('Hello there.').length === 3, "the other client's turn in the chat");
      assert.match(chat.stdout(), /› hello from elsewhere\n/);
      // Piped input is not echoed by the chat, and the daemon sends a client none of its own prompts.
      assert.doesNotMatch(chat.stdout(), /hello from the chat/);
      chat.child.stdin!.end();
      const r = await chat.done;
      assert.equal(r.code, 0, r.stderr);
    });

    test("run --session shows the prompt of another client's turn that runs before its own, and not its own prompt", async (t) => {
      const first = await h.run(['run', '--json', 'hello']);
      assert.equal(first.code, 0, first.stderr);
      const sessionId = jsonLines(first.stdout).at(-1)!.sessionId as string;
      // Another client holds the session's turn on a permission, with a prompt of its own queued behind it.
      let allow!: () => void;
      const allowed = new Promise<void>((resolve) => (allow = resolve));
      const other = new AcpClient(createHttpStream(`${h.daemonState()!.url}/acp`, { headers: { Authorization: `Bearer ${h.token()}` } }), {
        permission: () => allowed.then(() => ({ outcome: { outcome: 'selected', optionId: 'allow_once' } })),
      });
      t.after(() => other.close());
      await other.init();
      await other.agent.request('session/resume', { sessionId, cwd: h.work, mcpServers: [] });
      const held = other.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'write it down' }] });
      await until(() => other.permissions.length === 1, 'the permission prompt');
      const queued = async (n: number) => ((await other.agent.request('_troupe/session_state', { sessionId })) as { queue: unknown[] }).queue.length === n;
      const elsewhere = other.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello from elsewhere' }] });
      await until(() => queued(1), "the other client's prompt queued");
      const runner = h.start(['run', '--session', sessionId, 'hello once more']);
      await until(() => queued(2), "the run's prompt queued behind it");
      allow();
      assert.equal((await held).stopReason, 'end_turn');
      assert.equal((await elsewhere).stopReason, 'end_turn');
      const r = await runner.done;
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /› hello from elsewhere\n/);
      assert.equal(r.stdout.split('Hello there.').length, 3, "the other client's answer, then its own");
      assert.doesNotMatch(r.stdout, /hello once more/, 'its own prompt is not printed back');
    });

    test('chat with piped input: Ctrl-C (a signal, not a key) cancels the running turn, and leaves when none runs', async () => {
      const chat = h.start(['chat']);
      chat.child.stdin!.write('please hang\n');
      await until(() => chat.stdout().includes('Working on it.'), 'the chat turn to run');
      const sessionId = /session (ses_\w+) in/.exec(chat.stdout())![1]!;
      chat.child.kill('SIGINT');
      await until(() => chat.stdout().includes('[cancelled]'), 'the turn to be cancelled');
      const show = JSON.parse((await h.run(['sessions', 'show', sessionId, '--json'])).stdout);
      assert.equal(show.machines.session, 'idle', 'the turn no longer runs on the daemon');
      assert.equal(chat.child.exitCode, null, 'the chat goes on');
      chat.child.kill('SIGINT');
      const r = await chat.done;
      assert.equal(r.code, 0, r.stderr);
    });

    test('chat: a second Ctrl-C while the cancelled turn still runs leaves at once with exit 130, as run does', async (t) => {
      assert.equal((await h.run(['run', 'hello'])).code, 0, 'the daemon runs');
      // The chat's cancel is lost on its way to the daemon: its turn runs on after the first Ctrl-C.
      const proxy = await cancelLosingProxy(h.daemonState()!.url);
      t.after(() => (proxy.server.closeAllConnections(), proxy.server.close()));
      const chat = h.start(['chat'], { env: { TROUPE_URL: proxy.url, TROUPE_TOKEN: h.token() } });
      chat.child.stdin!.write('please hang\n');
      await until(() => chat.stdout().includes('Working on it.'), 'the chat turn to run');
      const sessionId = /session (ses_\w+) in/.exec(chat.stdout())![1]!;
      t.after(() => h.run(['cancel', sessionId]));
      chat.child.kill('SIGINT');
      await until(() => chat.stdout().includes('Ctrl-C again to leave') && proxy.lost() === 1, 'the cancel sent');
      chat.child.kill('SIGINT');
      // Until 2026-12-06 the chat waited for the turn to end (here: never), then exited 0.
      await until(() => chat.child.exitCode !== null, 'the chat to leave while its turn still runs');
      const r = await chat.done;
      assert.equal(r.code, 130, r.stderr);
      assert.equal(r.stderr, 'troupe chat: interrupted\n');
      assert.doesNotMatch(r.stdout, /error:/, 'the turn left behind is no error to report');
    });

    test('chat with piped input plays every line, then exits 1 when one of its turns failed, as run does for its turn', async () => {
      const r = await h.run(['chat'], { input: 'fail please\nhello\n' });
      assert.match(r.stdout, /error: .*the key was refused/);
      assert.match(r.stdout, /Hello there\./, 'the lines after the failed turn are played');
      // Until 2026-12-06: exit 0, and a script piping prompts into chat could not tell.
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /^troupe chat: a turn failed, the first: .*the key was refused.* \(provider_auth\)\n$/);
      const fine = await h.run(['chat'], { input: 'hello\n' });
      assert.equal(fine.code, 0, fine.stderr);
    });

    test('chat with piped input exits 1 when one of its slash commands failed, as for a failed turn', async () => {
      const r = await h.run(['chat'], { input: '/mode nonsense\nhello\n' });
      assert.match(r.stdout, /error: unknown mode 'nonsense'/);
      assert.match(r.stdout, /Hello there\./, 'the lines after the failed command are played');
      // Until 2026-12-06: exit 0, the failed command only a note on stdout.
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /^troupe chat: a command failed, the first: unknown mode 'nonsense'.* \(invalid_params\)\n$/);
      const fine = await h.run(['chat'], { input: '/mode plan\n' });
      assert.equal(fine.code, 0, fine.stderr);
    });

    test('chat with no input at all (</dev/null) keeps no session, and says so', async () => {
      assert.equal((await h.run(['daemon', 'start'])).code, 0, 'running (or already), to list its sessions');
      const ids = async () => (JSON.parse((await h.run(['sessions', '--json'])).stdout) as { id: string }[]).map((x) => x.id).sort();
      assert.equal((await h.run(['run', 'hello'])).code, 0, 'a session to resume');
      const before = await ids();
      const r = await h.run(['chat'], { input: '' });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stderr, 'troupe chat: no input, so no session was kept\n');
      assert.doesNotMatch(r.stdout, /new session/);
      // Until 2026-12-07 each such run left an empty session behind.
      assert.deepEqual(await ids(), before);
      const resumed = await h.run(['chat', '--session', before[0]!], { input: '' });
      assert.equal(resumed.code, 0, resumed.stderr);
      assert.equal(resumed.stderr, 'troupe chat: no input\n');
      assert.deepEqual(await ids(), before, 'the resumed session is kept');
    });

    test('chat shows each note on a line of its own: a compaction\'s start and end are two lines', async () => {
      const r = await h.run(['chat'], { input: 'hello\n/compact\n' });
      assert.equal(r.code, 0, r.stderr);
      // Until 2026-12-06 both came as one thought: `[Compacting the conversation: …][Compaction completed]`.
      assert.match(r.stdout, /^\[Compacting the conversation: manual, about \d+ tokens\]\n\[Compaction completed\]\n/m, r.stdout);
    });

    test('run whose stdout closes early (| head) cancels its turn on the daemon before it leaves', async () => {
      const b = h.start(['run', '--json', 'answer in two parts']);
      await until(() => b.stdout().includes('Part one.'), 'the turn to start');
      const sessionId = jsonLines(b.stdout())[0]!.sessionId as string;
      b.child.stdout!.destroy();
      const done = await b.done;
      assert.equal(done.code, 0, done.stderr);
      assert.doesNotMatch(done.stderr, /troupe run:|EPIPE/, 'no error is reported');
      // Nobody reads the rest: the turn does not go on without its reader.
      await until(async () => JSON.parse((await h.run(['sessions', 'show', sessionId, '--json'])).stdout).machines.session === 'idle', 'the turn to be cancelled');
      const last = (await h.run(['watch', sessionId, '--no-follow', '--json'])).stdout.trimEnd().split('\n').at(-1)!;
      assert.equal(JSON.parse(last).stopReason, 'cancelled');
      // Nor does its ACP connection stay on the daemon until --connection-idle-ms (5 min) reaps it:
      // until 2026-12-06 each `troupe run … | head` held one of the daemon's --max-connections for that long.
      await until(async () => JSON.parse((await h.run(['sessions', 'show', sessionId, '--json'])).stdout).connections === 0, 'its connection to be closed');
    });

    test('run and chat terminated by SIGTERM or SIGHUP (timeout, a closed terminal) cancel their turn, then die of the signal', async () => {
      for (const signal of ['SIGTERM', 'SIGHUP'] as const) {
        const b = h.start(['run', '--json', 'please hang']);
        await until(() => b.stdout().includes('Working on it.'), 'the turn to start');
        const sessionId = jsonLines(b.stdout())[0]!.sessionId as string;
        b.child.kill(signal);
        const done = await new Promise<string | null>((r) => b.child.once('exit', (_code, sig) => r(sig)));
        assert.equal(done, signal, 'it died of the signal');
        await until(async () => JSON.parse((await h.run(['sessions', 'show', sessionId, '--json'])).stdout).machines.session === 'idle', `the turn to be cancelled (${signal})`);
        // Its connection is ended too, not left to --connection-idle-ms (until 2026-12-06).
        await until(async () => JSON.parse((await h.run(['sessions', 'show', sessionId, '--json'])).stdout).connections === 0, `its connection to be closed (${signal})`);
      }
      // The same for chat.
      const chat = h.start(['chat']);
      chat.child.stdin!.write('please hang\n');
      await until(() => chat.stdout().includes('Working on it.'), 'the chat turn to run');
      const chatSession = /session (ses_\w+) in/.exec(chat.stdout())![1]!;
      chat.child.kill('SIGHUP');
      assert.equal(await new Promise<string | null>((r) => chat.child.once('exit', (_code, sig) => r(sig))), 'SIGHUP');
      await until(async () => JSON.parse((await h.run(['sessions', 'show', chatSession, '--json'])).stdout).machines.session === 'idle', 'the chat turn to be cancelled');
      await until(async () => JSON.parse((await h.run(['sessions', 'show', chatSession, '--json'])).stdout).connections === 0, 'the chat connection to be closed');
      // And for attach, which only follows: its connection goes with it.
      const attach = h.start(['attach', chatSession]);
      await until(async () => JSON.parse((await h.run(['sessions', 'show', chatSession, '--json'])).stdout).connections === 1, 'attach to be attached');
      attach.child.kill('SIGTERM');
      assert.equal(await new Promise<string | null>((r) => attach.child.once('exit', (_code, sig) => r(sig))), 'SIGTERM');
      await until(async () => JSON.parse((await h.run(['sessions', 'show', chatSession, '--json'])).stdout).connections === 0, 'the attach connection to be closed');
    });

    test('a failed turn: one error line with its code, exit 1, and an error line in --json', async () => {
      const r = await h.run(['run', '--json', 'fail please']);
      assert.equal(r.code, 1);
      const last = jsonLines(r.stdout).at(-1)!;
      assert.match(last.sessionId, /^ses_/);
      assert.equal(last.error.code, 'provider_auth');
      const lines = r.stderr.split('\n').filter(Boolean);
      assert.equal(lines.length, 1, r.stderr);
      assert.match(lines[0]!, /^troupe run: .*the key was refused.* \(provider_auth\)$/);
    });

    test('--model switches the session to another model before the turn', async () => {
      const r = await h.run(['run', '--json', '--model', 'scripted/demo', 'list the files here']);
      assert.equal(r.code, 0, r.stderr);
      const lines = jsonLines(r.stdout);
      const text = lines.filter((l) => l.update?.sessionUpdate === 'agent_message_chunk').map((l) => l.update.content.text).join('');
      assert.match(text, /offline demo model/, 'answered by scripted/demo, not the replay script');
      const show = JSON.parse((await h.run(['sessions', 'show', lines.at(-1)!.sessionId, '--json'])).stdout);
      assert.equal(show.model, 'scripted/demo');
    });

  });

  // Split from the suite above, each with its own home and daemon: together they outgrew one suite's
  // budget (SUITE_TIMEOUT_MS) at a load of 15 on 2 cores.
  describe('troupe run --standalone, and clients whose daemon goes away', { concurrency: 1, timeout: SUITE_TIMEOUT_MS }, () => {
    let h: Home;
    // The home's own daemon runs, as the suite above leaves its own: --standalone must not use it.
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

  // A suite of its own: the one above is near its time budget on a loaded machine.
  describe('troupe attach --interactive with piped input', { concurrency: 1, timeout: SUITE_TIMEOUT_MS }, () => {
    let d: Home;
    before(() => {
      d = makeHome({ replies: REPLIES });
    });
    after(() => d.close());

    test('attach --interactive with piped input rejects a permission request, as chat does, instead of waiting for an answer no one can give', async () => {
      const first = await d.run(['run', '--json', 'hello']);
      assert.equal(first.code, 0, first.stderr);
      const sessionId = jsonLines(first.stdout).at(-1)!.sessionId as string;
      // Its input is read to the end before the turn asks: the question has no line left to take.
      const r = await d.run(['attach', sessionId, '--interactive'], { input: 'write it down\n' });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /\[denied Write noted\.txt: no terminal to ask/);
      assert.match(r.stdout, /Noted\./, 'the turn went on without the write');
      assert.equal(existsSync(join(d.work, 'noted.txt')), false);
    });

    test('attach --interactive with piped input exits 1 when one of its lines failed, as chat does', async () => {
      const first = await d.run(['run', '--json', 'hello']);
      assert.equal(first.code, 0, first.stderr);
      const sessionId = jsonLines(first.stdout).at(-1)!.sessionId as string;
      const r = await d.run(['attach', sessionId, '--interactive'], { input: 'fail please\nhello\n' });
      assert.match(r.stdout, /Hello there\./, 'the lines after the failed turn are played');
      // Until 2026-12-06: exit 0, and a script could not tell.
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /troupe attach: a turn failed, the first: .*the key was refused.* \(provider_auth\)\n$/);
    });
  });
});
