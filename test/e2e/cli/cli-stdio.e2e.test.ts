// The CLI's standard streams: its stdout piped into a reader that stops reading (`troupe watch ID |
// head -3`), in a real shell pipeline (an anonymous pipe, as a shell makes it: the harness's own stdio
// pipes are socket pairs), or on a full disk (/dev/full), and its stdin piped (`printf … | troupe
// chat`); the real binary against a real daemon in a temporary home.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { BIN, jsonLines, makeHome, processesOfHome, until, type CliResult, type Home, SUITE_TIMEOUT_MS } from '../../support/cli/cli-harness.js';

const REPLIES = [
  { when: 'hello', items: [{ text: 'Hello there.' }] },
  { when: 'please hang', items: [{ text: 'Working on it.' }, { hang: true }] },
];

/** A reader (for `pipeline`) that prints what it read and leaves once that holds `$UNTIL`. */
const READ_UNTIL = `"$NODE" -e "let s = ''; process.stdin.on('data', (d) => { s += d; if (s.includes(process.env.UNTIL)) process.stdout.write(s, () => process.exit(0)); })"`;

/**
 * Runs `{ troupe ...args; echo "troupe exited $?" >&2; } | READER` in sh (`input` its stdin), in a process group of its
 * own (killed whole at the end, whatever happened); resolves once the pipeline has ended, and fails
 * if it has not within the harness's wait (a command left running after its reader is the bug).
 */
async function pipeline(h: Home, args: string[], reader: string, input?: string): Promise<CliResult> {
  const script = '{ "$@"; echo "troupe exited $?" >&2; } | eval "$READER"';
  const sh = spawn('sh', ['-c', script, 'sh', process.execPath, BIN, ...args], { cwd: h.work, env: { ...h.env, READER: reader, NODE: process.execPath }, stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'], detached: true });
  if (input !== undefined) sh.stdin!.end(input);
  let stdout = '';
  let stderr = '';
  sh.stdout!.on('data', (d) => (stdout += d));
  sh.stderr!.on('data', (d) => (stderr += d));
  let code: number | null | undefined;
  sh.on('close', (c) => (code = c));
  try {
    await until(() => code !== undefined, `'troupe ${args.join(' ')} | ${reader}' to end`);
    return { code: code!, stdout, stderr };
  } finally {
    try {
      process.kill(-sh.pid!, 'SIGKILL');
    } catch {
      // the group is gone
    }
  }
}

describe("the CLI's standard streams", { concurrency: 1, timeout: SUITE_TIMEOUT_MS }, () => {
  let h: Home;
  let idle: string;
  before(async () => {
    h = makeHome({ replies: REPLIES });
    const r = await h.run(['run', '--json', 'hello']);
    assert.equal(r.code, 0, r.stderr);
    idle = jsonLines(r.stdout).at(-1)!.sessionId as string;
  });
  after(() => h.close());

  test('watch of an idle session ends quietly (exit 0) once its reader has read everything and left: it writes nothing more, so no EPIPE tells it', async () => {
    const lastSeq = JSON.parse((await h.run(['sessions', 'show', idle, '--json'])).stdout).lastSeq as number;
    const lines = (await h.run(['watch', idle, '--no-follow'])).stdout.split('\n').length - 1;
    // `head` reads every line there is before it leaves: after that the session, idle, gives watch
    // nothing to write. Until 2026-12-07 watch then ran on forever.
    for (const [args, n] of [[['watch', idle, '--json'], lastSeq], [['watch', idle], lines]] as const) {
      const r = await pipeline(h, [...args], `head -n ${n}`);
      assert.equal(r.stderr, 'troupe exited 0\n', `${args.join(' ')}: quiet, exit 0`);
      assert.equal(r.stdout.split('\n').length - 1, n);
    }
  });

  test('commands whose reader leaves early (| head -n 1) end quietly, exit 0: no EPIPE, no stack trace', async () => {
    for (const args of [['sessions', '--json'], ['sessions', 'show', idle], ['log', 'dump', idle], ['log', 'dump', idle, '--json'], ['watch', idle, '--json'], ['watch', idle, '--no-follow'], ['--help']]) {
      const r = await pipeline(h, args, 'head -n 1');
      assert.equal(r.stderr, 'troupe exited 0\n', args.join(' '));
      assert.equal(r.stdout.split('\n').length - 1, 1, args.join(' '));
    }
  });

  test('attach ends quietly once its reader has left, and ends its connection to the daemon', async () => {
    const r = await pipeline(h, ['attach', idle], 'true');
    assert.match(r.stderr, /^\[attached to \S+ in .*; Ctrl-C detaches\]\ntroupe exited 0\n$/);
    // Not left to the daemon's --connection-idle-ms (5 min).
    await until(async () => JSON.parse((await h.run(['sessions', 'show', idle, '--json'])).stdout).connections === 0, 'its connection to be closed');
  });

  test('daemon logs -f ends quietly once its reader has left, as tail -f does', async () => {
    const r = await pipeline(h, ['daemon', 'logs', '-f', '-n', '1'], 'head -n 1');
    assert.equal(r.stderr, 'troupe exited 0\n');
    assert.equal(r.stdout.split('\n').length - 1, 1);
  });

  test('chat with only blank lines piped keeps no session, and says so: nothing in it is a prompt', async () => {
    const ids = async () => (JSON.parse((await h.run(['sessions', '--json'])).stdout) as { id: string }[]).map((x) => x.id).sort();
    const before = await ids();
    const r = await h.run(['chat'], { input: '\n \n\t\r\n' });
    assert.deepEqual([r.code, r.stdout, r.stderr], [0, '', 'troupe chat: no prompt in the input (only blank lines), so no session was kept\n']);
    // Until 2026-12-07 the session was kept, with nothing said to it.
    assert.deepEqual(await ids(), before);
    const resumed = await h.run(['chat', '--session', idle], { input: '\n\n' });
    assert.deepEqual([resumed.code, resumed.stderr], [0, 'troupe chat: no prompt in the input (only blank lines)\n']);
    assert.deepEqual(await ids(), before, 'the resumed session is kept');
    // Blank lines before a prompt are only skipped.
    const said = await h.run(['chat'], { input: '\n\n  hello\n' });
    assert.equal(said.code, 0, said.stderr);
    assert.match(said.stdout, /Hello there\./);
    assert.equal((await ids()).length, before.length + 1);
  });

  test('chat with piped input whose daemon goes away mid-turn says so on stderr, in its own words (daemon_unreachable), and stdout has only the output', async () => {
    for (const how of ['killed', 'stopped'] as const) {
      const d = makeHome({ replies: REPLIES });
      try {
        // The input has ended when the daemon goes: the chat only waits for the turn.
        const chat = d.start(['chat']);
        chat.child.stdin!.end('please hang\n');
        await until(() => chat.stdout().includes('Working on it.'), 'the turn to run');
        if (how === 'killed') process.kill(d.daemonState()!.pid, 'SIGKILL');
        else assert.equal((await d.run(['daemon', 'stop'])).code, 0);
        const r = await chat.done;
        assert.equal(r.code, 1, `${how}: ${r.stderr}`);
        // Until 2026-12-07: `error: lost the connection … (terminated: UND_ERR_SOCKET)` on stdout, then
        // `troupe chat: a turn failed, the first: …` on stderr.
        assert.match(r.stderr, /^troupe chat: the daemon at http:\/\/127\.0\.0\.1:\d+ went away \(it stopped or died\): 'troupe daemon start' starts it again, and 'troupe daemon logs' may say why it stopped \(daemon_unreachable\)\n$/, how);
        assert.match(r.stdout, /^\[new session \S+ in .*\]\nWorking on it\.\n$/, how);
      } finally {
        // A killed daemon's children end by themselves (spec/daemon.md §Spawner, Deaths).
        await until(() => processesOfHome(d.dir).length === 0, "the daemon's processes to end", 30_000).catch(() => undefined);
        await d.close();
      }
    }
  });

  test('output that cannot be written (a full disk: /dev/full) is one line on stderr, output_failed, exit 1, not a stack trace', async () => {
    const full = openSync('/dev/full', 'w');
    try {
      for (const [args, who] of [[['sessions'], 'troupe sessions'], [['watch', idle, '--no-follow'], 'troupe watch'], [['log', 'dump', idle], 'troupe log'], [['--help'], 'troupe'], [['run', '--session', idle, 'please hang'], 'troupe run']] as const) {
        const child = spawn(process.execPath, [BIN, ...args], { cwd: h.work, env: h.env, stdio: ['ignore', full, 'pipe'] });
        let stderr = '';
        child.stderr!.on('data', (d) => (stderr += d));
        const code = await new Promise<number | null>((r) => child.on('close', r));
        // Until 2026-12-07: Node's uncaught ENOSPC, with its stack, thrown from the CLI's stream handler.
        assert.equal(code, 1, stderr);
        // Once, though every write after the first fails too (run cancels its turn, whose end writes
        // again); the turn's last line, on stderr, may come before it leaves.
        const lines = stderr.split('\n').filter((l) => !/^\[cancelled · session \S+\]$/.test(l));
        assert.deepEqual(lines, [`${who}: cannot write to stdout: no space left on device (ENOSPC) (output_failed)`, ''], args.join(' '));
      }
      // No one gets run's output: its turn is not left running (as on a closed pipe).
      await until(async () => JSON.parse((await h.run(['sessions', 'show', idle, '--json'])).stdout).machines.session === 'idle', 'the turn to be cancelled');
    } finally {
      closeSync(full);
    }
  });

  test('chat whose stdout reader leaves during a turn ends quietly, cancelling that turn and ending its connection', async () => {
    // The reader leaves once it has read all the chat wrote: the turn then hangs, printing nothing more.
    const r = await pipeline(h, ['chat'], `UNTIL='Working on it.' ${READ_UNTIL}`, 'please hang\n');
    assert.equal(r.stderr, 'troupe exited 0\n');
    const sessionId = /\[new session (ses_\w+) in/.exec(r.stdout)![1]!;
    // Until 2026-12-07 it ran on until a write, and a closed stdout (EPIPE) left its turn running.
    await until(async () => JSON.parse((await h.run(['sessions', 'show', sessionId, '--json'])).stdout).machines.session === 'idle', 'the turn to be cancelled');
    await until(async () => JSON.parse((await h.run(['sessions', 'show', sessionId, '--json'])).stdout).connections === 0, 'its connection to be closed');
  });

  test('run whose stdout reader leaves during a quiet turn ends quietly then, cancelling the turn', async () => {
    const r = await pipeline(h, ['run', '--json', 'please hang'], `UNTIL='Working on it.' ${READ_UNTIL}`);
    assert.equal(r.stderr, 'troupe exited 0\n');
    const sessionId = jsonLines(r.stdout)[0]!.sessionId as string;
    // Until 2026-12-07 it waited for a write (EPIPE) that a quiet turn never made.
    await until(async () => JSON.parse((await h.run(['sessions', 'show', sessionId, '--json'])).stdout).machines.session === 'idle', 'the turn to be cancelled');
    await until(async () => JSON.parse((await h.run(['sessions', 'show', sessionId, '--json'])).stdout).connections === 0, 'its connection to be closed');
  });

  test("chat with piped input that has ended: Ctrl-C and SIGTERM still cancel the last turn, which it waits for", async () => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      const chat = h.start(['chat']);
      chat.child.stdin!.end('please hang\n');
      await until(() => chat.stdout().includes('Working on it.'), 'the turn to run');
      const sessionId = /\[new session (ses_\w+) in/.exec(chat.stdout())![1]!;
      chat.child.kill(signal);
      const exit = await new Promise<[number | null, NodeJS.Signals | null]>((r) => chat.child.once('exit', (code, sig) => r([code, sig])));
      // Ctrl-C cancels the turn, after which the chat, its input done, ends; SIGTERM dies of the signal
      // once it has cancelled. Until 2026-12-07 both died at once, the turn left running.
      assert.deepEqual(exit, signal === 'SIGINT' ? [0, null] : [null, 'SIGTERM'], `${signal}: ${chat.stderr()}`);
      await until(async () => JSON.parse((await h.run(['sessions', 'show', sessionId, '--json'])).stdout).machines.session === 'idle', `the turn to be cancelled (${signal})`);
      await until(async () => JSON.parse((await h.run(['sessions', 'show', sessionId, '--json'])).stdout).connections === 0, `its connection to be closed (${signal})`);
    }
  });
});
