// A file open in the editor but not on disk (a new buffer, not saved yet): with the editor's reads
// offered, read_file and edit_file ask the editor for it rather than answering "File not found"
// without asking; an editor that has no text for it (an error, or the empty buffer an editor makes for
// any path asked) is "File not found" still.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AcpChild } from '../../support/acp-child.js';

const call = (name: string, input: Record<string, unknown>) => ({ tool_call: { name, input } });
const UNSAVED = (name: string) => `[${name} is not on disk: this is the editor's unsaved buffer, which commands, grep and glob do not see]`;

test("a new buffer the editor has not saved is read and edited through the editor; a path it has no text for is not found", async (t) => {
  const cwd = mkdtempSync(join(tmpdir(), 'troupe-ws-'));
  const steps = [
    call('read_file', { path: 'new.txt' }),
    call('edit_file', { path: 'new.txt', old_string: 'draft', new_string: 'final' }),
    call('read_file', { path: 'new.txt', offset: 5 }),
    call('read_file', { path: 'missing.txt' }),
    call('read_file', { path: 'ghost.txt' }),
    call('edit_file', { path: 'ghost.txt', old_string: 'a', new_string: 'b' }),
  ];
  const c = AcpChild.start({ script: { replies: [...steps.map((s) => [s]), [{ text: 'done' }]] } });
  t.after(() => c.close());
  await c.initialize({ fs: { readTextFile: true, writeTextFile: true } });
  const sessionId = await c.newSession(cwd);
  await c.agent.request('session/set_mode', { sessionId, modeId: 'bypass' });
  c.buffers.set(join(cwd, 'new.txt'), 'draft line\nsecond\n');
  // As Zed answers a read of any missing path: an empty new buffer.
  c.readAnswers.set(join(cwd, 'ghost.txt'), { content: '' });
  assert.equal((await c.prompt(sessionId, 'go')).stopReason, 'end_turn');
  const ended = c.updatesFor(sessionId, 'tool_call_update').filter((u) => u.rawOutput);
  assert.deepEqual(
    ended.map((u) => [u.status, u.rawOutput.output]),
    [
      ['completed', `draft line\nsecond\n\n${UNSAVED('new.txt')}`],
      ['completed', 'Edited new.txt: replaced 1 occurrence of old_string (first at line 1).'],
      ['completed', `[new.txt has fewer than 5 lines]\n${UNSAVED('new.txt')}`],
      ['failed', `File not found: missing.txt (nothing is on disk there, and the editor gave no text for it: Internal error: ENOENT: no such file or directory, open '${join(cwd, 'missing.txt')}')`],
      ['failed', 'File not found: ghost.txt (nothing is on disk there, and the editor has no text for it)'],
      ['failed', 'File not found: ghost.txt (nothing is on disk there, and the editor has no text for it)'],
    ],
  );
  assert.deepEqual(ended.slice(3).map((u) => u.rawOutput.errorCode), ['tool_failed', 'tool_failed', 'tool_failed']);
  assert.equal(c.buffers.get(join(cwd, 'new.txt')), 'final line\nsecond\n', 'the edit landed in the buffer');
  assert.ok(!existsSync(join(cwd, 'new.txt')) && !existsSync(join(cwd, 'ghost.txt')), 'nothing written to the disk');
  assert.deepEqual(c.schemaErrors, []);
});

test('without the editor\'s reads, a path with nothing on disk is "File not found" as before, and the editor is not asked', async (t) => {
  const cwd = mkdtempSync(join(tmpdir(), 'troupe-ws-'));
  const c = AcpChild.start({ script: { replies: [[call('read_file', { path: 'new.txt' })], [call('edit_file', { path: 'new.txt', old_string: 'a', new_string: 'b' })], [{ text: 'done' }]] } });
  t.after(() => c.close());
  await c.initialize({ fs: { writeTextFile: true } });
  const sessionId = await c.newSession(cwd);
  await c.agent.request('session/set_mode', { sessionId, modeId: 'bypass' });
  c.buffers.set(join(cwd, 'new.txt'), 'draft\n');
  assert.equal((await c.prompt(sessionId, 'go')).stopReason, 'end_turn');
  const ended = c.updatesFor(sessionId, 'tool_call_update').filter((u) => u.rawOutput);
  assert.deepEqual(ended.map((u) => [u.status, u.rawOutput.output]), [['failed', 'File not found: new.txt'], ['failed', 'File not found: new.txt']]);
  assert.deepEqual(c.fsCalls, []);
  assert.deepEqual(c.schemaErrors, []);
});
