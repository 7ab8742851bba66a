// Acting on a running turn from a second process: `steer`, `watch` with a cursor, `attach`, `cancel`,
// `chat` and `run --session` beside other clients, against a real daemon whose scripted model hangs
// until cancelled.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import { createHttpStream } from '@agentclientprotocol/sdk/experimental/http-client';
import { AcpClient } from '../../support/daemon.js';
import { eventSchemaError } from '../../support/event-schema.js';
import { jsonLines, makeHome, until, type Home, SUITE_TIMEOUT_MS } from '../../support/cli/cli-harness.js';
import { REPLIES } from '../../support/cli/control-replies.js';

/**
 * A real HTTP proxy on 127.0.0.1 in front of `target` that notes each request it forwards (`METHOD
 * /path?query`) and, with `losesCancels`, loses every ACP `session/cancel` on the way (answers it 202
 * and forwards nothing): a turn the client cancels goes on, for as long as the test wants, as a turn
 * whose cancel is slow to take effect would.
 */
async function daemonProxy(target: string, losesCancels = false): Promise<{ url: string; requests: string[]; lost: () => number; server: Server }> {
  const requests: string[] = [];
  let lost = 0;
  const server = createServer((req, res) => {
    const body: Buffer[] = [];
    req.on('data', (c: Buffer) => body.push(c));
    req.on('end', () => {
      const sent = Buffer.concat(body);
      if (losesCancels && req.method === 'POST' && sent.toString('utf8').includes('"session/cancel"')) {
        lost++;
        return void res.writeHead(202).end();
      }
      requests.push(`${req.method} ${req.url}`);
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
  return { url: `http://127.0.0.1:${port}`, requests, lost: () => lost, server };
}

// One test after another: they share the suite's home, daemon and sessions.
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
    const proxy = await daemonProxy(h.daemonState()!.url);
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
    const proxy = await daemonProxy(h.daemonState()!.url, true);
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
