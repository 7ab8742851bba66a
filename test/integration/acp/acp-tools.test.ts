// Tools through the ACP client: reads and writes go through the editor's buffers when it offers
// fs, commands run in its terminals (embedded, then released), and paths outside the workspace are
// refused before any client or disk access.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AcpChild } from '../../support/acp-child.js';
import { FileEventLog, sessionLogPath, sessionsDir } from '../../../src/store/index.js';
import { eventSchemaError } from '../../support/event-schema.js';

const workspace = () => mkdtempSync(join(tmpdir(), 'troupe-ws-'));
const call = (name: string, input: Record<string, unknown>) => ({ tool_call: { name, input } });

test('with client fs, reads see the editor buffer and writes land in it, not on disk', async (t) => {
  const cwd = workspace();
  writeFileSync(join(cwd, 'a.txt'), 'on disk\n');
  const c = AcpChild.start({
    script: { replies: [[call('read_file', { path: 'a.txt' })], [call('write_file', { path: 'b.txt', content: 'new\n' })], [{ text: 'done' }]] },
    env: { TROUPE_MODEL: 'scripted/replay' },
  });
  t.after(() => c.close());
  await c.initialize({ fs: { readTextFile: true, writeTextFile: true } });
  const sessionId = await c.agent.request('session/new', { cwd, mcpServers: [] }).then((r) => r.sessionId);
  await c.agent.request('session/set_mode', { sessionId, modeId: 'bypass' });
  c.buffers.set(join(cwd, 'a.txt'), 'unsaved editor text\n');
  assert.equal((await c.prompt(sessionId, 'go')).stopReason, 'end_turn');
  const read = c.updatesFor(sessionId, 'tool_call_update').find((u) => u.rawOutput?.output?.includes('unsaved editor text'));
  assert.ok(read, 'the model read the buffer');
  // b.txt is asked for before it is written: nothing is on disk, and the editor may hold an unsaved buffer there.
  assert.deepEqual(c.fsCalls, [{ method: 'read', path: join(cwd, 'a.txt') }, { method: 'read', path: join(cwd, 'b.txt') }, { method: 'write', path: join(cwd, 'b.txt') }]);
  assert.equal(c.buffers.get(join(cwd, 'b.txt')), 'new\n');
  assert.ok(!existsSync(join(cwd, 'b.txt')), 'the disk is untouched: the editor owns the file now');
  assert.deepEqual(c.schemaErrors, []);
});

test('an editor that fails a read or a write: the tool call fails with the reason the editor gave', async (t) => {
  const cwd = workspace();
  writeFileSync(join(cwd, 'a.txt'), 'on disk\n');
  const c = AcpChild.start({ script: { replies: [[call('read_file', { path: 'a.txt' }), call('write_file', { path: 'b.txt', content: 'x' })], [{ text: 'done' }]] } });
  t.after(() => c.close());
  await c.initialize({ fs: { readTextFile: true, writeTextFile: true } });
  const sessionId = await c.newSession(cwd);
  await c.agent.request('session/set_mode', { sessionId, modeId: 'bypass' });
  c.fsFailures.set(join(cwd, 'a.txt'), 'buffer is being reloaded');
  c.fsFailures.set(join(cwd, 'b.txt'), 'disk full');
  assert.equal((await c.prompt(sessionId, 'go')).stopReason, 'end_turn');
  const [read, write] = c.updatesFor(sessionId, 'tool_call_update').filter((u) => u.rawOutput);
  assert.deepEqual([read.status, write.status], ['failed', 'failed']);
  assert.match(read.rawOutput.output, /buffer is being reloaded/);
  assert.match(write.rawOutput.output, /disk full/);
  assert.deepEqual(c.schemaErrors, []);
});

test('edits show as diffs in the tool call', async (t) => {
  const cwd = workspace();
  writeFileSync(join(cwd, 'a.txt'), 'hello world\n');
  const c = AcpChild.start({ script: { replies: [[call('edit_file', { path: 'a.txt', old_string: 'world', new_string: 'troupe' })], [{ text: 'edited' }]] } });
  t.after(() => c.close());
  await c.initialize();
  const sessionId = await c.newSession(cwd);
  await c.agent.request('session/set_mode', { sessionId, modeId: 'accept-edits' });
  await c.prompt(sessionId, 'edit');
  const diff = c.updatesFor(sessionId, 'tool_call_update').flatMap((u) => u.content ?? []).find((x: any) => x.type === 'diff');
  assert.deepEqual([diff.path, diff.oldText, diff.newText], [join(cwd, 'a.txt'), 'hello world\n', 'hello troupe\n']);
  assert.equal(readFileSync(join(cwd, 'a.txt'), 'utf8'), 'hello troupe\n');
  assert.equal(c.updatesFor(sessionId, 'tool_call')[0].kind, 'edit');
});

// A 10 MiB file (edit_file's limit) of control characters, each 6 bytes in JSON ("\u0001"): the
// permission request carried the whole file before and after, a line of some 120 MiB, over the 32 MiB
// an ACP client reads (its connection ended: the SDK's ndJsonStream, as here).
test('the diff of a permission request for an edit of a large escape-heavy file is narrowed to the changed lines, and the client can read it', async (t) => {
  const cwd = workspace();
  const line = '\x01'.repeat(1023) + '\n';
  const rest = line.repeat(Math.floor((10 * 1024 * 1024 - 2) / line.length));
  writeFileSync(join(cwd, 'ctl.txt'), 'A\n' + rest);
  const c = AcpChild.start({ script: { replies: [[call('edit_file', { path: 'ctl.txt', old_string: 'A', new_string: 'B' })], [{ text: 'edited' }]] } });
  t.after(() => c.close());
  await c.initialize();
  const sessionId = await c.newSession(cwd);
  assert.equal((await c.prompt(sessionId, 'edit')).stopReason, 'end_turn');
  assert.equal(c.permissions.length, 1);
  const diff: any = c.permissions[0]!.toolCall.content?.find((x) => x.type === 'diff');
  const context = line.repeat(3);
  assert.deepEqual([diff?.oldText, diff?.newText], ['A\n' + context, 'B\n' + context], 'the changed line and 3 lines around it');
  assert.equal(readFileSync(join(cwd, 'ctl.txt'), 'utf8'), 'B\n' + rest, 'allowed, and made');
});

test('with client terminals, commands run in a terminal that is embedded and then released', async (t) => {
  const cwd = workspace();
  const c = AcpChild.start({ script: { replies: [[call('run_command', { command: 'echo from-terminal' })], [{ text: 'ran' }]] } });
  t.after(() => c.close());
  await c.initialize({ terminal: true });
  const sessionId = await c.newSession(cwd);
  await c.agent.request('session/set_mode', { sessionId, modeId: 'bypass' });
  await c.prompt(sessionId, 'run it');
  const embedded = c.updatesFor(sessionId, 'tool_call_update').flatMap((u) => u.content ?? []).find((x: any) => x.type === 'terminal');
  assert.ok(embedded, 'the terminal is embedded in the tool call');
  // The release is sent, not awaited (an editor that never answers it must not hold the turn): it
  // can reach this client's handler after the prompt's answer.
  await c.until(() => c.terminalCalls.length >= 2, 'the terminal released');
  assert.deepEqual(c.terminalCalls, [`create ${embedded.terminalId}`, `release ${embedded.terminalId}`]);
  const done = c.updatesFor(sessionId, 'tool_call_update').at(-1);
  assert.equal(done.status, 'completed');
  assert.match(done.rawOutput.output, /from-terminal/);
  assert.deepEqual(c.schemaErrors, []);
});

test('output a client terminal cut to its outputByteLimit reaches the model marked as cut', async (t) => {
  const cwd = workspace();
  const c = AcpChild.start({ script: { replies: [[call('run_command', { command: 'seq 1 100000' })], [{ text: 'ran' }]] } });
  t.after(() => c.close());
  await c.initialize({ terminal: true });
  const sessionId = await c.newSession(cwd);
  await c.agent.request('session/set_mode', { sessionId, modeId: 'bypass' });
  await c.prompt(sessionId, 'run it');
  const output: string = c.updatesFor(sessionId, 'tool_call_update').at(-1).rawOutput.output;
  assert.match(output, /^\[\.\.\. earlier output omitted: the client terminal kept the last 65536 bytes \.\.\.\]\n/);
  assert.match(output, /\n99999\n100000\n\[exit code: 0\]$/);
  assert.deepEqual(c.schemaErrors, []);
});

test('a command cancelled in a client terminal: killed, released, and still embedded in its failed tool call, with the reason after it', async (t) => {
  // exec: once killed, nothing holds the output pipe open (the test client answers terminal/output of
  // a killed command once its pipes have closed).
  const c = AcpChild.start({ script: { replies: [[call('run_command', { command: 'echo started; exec sleep 30' })], [{ text: 'unreached' }]] } });
  t.after(() => c.close());
  await c.initialize({ terminal: true });
  const sessionId = await c.newSession(workspace());
  await c.agent.request('session/set_mode', { sessionId, modeId: 'bypass' });
  const running = c.prompt(sessionId, 'run it');
  await c.until(() => c.updatesFor(sessionId, 'tool_call_update').some((u) => u.content?.some((x: any) => x.type === 'terminal')), 'the terminal embedded');
  await c.agent.notify('session/cancel', { sessionId });
  assert.equal((await running).stopReason, 'cancelled');
  const done = c.updatesFor(sessionId, 'tool_call_update').at(-1);
  assert.equal(done.status, 'failed');
  assert.deepEqual(done.content.map((x: any) => x.type), ['terminal', 'content'], 'content replaces: the terminal is kept');
  assert.equal(done.content[0].terminalId, 'term_1');
  assert.match(done.content[1].content.text, /Cancelled/);
  // Released as the tool call ends, which may be just after the prompt's answer.
  await c.until(() => c.terminalCalls.includes('release term_1'), 'the terminal released');
  assert.deepEqual(c.terminalCalls, ['create term_1', 'kill term_1', 'release term_1']);
  assert.deepEqual(c.schemaErrors, []);
});

test('a command stopped in a client terminal (cancelled, or past its timeout): its terminal/wait_for_exit is withdrawn ($/cancel_request), then the terminal killed and released', async (t) => {
  // Until 2026-12-07 the wait was left pending in the editor (and in the agent) after the command was
  // stopped: ACP's way to say troupe no longer waits for an answer is to withdraw the request.
  for (const stop of ['cancel', 'timeout'] as const) {
    const command = { command: 'echo started; exec sleep 30', ...(stop === 'timeout' ? { timeout_ms: 300 } : {}) };
    const c = AcpChild.start({ script: { replies: [[call('run_command', command)], [{ text: 'seen' }]] } });
    t.after(() => c.close());
    await c.initialize({ terminal: true });
    const sessionId = await c.newSession(workspace());
    await c.agent.request('session/set_mode', { sessionId, modeId: 'bypass' });
    const running = c.prompt(sessionId, 'run it');
    if (stop === 'cancel') {
      await c.until(() => c.updatesFor(sessionId, 'tool_call_update').some((u) => u.content?.some((x: any) => x.type === 'terminal')), 'the terminal embedded');
      await c.agent.notify('session/cancel', { sessionId });
    }
    assert.equal((await running).stopReason, stop === 'cancel' ? 'cancelled' : 'end_turn', stop);
    await c.until(() => c.terminalCalls.includes('release term_1'), 'the terminal released');
    // Withdrawn ahead of the kill, on the same stream: seen by the time the release is.
    assert.deepEqual(c.terminalWaitsWithdrawn, ['term_1'], `${stop}: the wait withdrawn`);
    assert.deepEqual(c.terminalCalls, ['create term_1', 'kill term_1', 'release term_1'], stop);
    assert.deepEqual(c.schemaErrors, [], stop);
    assert.equal(await c.close(), 0, stop);
  }
});

test("an editor whose terminal fails once the command runs (terminal/wait_for_exit, terminal/output): the call keeps its terminal and says what failed, with the editor's reason", async (t) => {
  for (const [method, expected] of [
    ['terminal/wait_for_exit', /^from-terminal\n\[the client's terminal failed while the command ran \(terminal\/wait_for_exit: Internal error: wait broke\); the command was stopped\]$/],
    ['terminal/output', /^\(no output\)\n\[the command ended \(exit code 3\), but the client's terminal did not give its output \(terminal\/output: Internal error: output broke\)\]$/],
  ] as const) {
    const c = AcpChild.start({ script: { replies: [[call('run_command', { command: 'echo from-terminal; exit 3' })], [{ text: 'seen' }]] } });
    t.after(() => c.close());
    c.terminalFailures.set(method, method === 'terminal/output' ? 'output broke' : 'wait broke');
    await c.initialize({ terminal: true });
    const sessionId = await c.newSession(workspace());
    await c.agent.request('session/set_mode', { sessionId, modeId: 'bypass' });
    assert.equal((await c.prompt(sessionId, 'run it')).stopReason, 'end_turn', method);
    const done = c.updatesFor(sessionId, 'tool_call_update').at(-1);
    assert.equal(done.status, 'failed', method);
    assert.equal(done.rawOutput.errorCode, 'tool_failed', method);
    // Not "Could not start the command: Internal error": it started, and the editor said why it failed.
    assert.match(done.rawOutput.output, expected, method);
    assert.deepEqual(done.content.map((x: any) => x.type), ['terminal', 'content'], `${method}: the terminal stays in the call, the reason after it`);
    assert.equal(done.content[1].content.text, done.rawOutput.output.split('\n').at(-1), method);
    await c.until(() => c.terminalCalls.includes('release term_1'), 'the terminal released');
    assert.deepEqual(c.schemaErrors, []);
    await c.close();
  }
});

test('an editor that never answers terminal/release, or terminal/kill: the command\'s call ends and the turn goes on (both are sent, not waited for)', async (t) => {
  for (const unanswered of ['release', 'kill'] as const) {
    // A kill is asked for when the command's timeout passes.
    const command = unanswered === 'kill' ? { command: 'echo from-terminal; exec sleep 30', timeout_ms: 300 } : { command: 'echo from-terminal' };
    const c = AcpChild.start({ script: { replies: [[call('run_command', command)], [{ text: 'ran' }]] } });
    t.after(() => c.close());
    if (unanswered === 'release') c.terminalReleaseUnanswered = true;
    else c.terminalKillUnanswered = true;
    await c.initialize({ terminal: true });
    const sessionId = await c.newSession(workspace());
    await c.agent.request('session/set_mode', { sessionId, modeId: 'bypass' });
    assert.equal((await c.prompt(sessionId, 'run it')).stopReason, 'end_turn', unanswered);
    const done = c.updatesFor(sessionId, 'tool_call_update').at(-1);
    if (unanswered === 'release') {
      assert.equal(done.status, 'completed');
      assert.match(done.rawOutput.output, /from-terminal\n\[exit code: 0\]$/);
    } else {
      assert.equal(done.status, 'failed');
      assert.equal(done.rawOutput.errorCode, 'tool_timeout');
      // (What output the terminal had by then is the client's: only the ending is asserted.)
      assert.match(done.rawOutput.output, /\n\[timed out after 300 ms; the command and its child processes were killed\]$/);
    }
    await c.until(() => c.terminalCalls.includes('release term_1'), 'the terminal released');
    assert.deepEqual(c.terminalCalls, unanswered === 'kill' ? ['create term_1', 'kill term_1', 'release term_1'] : ['create term_1', 'release term_1'], 'released all the same');
    assert.deepEqual(c.schemaErrors, []);
    await c.close();
  }
});

test("a command that ended before its timeout, in an editor slow to give its output, is not told as timed out: its exit code stands, nothing is killed", async (t) => {
  // The output is asked for once the command has exited; the editor answers it after the timeout has
  // passed. Until 2026-12-07 the timeout's timer still ran while the output was awaited, and its firing
  // made the call "[timed out after 300 ms; the command and its child processes were killed]"
  // (tool_timeout), though it had exited 0 and nothing was killed. So too a terminal that failed:
  // its reason gave way to the timeout.
  for (const failing of [undefined, 'terminal/wait_for_exit'] as const) {
    const c = AcpChild.start({ script: { replies: [[call('run_command', { command: 'echo from-terminal', timeout_ms: 300 })], [{ text: 'ran' }]] } });
    t.after(() => c.close());
    c.terminalOutputHeldMs = 1500;
    if (failing) c.terminalFailures.set(failing, 'wait broke');
    await c.initialize({ terminal: true });
    const sessionId = await c.newSession(workspace());
    await c.agent.request('session/set_mode', { sessionId, modeId: 'bypass' });
    assert.equal((await c.prompt(sessionId, 'run it')).stopReason, 'end_turn');
    const done = c.updatesFor(sessionId, 'tool_call_update').at(-1);
    if (failing) {
      assert.equal(done.rawOutput.errorCode, 'tool_failed');
      assert.match(done.rawOutput.output, /\[the client's terminal failed while the command ran \(terminal\/wait_for_exit: Internal error: wait broke\); the command was stopped\]$/);
    } else {
      assert.equal(done.status, 'completed');
      assert.match(done.rawOutput.output, /^from-terminal\n\[exit code: 0\]$/);
    }
    await c.until(() => c.terminalCalls.includes('release term_1'), 'the terminal released');
    assert.deepEqual(c.terminalCalls, failing ? ['create term_1', 'kill term_1', 'release term_1'] : ['create term_1', 'release term_1'], 'no kill of a command that had exited');
    assert.deepEqual(c.schemaErrors, []);
    await c.close();
  }
});

test("an editor's answer outside ACP's schema (a read without its content, a terminal whose id is no string) fails the call saying so; nothing of it reaches an update or the log", async (t) => {
  const cwd = workspace();
  writeFileSync(join(cwd, 'a.txt'), 'on disk\n');
  const c = AcpChild.start({ script: { replies: [[call('read_file', { path: 'a.txt' }), call('run_command', { command: 'echo never' })], [{ text: 'seen' }]] } });
  t.after(() => c.close());
  c.readAnswers.set(join(cwd, 'a.txt'), {});
  c.terminalCreateAnswer = { terminalId: 7 };
  await c.initialize({ fs: { readTextFile: true }, terminal: true });
  const sessionId = await c.newSession(cwd);
  await c.agent.request('session/set_mode', { sessionId, modeId: 'bypass' });
  assert.equal((await c.prompt(sessionId, 'go')).stopReason, 'end_turn');
  const ended = c.updatesFor(sessionId, 'tool_call_update').filter((u) => u.status === 'failed');
  assert.deepEqual(
    ended.map((u) => u.rawOutput.output),
    ['a.txt: the client answered fs/read_text_file without the file\'s content as a string', 'Could not start the command: the client answered terminal/create without a terminalId string'],
    'not a TypeError\'s words',
  );
  // The SDK client drops an update its schema refuses: an embedded terminal of id 7 was one.
  assert.deepEqual(c.schemaErrors, [], 'every update the agent sent is ACP');
  assert.equal(await c.close(), 0);
  const logged = await FileEventLog.open(sessionLogPath(sessionsDir(c.home), sessionId), { readOnly: true });
  t.after(() => logged.close());
  const events = (await logged.readAfter(0, { limit: 1000 })).events;
  assert.deepEqual(events.map(eventSchemaError).filter(Boolean), [], 'every event of the log is in spec/events.schema.json');
});

test('commands run on this machine do not inherit the agent\'s model credentials, nor the daemon token', async (t) => {
  const command = 'echo "anthropic=${ANTHROPIC_API_KEY-withheld} openai=${OPENAI_API_KEY-withheld} gemini=${GEMINI_API_KEY-withheld} troupe=${TROUPE_TOKEN-withheld} other=${TROUPE_TEST_VISIBLE-missing}"';
  const c = AcpChild.start({
    script: { replies: [[call('run_command', { command })], [{ text: 'ran' }]] },
    env: { ANTHROPIC_API_KEY: 'sk-ant-not-for-commands', OPENAI_API_KEY: 'sk-not-for-commands', GEMINI_API_KEY: 'g-not-for-commands', TROUPE_TOKEN: 'daemon-token-not-for-commands', TROUPE_TEST_VISIBLE: 'inherited' },
  });
  t.after(() => c.close());
  await c.initialize();
  const sessionId = await c.newSession(workspace());
  await c.agent.request('session/set_mode', { sessionId, modeId: 'bypass' });
  await c.prompt(sessionId, 'run it');
  const done = c.updatesFor(sessionId, 'tool_call_update').at(-1);
  assert.equal(done.status, 'completed');
  assert.match(done.rawOutput.output, /^anthropic=withheld openai=withheld gemini=withheld troupe=withheld other=inherited$/m);
});

test('paths outside the workspace are refused: .., absolute, symlink out, symlink loop', async (t) => {
  const outside = workspace();
  writeFileSync(join(outside, 'secret.txt'), 'TOP-SECRET-CONTENT\n');
  const cwd = workspace();
  symlinkSync(outside, join(cwd, 'out-link'));
  mkdirSync(join(cwd, 'loop'));
  symlinkSync(join(cwd, 'loop', 'b'), join(cwd, 'loop', 'a'));
  symlinkSync(join(cwd, 'loop', 'a'), join(cwd, 'loop', 'b'));
  const attempts = [
    call('read_file', { path: `../${outside.split('/').pop()}/secret.txt` }),
    call('read_file', { path: join(outside, 'secret.txt') }),
    call('read_file', { path: 'out-link/secret.txt' }),
    call('write_file', { path: 'out-link/planted.txt', content: 'x' }),
    call('write_file', { path: join(outside, 'planted2.txt'), content: 'x' }),
    call('read_file', { path: 'loop/a' }),
  ];
  const c = AcpChild.start({ script: { replies: [attempts, [{ text: 'refused' }]] } });
  t.after(() => c.close());
  await c.initialize({ fs: { readTextFile: true, writeTextFile: true } });
  const sessionId = await c.newSession(cwd);
  await c.agent.request('session/set_mode', { sessionId, modeId: 'bypass' });
  assert.equal((await c.prompt(sessionId, 'try')).stopReason, 'end_turn');
  const results = c.updatesFor(sessionId, 'tool_call_update').filter((u) => u.rawOutput);
  assert.equal(results.length, attempts.length);
  assert.ok(results.every((r) => r.status === 'failed'));
  assert.deepEqual(results.slice(0, 5).map((r) => r.rawOutput.errorCode), Array(5).fill('path_outside_workspace'));
  assert.match(results[5].rawOutput.output, /symlink loop/);
  assert.deepEqual(c.fsCalls, [], 'the client was never asked for a path outside');
  assert.ok(!existsSync(join(outside, 'planted.txt')) && !existsSync(join(outside, 'planted2.txt')));
  assert.ok(!results.some((r) => r.rawOutput.output.includes('TOP-SECRET-CONTENT')), 'nothing outside was read');
});

test('update_plan reaches the client as a plan update', async (t) => {
  const entries = [{ content: 'step one', priority: 'high', status: 'in_progress' }];
  const c = AcpChild.start({ script: { replies: [[call('update_plan', { entries })], [{ text: 'planned' }]] } });
  t.after(() => c.close());
  await c.initialize();
  const sessionId = await c.newSession(workspace());
  await c.prompt(sessionId, 'plan');
  assert.deepEqual(c.updatesFor(sessionId, 'plan').map((u) => u.entries), [entries]);
  assert.equal(c.updatesFor(sessionId, 'tool_call')[0].kind, 'think');
  assert.deepEqual(c.schemaErrors, []);
});

test('a tool call whose input is over the log\'s 1 MiB event limit (a large write_file) runs, is logged in parts, and is whole on session/load and to the model', async (t) => {
  const cwd = workspace();
  // About 1.6 MB of JSON, with characters of two, three and four bytes (a pair) across the cuts.
  const big = 'é€😀 a line of the generated file\n'.repeat(40_000);
  const script = {
    capabilities: { contextWindow: 4_000_000 },
    replies: [{ when: 'write the data', items: [{ text: 'Writing.' }, call('write_file', { path: 'data.txt', content: big })] }, { when: 'how big', items: [{ text: 'Large.' }] }, [{ text: 'Written.' }]],
  };
  const c = AcpChild.start({ script });
  t.after(() => c.close());
  await c.initialize();
  const sessionId = await c.newSession(cwd);
  // Before: the tool call's append failed the turn (event_too_large), the call neither run nor answered.
  assert.equal((await c.prompt(sessionId, 'write the data')).stopReason, 'end_turn');
  assert.equal(readFileSync(join(cwd, 'data.txt'), 'utf8'), big, 'written whole');
  const live = c.updatesFor(sessionId, 'tool_call');
  assert.equal(live[0]?.rawInput.content, big, 'the client is shown the input whole');
  assert.equal((c.permissions[0]?.toolCall.content?.[0] as { newText?: string } | undefined)?.newText, big, 'and asked with the whole diff');
  assert.equal(c.updatesFor(sessionId, 'tool_call_update').at(-1)?.status, 'completed');
  assert.equal((await c.prompt(sessionId, 'how big')).stopReason, 'end_turn', 'the session goes on');
  assert.equal(await c.close(), 0);

  const logged = await FileEventLog.open(sessionLogPath(sessionsDir(c.home), sessionId), { readOnly: true });
  t.after(() => logged.close());
  const events = (await logged.readAfter(0, { limit: 1000 })).events;
  const started = events.find((e) => e.type === 'tool_call_started') as { seq: number; input: object; parts?: number };
  assert.ok(started.parts! > 1, 'logged in parts');
  assert.deepEqual(started.input, {});
  assert.deepEqual(events.slice(started.seq - 1 - started.parts!, started.seq - 1).map((e) => e.type), Array(started.parts).fill('content_part'));

  // Another process: the replay shows the call whole, and the model is sent it whole (the scripted
  // model's usage estimate is the request's characters / 4).
  const second = AcpChild.start({ script, home: c.home });
  t.after(() => second.close());
  await second.initialize();
  await second.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  assert.equal(second.updatesFor(sessionId, 'tool_call')[0]?.rawInput.content, big);
  assert.equal((await second.prompt(sessionId, 'how big')).stopReason, 'end_turn');
  const used = second.updatesFor(sessionId, 'usage_update').at(-1)?.used;
  assert.ok(used > big.length / 4, `the model was sent the call's input (${used} tokens used)`);
  assert.deepEqual([...c.schemaErrors, ...second.schemaErrors], []);
});

// 6 MiB of control characters, each 6 bytes in JSON ("\u0001"): a write_file input of 36 MiB of JSON.
// Before, the tool_call update carried it whole, a line over the 32 MiB the client reads, and the
// client's SDK ended its connection (as here: ndJsonStream), every session with it.
test('a tool call whose input alone is over the line a client reads is shown with a note for its content, in the update and the permission request; the call runs whole', async (t) => {
  const cwd = workspace();
  const big = '\x01'.repeat(6 * 1024 * 1024);
  const c = AcpChild.start({ script: { capabilities: { contextWindow: 40_000_000 }, replies: [[call('write_file', { path: 'big.txt', content: big })], [{ text: 'written' }]] } });
  t.after(() => c.close());
  await c.initialize();
  const sessionId = await c.newSession(cwd);
  assert.equal((await c.prompt(sessionId, 'write')).stopReason, 'end_turn');
  const note = `[${big.length} bytes, too large to show here]`;
  assert.deepEqual(c.updatesFor(sessionId, 'tool_call')[0]?.rawInput, { path: 'big.txt', content: note });
  assert.deepEqual(c.permissions[0]?.toolCall.rawInput, { path: 'big.txt', content: note });
  assert.deepEqual(c.permissions[0]?.toolCall.content, [{ type: 'content', content: { type: 'text', text: '[The change is too large to show here.]' } }]);
  assert.equal(readFileSync(join(cwd, 'big.txt'), 'utf8'), big, 'allowed, and written whole');
  assert.deepEqual(c.schemaErrors, []);
});

test('an editor that answers a file read with more than the 32 MiB message limit: the read fails with payload_too_large, the turn and the agent go on', async (t) => {
  const cwd = workspace();
  writeFileSync(join(cwd, 'huge.txt'), 'small on disk\n');
  const c = AcpChild.start({ script: { replies: [[call('read_file', { path: 'huge.txt' })], [{ text: 'That file is too large.' }], [{ text: 'still here' }]] } });
  t.after(() => c.close());
  await c.initialize({ fs: { readTextFile: true, writeTextFile: true } });
  const sessionId = await c.newSession(cwd);
  c.buffers.set(join(cwd, 'huge.txt'), 'y'.repeat(33 * 1024 * 1024));
  // Before: the answer's line ended the connection, and the agent stopped with every session.
  assert.equal((await c.prompt(sessionId, 'read it')).stopReason, 'end_turn');
  const failed = c.updatesFor(sessionId, 'tool_call_update').find((u) => u.status === 'failed');
  assert.match(JSON.stringify(failed?.content), /over the limit of 33554432 bytes/, JSON.stringify(failed));
  assert.equal((await c.prompt(sessionId, 'again')).stopReason, 'end_turn');
  assert.match(c.stderr, /a message over the size limit was not read/);
  assert.deepEqual(c.schemaErrors, []);
});

test('a client that offers reads only, and no terminal: reads go through it, writes and commands stay on this machine', async (t) => {
  const cwd = workspace();
  writeFileSync(join(cwd, 'a.txt'), 'on disk\n');
  const c = AcpChild.start({
    script: { replies: [[call('read_file', { path: 'a.txt' }), call('write_file', { path: 'b.txt', content: 'new\n' }), call('run_command', { command: 'cat b.txt' })], [{ text: 'done' }]] },
  });
  t.after(() => c.close());
  await c.initialize({ fs: { readTextFile: true, writeTextFile: false }, terminal: false });
  const sessionId = await c.newSession(cwd);
  await c.agent.request('session/set_mode', { sessionId, modeId: 'bypass' });
  c.buffers.set(join(cwd, 'a.txt'), 'unsaved editor text\n');
  assert.equal((await c.prompt(sessionId, 'go')).stopReason, 'end_turn');
  // b.txt asked for too (nothing on disk: an unsaved buffer there would make the write refused), but never written.
  assert.deepEqual(c.fsCalls, [{ method: 'read', path: join(cwd, 'a.txt') }, { method: 'read', path: join(cwd, 'b.txt') }], 'no fs/write_text_file: the client did not offer it');
  assert.deepEqual(c.terminalCalls, [], 'no terminal/*: the client did not offer terminals');
  assert.equal(readFileSync(join(cwd, 'b.txt'), 'utf8'), 'new\n');
  const outputs = c.updatesFor(sessionId, 'tool_call_update').map((u) => u.rawOutput?.output ?? '').join('\n');
  assert.match(outputs, /unsaved editor text/);
  assert.match(outputs, /new/);
  assert.deepEqual(c.schemaErrors, []);
});

test('a runaway path or plan step (a model repeating itself past 1 MiB) fails its call with invalid_params, which the model reads; the turn goes on', async (t) => {
  const cwd = workspace();
  const runaway = 'a'.repeat(1_200_000);
  const c = AcpChild.start({
    script: {
      replies: [
        [call('write_file', { path: runaway, content: 'x' }), call('update_plan', { entries: [{ content: runaway, priority: 'high', status: 'pending' }] })],
        [{ text: 'I will use shorter arguments.' }],
      ],
    },
  });
  t.after(() => c.close());
  await c.initialize();
  const sessionId = await c.newSession(cwd);
  await c.agent.request('session/set_mode', { sessionId, modeId: 'bypass' });
  // Before: the call's title and locations held the path whole, the log refused its event, and the
  // turn failed event_too_large without the model ever reading what was wrong.
  assert.equal((await c.prompt(sessionId, 'go')).stopReason, 'end_turn');
  const outputs = c.updatesFor(sessionId, 'tool_call_update').filter((u) => u.status === 'failed').map((u) => u.rawOutput?.output);
  assert.deepEqual(outputs, ['Invalid input for write_file: "path" must have at most 4096 characters.', 'Invalid input for update_plan: "entries[0].content" must have at most 2000 characters.']);
  assert.deepEqual(c.updatesFor(sessionId, 'plan'), []);
  assert.deepEqual(c.schemaErrors, []);
});
