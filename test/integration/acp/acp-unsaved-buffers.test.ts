// A file open in the editor but not on disk (a new buffer, not saved yet): with the editor's reads
// offered, read_file and edit_file ask the editor for it rather than answering "File not found"
// without asking; an editor that has no text for it (an error, or the empty buffer an editor makes for
// any path asked) is "File not found" still. write_file asks too, so that its diff shows the text it
// replaces; and an editor that takes no writes has neither tool write such a path to the disk, nor
// a file on disk whose text in the editor is not the disk's (unsaved changes).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
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

test('without the editor\'s reads, a path with nothing on disk is "File not found" as before, and the editor is not asked for it (write_file only writes it)', async (t) => {
  const cwd = mkdtempSync(join(tmpdir(), 'troupe-ws-'));
  const steps = [call('read_file', { path: 'new.txt' }), call('edit_file', { path: 'new.txt', old_string: 'a', new_string: 'b' }), call('write_file', { path: 'other.txt', content: 'x' })];
  const c = AcpChild.start({ script: { replies: [...steps.map((s) => [s]), [{ text: 'done' }]] } });
  t.after(() => c.close());
  await c.initialize({ fs: { writeTextFile: true } });
  const sessionId = await c.newSession(cwd);
  await c.agent.request('session/set_mode', { sessionId, modeId: 'bypass' });
  c.buffers.set(join(cwd, 'new.txt'), 'draft\n');
  assert.equal((await c.prompt(sessionId, 'go')).stopReason, 'end_turn');
  const ended = c.updatesFor(sessionId, 'tool_call_update').filter((u) => u.rawOutput);
  assert.deepEqual(ended.map((u) => [u.status, u.rawOutput.output]), [['failed', 'File not found: new.txt'], ['failed', 'File not found: new.txt'], ['completed', 'Created other.txt (1 bytes).']]);
  assert.deepEqual(c.fsCalls, [{ method: 'write', path: join(cwd, 'other.txt') }]);
  assert.deepEqual(c.schemaErrors, []);
});

test("write_file over a path that is only an unsaved buffer asks the editor for it: the prompt's diff replaces the buffer's text; no buffer (an empty one, a refusal) or one over maxFileBytes is shown as new, as before", async (t) => {
  const cwd = mkdtempSync(join(tmpdir(), 'troupe-ws-'));
  const big = 'b'.repeat(10 * 1024 * 1024 + 1);
  const steps = ['new.txt', 'ghost.txt', 'missing.txt', 'big.txt'].map((path) => call('write_file', { path, content: 'replaced\n' }));
  const c = AcpChild.start({ script: { replies: [...steps.map((s) => [s]), [{ text: 'done' }]] } });
  t.after(() => c.close());
  await c.initialize({ fs: { readTextFile: true, writeTextFile: true } });
  const sessionId = await c.newSession(cwd);
  c.buffers.set(join(cwd, 'new.txt'), 'draft line\nsecond\n');
  c.buffers.set(join(cwd, 'big.txt'), big);
  c.readAnswers.set(join(cwd, 'ghost.txt'), { content: '' });
  assert.equal((await c.prompt(sessionId, 'go')).stopReason, 'end_turn');
  // What the person was asked to allow (the permission's diff), and what the call's result shows.
  const diffOf = (content: any[] | null | undefined) => content?.map((x) => [x.oldText, x.newText]);
  assert.deepEqual(c.permissions.map((p) => diffOf(p.toolCall.content)), [
    [['draft line\nsecond\n', 'replaced\n']],
    [[null, 'replaced\n']],
    [[null, 'replaced\n']],
    [[null, 'replaced\n']],
  ]);
  const ended = c.updatesFor(sessionId, 'tool_call_update').filter((u) => u.rawOutput);
  assert.deepEqual(ended.map((u) => [u.status, u.rawOutput.output]), [
    ['completed', "Wrote new.txt (9 bytes; replaced the editor's unsaved buffer)."],
    ['completed', 'Created ghost.txt (9 bytes).'],
    ['completed', 'Created missing.txt (9 bytes).'],
    ['completed', "Wrote big.txt (9 bytes; replaced the editor's unsaved buffer)."],
  ]);
  assert.deepEqual(diffOf(ended[0].content), [['draft line\nsecond\n', 'replaced\n']]);
  for (const path of ['new.txt', 'ghost.txt', 'missing.txt', 'big.txt']) assert.equal(c.buffers.get(join(cwd, path)), 'replaced\n', path);
  // Each path read by the preview and again by the run, then written: the editor answers for the buffer.
  assert.deepEqual(c.fsCalls.map((f) => f.method), ['read', 'read', 'write', 'read', 'read', 'write', 'read', 'read', 'write', 'read', 'read', 'write']);
  assert.deepEqual(c.schemaErrors, []);
});

test('write_file of a path with nothing on disk, whose read the editor leaves unanswered: the call fails tool_timeout, nothing written, since what it would replace is not known', async (t) => {
  const cwd = mkdtempSync(join(tmpdir(), 'troupe-ws-'));
  const c = AcpChild.start({ script: { replies: [[call('write_file', { path: 'new.txt', content: 'x' })], [{ text: 'done' }]] }, env: { TROUPE_CLIENT_ANSWER_TIMEOUT_MS: '300' } });
  t.after(() => c.close());
  c.unanswered.methods.add('fs/read_text_file');
  await c.initialize({ fs: { readTextFile: true, writeTextFile: true } });
  const sessionId = await c.newSession(cwd);
  await c.agent.request('session/set_mode', { sessionId, modeId: 'bypass' });
  assert.equal((await c.prompt(sessionId, 'go')).stopReason, 'end_turn');
  const ended = c.updatesFor(sessionId, 'tool_call_update').filter((u) => u.rawOutput);
  assert.deepEqual(ended.map((u) => [u.status, u.rawOutput.errorCode]), [['failed', 'tool_timeout']]);
  assert.deepEqual(c.fsCalls, [{ method: 'read', path: join(cwd, 'new.txt') }], 'no write asked');
  assert.ok(!existsSync(join(cwd, 'new.txt')));
  assert.deepEqual(c.schemaErrors, []);
});

test("an editor that reads its buffers but takes no writes: edit_file and write_file of a path that is only its unsaved buffer are refused, nothing written; once saved, the edit lands on disk", async (t) => {
  const cwd = mkdtempSync(join(tmpdir(), 'troupe-ws-'));
  const steps = [
    call('edit_file', { path: 'new.txt', old_string: 'draft', new_string: 'final' }),
    call('write_file', { path: 'new.txt', content: 'replaced\n' }),
  ];
  const c = AcpChild.start({ script: { replies: [...steps.map((s) => [s]), [{ text: 'done' }], [steps[0]], [{ text: 'done again' }]] } });
  t.after(() => c.close());
  await c.initialize({ fs: { readTextFile: true } });
  const sessionId = await c.newSession(cwd);
  await c.agent.request('session/set_mode', { sessionId, modeId: 'bypass' });
  const path = join(cwd, 'new.txt');
  c.buffers.set(path, 'draft line\n');
  assert.equal((await c.prompt(sessionId, 'go')).stopReason, 'end_turn');
  const ended = () => c.updatesFor(sessionId, 'tool_call_update').filter((u) => u.rawOutput);
  const refused = (verb: string, what: string) =>
    `Cannot ${verb} new.txt: it is only an unsaved buffer in the editor (nothing is on disk), and this editor takes no writes from troupe (it offers fs/read_text_file, not fs/write_text_file), so the ${what} would make a file on disk that the unsaved buffer conflicts with. Ask the person to save the file first; nothing was written.`;
  assert.deepEqual(ended().map((u) => [u.status, u.rawOutput.errorCode, u.rawOutput.output]), [
    ['failed', 'tool_failed', refused('edit', 'edit')],
    ['failed', 'tool_failed', refused('write', 'write')],
  ]);
  assert.ok(!existsSync(path), 'nothing written to the disk');
  assert.equal(c.buffers.get(path), 'draft line\n', 'the buffer as the person left it');
  // The person saves the buffer: the file is on disk, and the edit goes there as for any file.
  writeFileSync(path, c.buffers.get(path)!);
  c.buffers.delete(path);
  assert.equal((await c.prompt(sessionId, 'again')).stopReason, 'end_turn');
  assert.deepEqual(ended().slice(2).map((u) => [u.status, u.rawOutput.output]), [['completed', 'Edited new.txt: replaced 1 occurrence of old_string (first at line 1).']]);
  assert.equal(readFileSync(path, 'utf8'), 'final line\n');
  assert.deepEqual(c.schemaErrors, []);
});

test("an editor that reads its buffers but takes no writes: edit_file and write_file of a file on disk with unsaved changes in the editor are refused, nothing written (the changes not saved behind the person's back); a file open clean is edited and written on disk, the diff its text", async (t) => {
  const cwd = mkdtempSync(join(tmpdir(), 'troupe-ws-'));
  const dirty = join(cwd, 'dirty.txt');
  const clean = join(cwd, 'clean.txt');
  const open = join(cwd, 'open.txt');
  const big = join(cwd, 'big.txt');
  const huge = join(cwd, 'huge.txt');
  const hugeText = 'h'.repeat(10 * 1024 * 1024 + 1);
  writeFileSync(huge, hugeText);
  const grown = join(cwd, 'grown.txt');
  writeFileSync(grown, 'small\n');
  writeFileSync(dirty, 'on disk\n');
  writeFileSync(clean, 'saved line\n');
  writeFileSync(open, 'open line\n');
  writeFileSync(big, 'b'.repeat(10 * 1024 * 1024 + 1));
  const steps = [
    call('edit_file', { path: 'dirty.txt', old_string: 'on disk', new_string: 'edited' }),
    call('write_file', { path: 'dirty.txt', content: 'replaced\n' }),
    // Over maxFileBytes on disk, and not in the editor: the two differ, whatever is in them.
    call('write_file', { path: 'big.txt', content: 'replaced\n' }),
    // The other way round: over it in the editor only.
    call('write_file', { path: 'grown.txt', content: 'replaced\n' }),
    // Over it in both: not compared (as it is not shown), written as before.
    call('write_file', { path: 'huge.txt', content: 'replaced\n' }),
    call('edit_file', { path: 'clean.txt', old_string: 'saved', new_string: 'edited' }),
    call('write_file', { path: 'open.txt', content: 'rewritten\n' }),
  ];
  const c = AcpChild.start({ script: { replies: [...steps.map((s) => [s]), [{ text: 'done' }]] } });
  t.after(() => c.close());
  await c.initialize({ fs: { readTextFile: true } });
  const sessionId = await c.newSession(cwd);
  // The person's unsaved changes: the editor answers reads with its buffer, not the disk.
  c.buffers.set(dirty, 'on disk\nunsaved line\n');
  c.buffers.set(big, 'small\n');
  c.buffers.set(grown, hugeText);
  c.buffers.set(huge, hugeText);
  // Open and saved: the editor's text is the disk's. (This editor would reload them from the disk once
  // written; the fake does not, so each is written once.)
  c.buffers.set(clean, 'saved line\n');
  c.buffers.set(open, 'open line\n');
  assert.equal((await c.prompt(sessionId, 'go')).stopReason, 'end_turn');
  const refused = (verb: string, name: string) =>
    `Cannot ${verb} ${name}: it has unsaved changes in the editor (its text there is not the file's on disk), and this editor takes no writes from troupe (it offers fs/read_text_file, not fs/write_text_file), so the ${verb} would go to the disk under them: the changes would be saved behind the person's back, or lost, and the editor's buffer would conflict with the file. Ask the person to save (or discard) their changes first; nothing was written.`;
  const ended = c.updatesFor(sessionId, 'tool_call_update').filter((u) => u.rawOutput);
  assert.deepEqual(ended.map((u) => [u.status, u.rawOutput.errorCode, u.rawOutput.output]), [
    ['failed', 'tool_failed', refused('edit', 'dirty.txt')],
    ['failed', 'tool_failed', refused('write', 'dirty.txt')],
    ['failed', 'tool_failed', refused('write', 'big.txt')],
    ['failed', 'tool_failed', refused('write', 'grown.txt')],
    ['completed', undefined, 'Wrote huge.txt (9 bytes; replaced the previous content).'],
    ['completed', undefined, 'Edited clean.txt: replaced 1 occurrence of old_string (first at line 1).'],
    ['completed', undefined, 'Wrote open.txt (10 bytes; replaced the previous content).'],
  ]);
  assert.equal(readFileSync(dirty, 'utf8'), 'on disk\n', 'the disk as it was: the unsaved changes not saved');
  assert.equal(c.buffers.get(dirty), 'on disk\nunsaved line\n', 'the buffer as the person left it');
  assert.equal(readFileSync(big, 'utf8').length, 10 * 1024 * 1024 + 1);
  assert.equal(readFileSync(grown, 'utf8'), 'small\n');
  // The refused calls were not put to the person (their preview said they cannot succeed; until
  // 2026-12-07 each was asked, with no diff); the clean ones were, with the text that went to the disk.
  const diffOf = (content: any[] | null | undefined) => content?.map((x) => [x.oldText, x.newText]);
  assert.deepEqual(c.permissions.map((p) => diffOf(p.toolCall.content)), [
    [[null, 'replaced\n']],
    [['saved line\n', 'edited line\n']],
    [['open line\n', 'rewritten\n']],
  ]);
  assert.equal(readFileSync(clean, 'utf8'), 'edited line\n');
  assert.equal(readFileSync(open, 'utf8'), 'rewritten\n');
  assert.ok(c.fsCalls.every((f) => f.method === 'read'), 'no fs/write_text_file: the editor did not offer it');
  assert.deepEqual(c.schemaErrors, []);
});
