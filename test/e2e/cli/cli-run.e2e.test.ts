// `troupe run` end to end: the real binary auto-starts a real daemon in a temporary TROUPE_HOME and
// talks to it over HTTP; output checked as text and as JSON lines (validated against the ACP schema).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { acpOutgoingError } from '../../support/acp-schema.js';
import { jsonLines, makeHome, pidAlive, type Home, SUITE_TIMEOUT_MS, until } from '../../support/cli/cli-harness.js';

// The two suites at once: each has homes and daemons of its own, and much of their time is
// waiting on commands and daemons. Each suite's own tests stay one after another (concurrency: 1, as
// a suite would otherwise take its parent's): the first suite's share a home and a session.
// The time budget stays each suite's own (SUITE_TIMEOUT_MS), as when they ran one after another.
describe('troupe run end to end', { concurrency: true }, () => {
  describe('troupe run', { concurrency: 1, timeout: SUITE_TIMEOUT_MS }, () => {
    let h: Home;
    before(() => {
      h = makeHome();
    });
    after(() => h.close());

    let sessionId: string;
    let lastSeq = 0;

    test('with no daemon running, starts one and streams an answer with tool calls', async () => {
      assert.equal(h.daemonState(), undefined, 'no daemon before');
      const r = await h.run(['run', 'list the files here and read package.json']);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /List \. \(read, completed\)/);
      assert.match(r.stdout, /Read package\.json \(read, completed\)/);
      assert.match(r.stdout, /cli-fixture/, 'the answer reports the file it read');
      assert.match(r.stdout, /offline demo model/);
      const state = h.daemonState();
      assert.ok(state && pidAlive(state.pid), 'the daemon recorded itself and runs');
      assert.match(state.url, /^http:\/\/127\.0\.0\.1:\d+$/);
      const health = (await (await fetch(`${state.url}/v1/health`)).json()) as { sessions: { total: number } };
      assert.equal(health.sessions.total, 1);
    });

    test('--json prints each update with its sessionId, then the stop reason', async () => {
      const r = await h.run(['run', '--json', 'list the files here and read package.json']);
      assert.equal(r.code, 0, r.stderr);
      const lines = jsonLines(r.stdout);
      const last = lines.pop()!;
      sessionId = last.sessionId;
      assert.match(sessionId, /^ses_/);
      assert.equal(last.stopReason, 'end_turn');
      assert.match(last.turnId, /^turn_/);
      let seq = 0;
      for (const line of lines) {
        assert.equal(line.sessionId, sessionId);
        assert.equal(acpOutgoingError({ jsonrpc: '2.0', method: 'session/update', params: line }), undefined, JSON.stringify(line));
        const s = line.update._meta?.troupe?.seq;
        if (s !== undefined) {
          assert.ok(s > seq, `seq increases (${s} after ${seq})`);
          seq = s;
        }
      }
      lastSeq = seq;
      const kinds = lines.map((l) => l.update.sessionUpdate);
      assert.ok(kinds.includes('agent_message_chunk') && kinds.includes('agent_thought_chunk'));
      const tools = lines.filter((l) => l.update.sessionUpdate === 'tool_call').map((l) => l.update.title);
      assert.deepEqual(tools, ['List .', 'Read package.json']);
    });

    test('--session continues the same session', async () => {
      const r = await h.run(['run', '--json', '--session', sessionId, 'read package.json']);
      assert.equal(r.code, 0, r.stderr);
      const lines = jsonLines(r.stdout);
      assert.ok(lines.every((l) => l.sessionId === sessionId));
      const seqs = lines.map((l) => l.update?._meta?.troupe?.seq).filter((s) => s !== undefined);
      assert.ok(seqs.length > 0 && seqs.every((s) => s > lastSeq), 'only new events, after the first turn');
      assert.equal(lines.at(-1)!.stopReason, 'end_turn');
    });

    test('without a TTY, a write is denied unless --yes', async () => {
      const denied = await h.run(['run', 'create a file notes.txt with hello']);
      assert.equal(denied.code, 0, denied.stderr);
      assert.match(denied.stdout, /denied Write notes\.txt.*--yes/);
      assert.equal(existsSync(join(h.work, 'notes.txt')), false);
      const allowed = await h.run(['run', '--yes', 'create a file notes.txt with hello']);
      assert.equal(allowed.code, 0, allowed.stderr);
      assert.equal(readFileSync(join(h.work, 'notes.txt'), 'utf8'), 'hello\n');
      assert.match(allowed.stdout, /\+ hello/, 'the diff is shown');
      const edit = await h.run(['run', '--yes', 'create a file notes.txt with bye']);
      assert.equal(edit.code, 0, edit.stderr);
      assert.match(edit.stdout, /notes\.txt\n {2}- hello\n {2}\+ bye\n/, 'an edit shows the old line, then the new one');
      const command = await h.run(['run', '--yes', 'run `echo from-the-shell`']);
      assert.equal(command.code, 0, command.stderr);
      assert.match(command.stdout, /✓ Run `echo from-the-shell` \(execute, completed\)\n {2}│ from-the-shell\n/, 'command output under the call');
    });

    test("a command's long output shows its first lines and its last, the exit code among them", async () => {
      const r = await h.run(['run', '--yes', 'run the command seq 1 50']);
      assert.equal(r.code, 0, r.stderr);
      const shown = r.stdout.split('\n').filter((l) => l.startsWith('  │ ')).map((l) => l.slice(4));
      const expected = [...Array.from({ length: 10 }, (_, i) => `${i + 1}`), '… 31 more lines', ...Array.from({ length: 9 }, (_, i) => `${i + 42}`), '[exit code: 0]'];
      assert.deepEqual(shown, expected);
    });

    test('--mode and sessions list/show/delete', async () => {
      const r = await h.run(['run', '--json', '--mode', 'plan', 'hello']);
      assert.equal(r.code, 0, r.stderr);
      const id = jsonLines(r.stdout).at(-1)!.sessionId;
      const list = await h.run(['sessions', '--json']);
      assert.equal(list.code, 0, list.stderr);
      const sessions = JSON.parse(list.stdout) as { id: string; mode: string }[];
      assert.deepEqual(new Set(sessions.map((s) => s.id)).has(id), true);
      assert.equal(sessions.find((s) => s.id === id)!.mode, 'plan');
      const text = await h.run(['sessions']);
      assert.match(text.stdout, new RegExp(`${id}\\s+active`));
      const show = await h.run(['sessions', 'show', id, '--json']);
      assert.equal(JSON.parse(show.stdout).id, id);
      const del = await h.run(['sessions', 'delete', id, '--json']);
      assert.equal(del.code, 0, del.stderr);
      assert.deepEqual(JSON.parse(del.stdout), { sessionId: id, deleted: true }, '--json is JSON here too');
      const after = JSON.parse((await h.run(['sessions', '--json'])).stdout) as { id: string }[];
      assert.equal(after.some((s) => s.id === id), false);
      const gone = await h.run(['sessions', 'show', id]);
      assert.equal(gone.code, 1);
      assert.match(gone.stderr, /session_not_found/);
    });

    test('daemon status, token and stop', async () => {
      const status = await h.run(['daemon', 'status', '--json']);
      assert.equal(status.code, 0, status.stderr);
      const s = JSON.parse(status.stdout);
      assert.equal(s.url, h.daemonState()!.url);
      assert.equal(s.versionMatches, true);
      assert.ok(s.sessions.total >= 2);
      assert.equal((await h.run(['daemon', 'token'])).stdout.trim(), h.token());
      const pid = h.daemonState()!.pid;
      const stop = await h.run(['daemon', 'stop']);
      assert.equal(stop.code, 0, stop.stderr);
      assert.equal(pidAlive(pid), false);
      assert.equal(h.daemonState(), undefined, 'the state file is gone');
      const none = await h.run(['daemon', 'status']);
      assert.equal(none.code, 1);
      // Its line ends with the code as every error line does (until 2026-12-06 it had none).
      assert.equal(none.stderr, `troupe daemon status: no daemon is running for ${h.dir} (daemon_unreachable)\n`);
    });
  });

  describe('troupe run with untrusted text', { concurrency: 1, timeout: SUITE_TIMEOUT_MS }, () => {
    test('model output is shown with its control characters spelled out, line breaks kept; a session title is one line of printable text', async () => {
      const s = makeHome({ replies: [{ when: 'hello', items: [{ text: 'before\x1b[2Jafter\r\nnext line\n' }] }] });
      try {
        const r = await s.run(['run', '\x1b]0;owned\x07 hello']);
        assert.equal(r.code, 0, r.stderr);
        assert.ok(!r.stdout.includes('\x1b'), `no raw ESC on stdout: ${JSON.stringify(r.stdout)}`);
        assert.match(r.stdout, /before\\x1b\[2Jafter\nnext line/);
        const list = await s.run(['sessions']);
        assert.equal(list.code, 0, list.stderr);
        assert.ok(!list.stdout.includes('\x1b'), `no raw ESC in the list: ${JSON.stringify(list.stdout)}`);
        // The agent makes the title one line of printable text (until 2026-12-07 it kept the prompt's
        // control characters, and the list spelled them out).
        assert.ok(list.stdout.includes(' ]0;owned hello '), `the title, its control characters gone: ${JSON.stringify(list.stdout)}`);
        const id = /session (ses_\w+)/.exec(r.stderr)![1]!;
        const watched = await s.run(['watch', id, '--no-follow']);
        assert.equal(watched.code, 0, watched.stderr);
        assert.ok(!watched.stdout.includes('\x1b'), `no raw ESC from watch: ${JSON.stringify(watched.stdout)}`);
        assert.match(watched.stdout, /\\x1b\]0;owned\\x07 hello/);
        assert.match(watched.stdout, /before\\x1b\[2Jafter\nnext line/);
      } finally {
        await s.close();
      }
    });

    test('sessions and daemon status cut a long title before an emoji, not in it, and print no control character', async () => {
      const s = makeHome({ replies: [{ when: 'hello', items: [{ text: 'hi' }] }] });
      try {
        // Both lists cut a title at 40 columns of what they print, the last one an ellipsis: here the
        // emoji would take the 40th and the 41st (until 2026-12-06 the cut was at 40 UTF-16 units of the
        // raw title; until 2026-12-07 it showed no mark). The agent made the title printable: its ESC
        // and BEL are gone (spaces, collapsed).
        const prompt = `\x1b]0;owned\x07 ${'a'.repeat(30)}😀 hello`;
        const r = await s.run(['run', prompt]);
        assert.equal(r.code, 0, r.stderr);
        const shown = `]0;owned ${'a'.repeat(30)}`;
        const list = await s.run(['sessions']);
        assert.equal(list.code, 0, list.stderr);
        assert.ok(!list.stdout.includes('\uFFFD'), `no half emoji in the list: ${JSON.stringify(list.stdout)}`);
        assert.ok(list.stdout.includes(`${shown}… `), `the title cut before the emoji, marked: ${JSON.stringify(list.stdout)}`);
        const status = await s.run(['daemon', 'status']);
        assert.equal(status.code, 0, status.stderr);
        assert.ok(!status.stdout.includes('\x1b'), `no raw ESC in the status: ${JSON.stringify(status.stdout)}`);
        assert.ok(!status.stdout.includes('\uFFFD'), `no half emoji in the status: ${JSON.stringify(status.stdout)}`);
        assert.ok(status.stdout.includes(` conn  ${shown}…\n`), `the title cut before the emoji, marked: ${JSON.stringify(status.stdout)}`);
      } finally {
        await s.close();
      }
    });

    test("a turn's error (a vendor's message) is shown with its control characters spelled out, by run and by chat", async () => {
      const s = makeHome({ replies: [{ when: 'go', items: [{ error: { kind: 'invalid_request', message: 'bad \x1b]0;owned\x07 request' } }] }] });
      try {
        const r = await s.run(['run', 'go']);
        assert.equal(r.code, 1);
        assert.match(r.stderr, /troupe run: bad \\x1b\]0;owned\\x07 request \(provider_invalid_request\)/);
        assert.ok(!r.stderr.includes('\x1b'), `no raw ESC in the error line: ${JSON.stringify(r.stderr)}`);
        const chat = await s.run(['chat'], { input: 'go\n' });
        assert.equal(chat.code, 1, chat.stderr);
        assert.ok(!chat.stderr.includes('\x1b'), `no raw ESC in the chat's error line: ${JSON.stringify(chat.stderr)}`);
        assert.match(chat.stdout, /error: bad \\x1b\]0;owned\\x07 request/);
        assert.ok(!chat.stdout.includes('\x1b'), `no raw ESC in the chat's error note: ${JSON.stringify(chat.stdout)}`);
      } finally {
        await s.close();
      }
    });

    test('a permission note names the command the model chose with its control characters spelled out', async () => {
      // The command (and the title made of it) is the model's text: a note saying it was denied or
      // allowed must not pass its escape sequences to the terminal.
      const command = 'echo \x1b]0;owned\x07hi';
      const s = makeHome({ replies: [{ when: 'go', items: [{ tool_call: { name: 'run_command', input: { command } } }] }, [{ text: 'done' }], [{ text: 'done' }]] });
      try {
        const denied = await s.run(['run', 'go']);
        assert.equal(denied.code, 0, denied.stderr);
        assert.match(denied.stdout, /\[denied .*echo \\x1b\]0;owned\\x07hi/);
        assert.ok(!denied.stdout.includes('\x1b'), `no raw ESC in the denial: ${JSON.stringify(denied.stdout)}`);
        const allowed = await s.run(['run', '--yes', 'go']);
        assert.equal(allowed.code, 0, allowed.stderr);
        assert.match(allowed.stdout, /\[allowed .*echo \\x1b\]0;owned\\x07hi/);
        assert.ok(!allowed.stdout.includes('\x1b'), `no raw ESC in the allowance: ${JSON.stringify(allowed.stdout)}`);
      } finally {
        await s.close();
      }
    });

    test("attach names its session's directory with its control characters spelled out, as chat does", async () => {
      // A directory's name may hold any character but `/`: the session's cwd is shown from the daemon's record.
      const s = makeHome({ replies: [{ when: 'hello', items: [{ text: 'hi' }] }] });
      try {
        const dir = join(s.work, 'in\x1b]0;owned\x07here');
        mkdirSync(dir);
        const r = await s.run(['run', '--cwd', dir, 'hello']);
        assert.equal(r.code, 0, r.stderr);
        const id = /session (ses_\w+)/.exec(r.stderr)![1]!;
        const attach = s.start(['attach', id]);
        await until(() => attach.stderr().includes('attached to'), 'attach to resume the session');
        attach.child.kill('SIGINT');
        const done = await attach.done;
        assert.equal(done.code, 0, done.stderr);
        // Until 2026-12-06 attach wrote the cwd raw: the ESC retitled the terminal.
        assert.ok(!done.stderr.includes('\x1b'), `no raw ESC from attach: ${JSON.stringify(done.stderr)}`);
        assert.match(done.stderr, /in \S*in\\x1b\]0;owned\\x07here; Ctrl-C detaches/);
      } finally {
        await s.close();
      }
    });
  });
});
