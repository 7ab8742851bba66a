// A call that needs permission and cannot succeed as asked (its preview fails with a definite tool
// error: an edit_file whose old_string is not in the file, a path outside the workspace, an invalid
// path, a write under an editor's unsaved changes) is not put to the person: it fails at once with
// the error its run gives, a normal failed call for the client, the log and the model. A preview
// that fails for a transient reason (an editor that does not answer) still asks, and the modes that
// never ask and remembered answers behave as before.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AcpChild } from '../../support/acp-child.js';
import { readLogFile, sessionLogPath, sessionsDir } from '../../../src/store/index.js';

const call = (name: string, input: Record<string, unknown>) => ({ tool_call: { name, input } });
const workspace = () => mkdtempSync(join(tmpdir(), 'troupe-ws-'));
/** Each call in a reply of its own, then the model's last word. */
const oneByOne = (steps: unknown[], last = 'done') => [...steps.map((s) => [s]), [{ text: last }]];

test('a call the person would be asked to allow that cannot succeed fails at once with its run\'s error, unasked: the client, the log and the model see a failed call; a call that can succeed is asked as before', async (t) => {
  const cwd = workspace();
  writeFileSync(join(cwd, 'notes.txt'), 'first\nold line\n');
  const doomed = [
    call('edit_file', { path: 'notes.txt', old_string: 'absent', new_string: 'x' }),
    call('write_file', { path: '../outside.txt', content: 'x\n' }),
    call('write_file', { path: 'a\u0000b.txt', content: 'x\n' }),
  ];
  const fine = call('edit_file', { path: 'notes.txt', old_string: 'old line', new_string: 'new line' });
  // The same calls twice: asked for (default mode), then run unasked (bypass), for their run's errors.
  const c = AcpChild.start({ script: { replies: [...oneByOne([...doomed, fine]), ...oneByOne(doomed, 'again')] } });
  t.after(() => c.close());
  await c.initialize();
  const sessionId = await c.newSession(cwd);
  assert.equal((await c.prompt(sessionId, 'go')).stopReason, 'end_turn', 'the turn went on to the model\'s last reply');
  const started = c.updatesFor(sessionId, 'tool_call').map((u) => u.toolCallId);
  assert.deepEqual(c.permissions.map((p) => p.toolCall.toolCallId), [started[3]], 'only the call that can succeed was put to the person');
  assert.deepEqual(c.permissions[0]!.toolCall.content, [{ type: 'diff', path: join(cwd, 'notes.txt'), oldText: 'first\nold line\n', newText: 'first\nnew line\n' }]);
  assert.equal(readFileSync(join(cwd, 'notes.txt'), 'utf8'), 'first\nnew line\n');
  // Each doomed call: announced, then failed; never in progress, since it never ran.
  const updates = c.updatesFor(sessionId, 'tool_call_update');
  for (const id of started.slice(0, 3)) assert.deepEqual(updates.filter((u) => u.toolCallId === id).map((u) => u.status), ['failed'], id);
  const asked = updates.filter((u) => u.rawOutput).map((u) => [u.status, u.rawOutput.errorCode, u.rawOutput.output]);

  // The same calls where nothing asks: their runs fail with these very errors.
  await c.agent.request('session/set_mode', { sessionId, modeId: 'bypass' });
  assert.equal((await c.prompt(sessionId, 'again')).stopReason, 'end_turn');
  const ran = c.updatesFor(sessionId, 'tool_call_update').filter((u) => u.rawOutput).slice(4).map((u) => [u.status, u.rawOutput.errorCode, u.rawOutput.output]);
  assert.deepEqual(asked.slice(0, 3), ran);
  assert.deepEqual(ran.map(([status, code]) => [status, code]), [
    ['failed', 'tool_failed'],
    ['failed', 'path_outside_workspace'],
    ['failed', 'invalid_params'],
  ]);
  assert.match(ran[0]![2], /^old_string was not found in notes\.txt\./);
  assert.equal(c.permissions.length, 1, 'bypass asks nothing');

  // The log holds a failed call (what the model reads back), and no permission asked or answered for it.
  const events = (await readLogFile(sessionLogPath(sessionsDir(c.home), sessionId))).events;
  for (const [i, id] of started.slice(0, 3).entries()) {
    const of = events.filter((e) => 'toolCallId' in e && e.toolCallId === id);
    assert.deepEqual(of.map((e) => e.type), ['tool_call_started', 'tool_call_updated'], id);
    const failed = of[1] as { status?: string; errorCode?: string; output?: string };
    assert.deepEqual([failed.status, failed.errorCode, failed.output], asked[i]);
  }
  assert.deepEqual(c.schemaErrors, []);
});

test("an editor with unsaved changes and no writes: the edit and the write that would go under them are not put to the person; they fail at once, nothing written", async (t) => {
  const cwd = workspace();
  const dirty = join(cwd, 'dirty.txt');
  writeFileSync(dirty, 'on disk\n');
  const steps = [call('edit_file', { path: 'dirty.txt', old_string: 'on disk', new_string: 'edited' }), call('write_file', { path: 'dirty.txt', content: 'replaced\n' })];
  const c = AcpChild.start({ script: { replies: oneByOne(steps) } });
  t.after(() => c.close());
  await c.initialize({ fs: { readTextFile: true } });
  const sessionId = await c.newSession(cwd);
  c.buffers.set(dirty, 'on disk\nunsaved line\n');
  assert.equal((await c.prompt(sessionId, 'go')).stopReason, 'end_turn');
  assert.equal(c.permissions.length, 0, 'nobody asked to allow what cannot happen');
  const ended = c.updatesFor(sessionId, 'tool_call_update').filter((u) => u.rawOutput);
  assert.deepEqual(ended.map((u) => [u.status, u.rawOutput.errorCode, u.rawOutput.output.replace(/ it has unsaved changes.*/, '')]), [
    ['failed', 'tool_failed', 'Cannot edit dirty.txt:'],
    ['failed', 'tool_failed', 'Cannot write dirty.txt:'],
  ]);
  assert.equal(readFileSync(dirty, 'utf8'), 'on disk\n');
  // The preview's reads only (the buffer, and the disk it is compared with): no run read again.
  assert.deepEqual(c.fsCalls, [{ method: 'read', path: dirty }, { method: 'read', path: dirty }]);
  assert.deepEqual(c.schemaErrors, []);
});

test('a preview that fails for a transient reason (the editor does not answer its read in time) still asks, with no diff; the run checks again', async (t) => {
  const cwd = workspace();
  const c = AcpChild.start({ script: { replies: oneByOne([call('write_file', { path: 'new.txt', content: 'x' })]) }, env: { TROUPE_CLIENT_ANSWER_TIMEOUT_MS: '300' } });
  t.after(() => c.close());
  c.unanswered.methods.add('fs/read_text_file');
  await c.initialize({ fs: { readTextFile: true, writeTextFile: true } });
  const sessionId = await c.newSession(cwd);
  assert.equal((await c.prompt(sessionId, 'go')).stopReason, 'end_turn');
  assert.equal(c.permissions.length, 1, 'asked');
  assert.equal(c.permissions[0]!.toolCall.content ?? undefined, undefined, 'nothing to show');
  const ended = c.updatesFor(sessionId, 'tool_call_update').filter((u) => u.rawOutput);
  assert.deepEqual(ended.map((u) => [u.status, u.rawOutput.errorCode]), [['failed', 'tool_timeout']]);
  assert.deepEqual(c.fsCalls.map((f) => f.method), ['read', 'read'], 'read by the preview, then by the run');
  assert.deepEqual(c.schemaErrors, []);
});

test('where nothing asks (a mode that allows, a remembered answer), a call that cannot succeed is decided as before: run and failed, or refused, and no preview is made', async (t) => {
  const cwd = workspace();
  const notes = join(cwd, 'notes.txt');
  writeFileSync(notes, 'first\n');
  const doomed = call('edit_file', { path: 'notes.txt', old_string: 'absent', new_string: 'x' });
  const fine = call('edit_file', { path: 'notes.txt', old_string: 'first', new_string: 'second' });
  const c = AcpChild.start({ script: { replies: [...oneByOne([doomed]), ...oneByOne([fine, doomed]), ...oneByOne([doomed])] }, answers: ['reject_always'] });
  t.after(() => c.close());
  await c.initialize({ fs: { readTextFile: true, writeTextFile: true } });
  const sessionId = await c.newSession(cwd);
  const ended = () => c.updatesFor(sessionId, 'tool_call_update').filter((u) => u.rawOutput);
  // accept-edits allows edits unasked: the call runs (in progress) and fails; its run reads once.
  await c.agent.request('session/set_mode', { sessionId, modeId: 'accept-edits' });
  assert.equal((await c.prompt(sessionId, 'one')).stopReason, 'end_turn');
  const id = c.updatesFor(sessionId, 'tool_call')[0].toolCallId;
  assert.deepEqual(c.updatesFor(sessionId, 'tool_call_update').filter((u) => u.toolCallId === id).map((u) => u.status), ['in_progress', 'failed']);
  assert.equal(ended()[0].rawOutput.errorCode, 'tool_failed');
  assert.deepEqual(c.fsCalls.map((f) => f.method), ['read']);
  // In default mode, a call that can succeed is asked and rejected for ever; then the doomed one is
  // refused by that answer, unread, not failed as a call that cannot succeed.
  await c.agent.request('session/set_mode', { sessionId, modeId: 'default' });
  assert.equal((await c.prompt(sessionId, 'two')).stopReason, 'end_turn');
  assert.equal(c.permissions.length, 1);
  assert.deepEqual(ended().slice(1).map((u) => u.rawOutput.errorCode), ['permission_denied', 'permission_denied']);
  assert.deepEqual(c.fsCalls.map((f) => f.method), ['read', 'read'], "only the asked call's preview read");
  // bypass, with that answer remembered: refused still.
  await c.agent.request('session/set_mode', { sessionId, modeId: 'bypass' });
  assert.equal((await c.prompt(sessionId, 'three')).stopReason, 'end_turn');
  assert.deepEqual(ended().slice(3).map((u) => u.rawOutput.errorCode), ['permission_denied']);
  assert.equal(c.permissions.length, 1);
  assert.equal(readFileSync(notes, 'utf8'), 'first\n');
  assert.deepEqual(c.schemaErrors, []);
});
