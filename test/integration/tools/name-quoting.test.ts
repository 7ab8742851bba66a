// A file name holding a newline (or another control character) cannot fake lines in list_dir, glob
// or grep output: it is shown as a JSON string literal, and that literal, as a tool argument, names
// the file.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createWorkspaceTools } from '../../../src/tools/index.js';
import type { ToolHost } from '../../../src/core/ports.js';
import { makeWorkspace, run, type Workspace } from './workspace.fixture.js';

let ws: Workspace;
let host: ToolHost;
const EVIL = 'notes.txt\nsecret.env';

before(() => {
  ws = makeWorkspace();
  host = createWorkspaceTools({ cwd: ws.cwd });
  mkdirSync(join(ws.cwd, 'd'));
  writeFileSync(join(ws.cwd, 'd', EVIL), 'needle\n');
  writeFileSync(join(ws.cwd, 'd', 'plain.txt'), 'needle\n');
  writeFileSync(join(ws.cwd, 'd', '"quoted".txt'), 'needle\n');
});
after(() => ws.dispose());

test('list_dir shows such a name as one quoted entry', async () => {
  const r = await run(host, 'list_dir', { path: 'd' });
  assert.deepEqual(r.output.split('\n'), ['"\\"quoted\\".txt"', '"notes.txt\\nsecret.env"', 'plain.txt']);
});

test('glob and grep show it quoted, on one line', async () => {
  const g = await run(host, 'glob', { pattern: '*', path: 'd' });
  // A path is quoted when it holds a control character or starts with a quote (d/"quoted".txt does not).
  assert.deepEqual(g.output.split('\n').sort(), ['"d/notes.txt\\nsecret.env"', 'd/"quoted".txt', 'd/plain.txt']);
  const m = await run(host, 'grep', { pattern: 'needle', path: 'd' });
  assert.deepEqual(m.output.split('\n').sort(), ['"d/notes.txt\\nsecret.env":1: needle', 'd/"quoted".txt:1: needle', 'd/plain.txt:1: needle']);
});

test('the quoted literal, parsed as JSON (as a tool call\'s arguments are), names the file', async () => {
  const shown = (await run(host, 'list_dir', { path: 'd' })).output.split('\n')[1]!;
  const r = await run(host, 'read_file', { path: `d/${JSON.parse(shown)}` });
  assert.equal(r.isError, false);
  assert.equal(r.output, 'needle\n');
});

test('a refusal names the path it refused on one line too', async () => {
  const r = await run(host, 'read_file', { path: '../elsewhere\nnotes.txt' });
  assert.equal(r.isError, true);
  assert.equal(r.errorCode, 'path_outside_workspace');
  assert.equal(r.output.includes('\n'), false, r.output);
  assert.match(r.output, /^Refused: "\.\.\/elsewhere\\nnotes\.txt" resolves to "[^"]*\\nnotes\.txt", outside the workspace/);
});

test("a name with a bidi override or isolate is quoted too, its character escaped: it cannot read as another name", async () => {
  // Raw, `\u202Etxt.exe` shows as `exe.txt` in a listing, a title or a permission prompt ("Trojan
  // Source"); until 2026-12-07 such a name was shown as it is.
  const spoof = '\u202Etxt.exe';
  mkdirSync(join(ws.cwd, 'bidi'));
  writeFileSync(join(ws.cwd, 'bidi', spoof), 'spoofed\n');
  writeFileSync(join(ws.cwd, 'bidi', 'a\u2066b\u2069.txt'), 'isolated\n');
  const listed = await run(host, 'list_dir', { path: 'bidi' });
  assert.deepEqual(listed.output.split('\n'), ['"a\\u2066b\\u2069.txt"', '"\\u202etxt.exe"']);
  assert.doesNotMatch(listed.output, /[\u202a-\u202e\u2066-\u2069]/);
  assert.equal(host.describe({ id: 'c1', name: 'write_file', input: { path: `bidi/${spoof}`, content: 'x' } }).title, 'Write "bidi/\\u202etxt.exe"');
  const r = await run(host, 'read_file', { path: `bidi/${JSON.parse(listed.output.split('\n')[1]!)}` });
  assert.equal(r.output, 'spoofed\n');
});
