// A path too long for the system (a name over 255 bytes, a path over 4095, or a real path made too
// long by a symlink) is refused with a short message that says which part is too long; the system's
// own "ENAMETOOLONG: name too long, realpath '<the whole path>'" repeated thousands of characters.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { createWorkspaceTools } from '../../../src/tools/index.js';
import { fileError } from '../../../src/tools/tool.js';
import type { ToolHost } from '../../../src/core/ports.js';
import { makeWorkspace, run, type Workspace } from './workspace.fixture.js';

let ws: Workspace;
let host: ToolHost;
before(() => {
  ws = makeWorkspace();
  host = createWorkspaceTools({ cwd: ws.cwd });
});
after(() => ws.dispose());

/** Every tool that takes a path, given `path`. */
const callsWith = (path: string): Array<[string, Record<string, unknown>]> => [
  ['read_file', { path }],
  ['write_file', { path, content: 'x' }],
  ['edit_file', { path, old_string: 'a', new_string: 'b' }],
  ['list_dir', { path }],
  ['glob', { pattern: '*', path }],
  ['grep', { pattern: 'x', path }],
  ['run_command', { command: 'true', cwd: path }],
];

test('a path over 4095 bytes is refused by every tool with its length, not repeated whole', async () => {
  // Under the tools' 4096 characters (a longer path is refused by the input schema, before any
  // file system call), over 4095 bytes: 21 names of 100 two-byte characters, each under 255 bytes.
  const path = `${`${'é'.repeat(100)}/`.repeat(21)}b.txt`;
  const bytes = Buffer.byteLength(join(ws.cwd, path));
  for (const [name, input] of callsWith(path)) {
    const r = await run(host, name, input);
    assert.deepEqual([r.isError, r.errorCode], [true, 'tool_failed'], `${name}: ${r.output}`);
    assert.equal(r.output, `Cannot use ${'é'.repeat(60)}… (${path.length} characters): the path is ${bytes} bytes long, over the 4095-byte limit for a path (ENAMETOOLONG). Use a shorter path.`, name);
  }
  assert.deepEqual(readdirSync(ws.cwd), [], 'nothing was created');
});

test('a name over 255 bytes is refused, naming the start of that name', async () => {
  const name = 'é'.repeat(130); // 130 characters, 260 bytes
  for (const [tool, input] of callsWith(`dir/${name}`)) {
    const r = await run(host, tool, input);
    assert.deepEqual([r.isError, r.errorCode], [true, 'tool_failed'], `${tool}: ${r.output}`);
    assert.equal(
      r.output,
      `Cannot use dir/${'é'.repeat(56)}… (134 characters): its name ${'é'.repeat(60)}… (130 characters) is 260 bytes long, over the 255-byte limit for one name (ENAMETOOLONG). Use a shorter path.`,
      tool,
    );
  }
  // At the limit, a name is fine.
  const fits = await run(host, 'write_file', { path: `dir/${'é'.repeat(127)}x`, content: 'ok' });
  assert.equal(fits.isError, false, fits.output);
});

test('a short path whose real path is too long (through a symlink) gets the same short message', async () => {
  // A directory whose real path is 4000 bytes, reached through a short link in the workspace.
  let deep = join(ws.root, ...Array<string>(Math.floor((4000 - ws.root.length) / 201)).fill('d'.repeat(200)));
  if (deep.length < 3999) deep = join(deep, 'p'.repeat(3999 - deep.length));
  assert.equal(deep.length, 4000);
  mkdirSync(deep, { recursive: true });
  symlinkSync(deep, join(ws.cwd, 'deep'));
  const hostWithDeep = createWorkspaceTools({ cwd: ws.cwd, additionalDirectories: [ws.root] });
  const path = `deep/${'e'.repeat(200)}/f.txt`;
  assert.ok(Buffer.byteLength(join(deep, path.slice('deep/'.length))) > 4095);
  for (const tool of ['read_file', 'write_file'] as const) {
    const r = await run(hostWithDeep, tool, tool === 'read_file' ? { path } : { path, content: 'x' });
    assert.deepEqual([r.isError, r.errorCode], [true, 'tool_failed'], `${tool}: ${r.output}`);
    assert.equal(r.output, `Cannot use deep/${'e'.repeat(55)}… (211 characters): the path (its symbolic links followed), or one of its names, is longer than the file system allows (ENAMETOOLONG). Use a shorter path.`);
  }
});

test("a file operation's ENAMETOOLONG (a system with lower limits) is reported so too", () => {
  const shown = 'x'.repeat(2000);
  const err = fileError(Object.assign(new Error(`ENAMETOOLONG: name too long, open '/w/${shown}'`), { code: 'ENAMETOOLONG' }), shown);
  assert.equal(err.code, 'tool_failed');
  assert.equal(err.message, `Cannot use ${'x'.repeat(60)}… (2000 characters): the path (its symbolic links followed), or one of its names, is longer than the file system allows (ENAMETOOLONG). Use a shorter path.`);
  assert.deepEqual(err.data, { path: `${'x'.repeat(60)}… (2000 characters)`, errno: 'ENAMETOOLONG' });
});
