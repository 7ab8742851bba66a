// A file name that is not UTF-8 (Linux allows any bytes in a name): list_dir says so and gives a name
// run_command can use; a file tool given the U+FFFD reading of that name is told why it finds nothing
// (tool_failed), not merely "not found".
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createWorkspaceTools } from '../../../src/tools/index.js';
import type { ToolHost } from '../../../src/core/ports.js';
import { makeWorkspace, run, type Workspace } from './workspace.fixture.js';

let ws: Workspace;
let host: ToolHost;
// "caf" + 0xE9 (é in Latin-1) + ".txt": not UTF-8. Read as UTF-8 it is "caf\uFFFD.txt".
const LATIN1 = Buffer.concat([Buffer.from('caf'), Buffer.from([0xe9]), Buffer.from('.txt')]);
const DIR = Buffer.concat([Buffer.from('d'), Buffer.from([0xff])]);

before(() => {
  ws = makeWorkspace();
  host = createWorkspaceTools({ cwd: ws.cwd });
  mkdirSync(join(ws.cwd, 'd'));
  writeFileSync(Buffer.concat([Buffer.from(join(ws.cwd, 'd') + '/'), LATIN1]), 'latin-1\n');
  writeFileSync(join(ws.cwd, 'd', 'plain.txt'), 'plain\n');
  mkdirSync(Buffer.concat([Buffer.from(join(ws.cwd, 'd') + '/'), DIR]));
  writeFileSync(Buffer.concat([Buffer.from(join(ws.cwd, 'd') + '/'), DIR, Buffer.from('/inner.txt')]), 'inner\n');
});
after(() => ws.dispose());

test('list_dir marks a name that is not UTF-8, and the name it gives run_command names the file', async () => {
  const r = await run(host, 'list_dir', { path: 'd' });
  assert.equal(r.isError, false, r.output);
  const lines = r.output.split('\n');
  assert.deepEqual(lines.map((l) => l.split('  [')[0]), ['caf\uFFFD.txt', 'd\uFFFD/', 'plain.txt']);
  assert.equal(lines[0], `caf\uFFFD.txt  [name not UTF-8: the file tools cannot open it; in run_command it is "$(printf 'caf\\351.txt')"]`);
  assert.equal(lines[1], `d\uFFFD/  [name not UTF-8: the file tools cannot open it; in run_command it is "$(printf 'd\\377')"]`);
  const word = lines[0]!.match(/it is (".*")\]$/)![1]!;
  const cat = await run(host, 'run_command', { command: `cat d/${word}` });
  assert.match(cat.output, /^latin-1\n/);
});

test('read_file, edit_file, list_dir, glob and grep given the U+FFFD reading of such a name: tool_failed saying the name is not UTF-8 and how run_command names it, not a bare "not found"', async () => {
  for (const [tool, input] of [
    ['read_file', { path: 'd/caf\uFFFD.txt' }],
    ['edit_file', { path: 'd/caf\uFFFD.txt', old_string: 'latin', new_string: 'x' }],
    ['read_file', { path: 'd/d\uFFFD/inner.txt' }],
    ['list_dir', { path: 'd/d\uFFFD' }],
    ['glob', { pattern: '*', path: 'd/d\uFFFD' }],
    ['grep', { pattern: 'inner', path: 'd/d\uFFFD' }],
  ] as const) {
    const r = await run(host, tool, input);
    assert.equal(r.isError, true, `${tool} ${input.path}`);
    assert.equal(r.errorCode, 'tool_failed');
    assert.match(r.output, /is not UTF-8 .*the file tools only take UTF-8 names\. In run_command it is "\$\(printf '(caf\\351\.txt|d\\377)'\)"\./, `${tool}: ${r.output}`);
  }
  // A missing name with U+FFFD in it that reads no name there is plainly not found.
  const missing = await run(host, 'read_file', { path: 'd/caf\uFFFD\uFFFD.txt' });
  assert.match(missing.output, /^File not found/);
});

test('write_file given the U+FFFD reading of such a name: tool_failed as read_file says, and no second file named with U+FFFD', async () => {
  for (const path of ['d/caf\uFFFD.txt', 'd/d\uFFFD/inner.txt', 'd/d\uFFFD/new/new.txt']) {
    const r = await run(host, 'write_file', { path, content: 'replaced\n' });
    assert.equal(r.isError, true, `${path}: ${r.output}`);
    assert.equal(r.errorCode, 'tool_failed');
    assert.match(r.output, /is not UTF-8 .*the file tools only take UTF-8 names\. In run_command it is "\$\(printf '(caf\\351\.txt|d\\377)'\)"\./, r.output);
  }
  assert.deepEqual(readdirSync(join(ws.cwd, 'd'), { encoding: 'buffer' }).map((n) => n.toString('latin1')).sort(), ['caf\u00e9.txt', 'd\u00ff', 'plain.txt']);
  assert.equal(readFileSync(Buffer.concat([Buffer.from(join(ws.cwd, 'd') + '/'), LATIN1]), 'utf8'), 'latin-1\n');
});

const NOTE = (word: string) => `  [name not UTF-8: the file tools cannot open it; in run_command it is "$(printf '${word}')"]`;

test('glob lists a path with a name that is not UTF-8 (also below such a directory) marked as list_dir marks it, with a word run_command opens', async () => {
  const r = await run(host, 'glob', { pattern: '*.txt', path: 'd' });
  assert.equal(r.isError, false, r.output);
  const lines = r.output.split('\n');
  assert.deepEqual(lines, [`d/caf\uFFFD.txt${NOTE('d/caf\\351.txt')}`, `d/d\uFFFD/inner.txt${NOTE('d/d\\377/inner.txt')}`, 'd/plain.txt']);
  const word = lines[1]!.match(/it is (".*")\]$/)![1]!;
  const cat = await run(host, 'run_command', { command: `cat ${word}` });
  assert.match(cat.output, /^inner\n/);
});

test('glob below a directory whose name is not UTF-8 keeps to its .gitignore and lists a symlink there whose name is not UTF-8', async () => {
  const e = Buffer.concat([Buffer.from(ws.cwd + '/e'), Buffer.from([0xff])]);
  const at = (name: string | Buffer) => Buffer.concat([e, Buffer.from('/'), Buffer.from(name)]);
  mkdirSync(e);
  writeFileSync(at('.gitignore'), 'skip.txt\n');
  writeFileSync(at('skip.txt'), 'ignored\n');
  writeFileSync(at('keep.txt'), 'kept\n');
  symlinkSync('keep.txt', at(Buffer.concat([Buffer.from('lnk'), Buffer.from([0xfe]), Buffer.from('.txt')])));
  const r = await run(host, 'glob', { pattern: 'e*/*.txt' });
  assert.deepEqual(r.output.split('\n'), [`e\uFFFD/keep.txt${NOTE('e\\377/keep.txt')}`, `e\uFFFD/lnk\uFFFD.txt${NOTE('e\\377/lnk\\376.txt')}`]);
});

test('grep searches files whose names are not UTF-8 (also below such a directory) and names them marked so, once each, after the matches', async () => {
  const r = await run(host, 'grep', { pattern: 'latin|inner', path: 'd' });
  assert.equal(r.isError, false, r.output);
  assert.deepEqual(r.output.split('\n'), [
    'd/caf\uFFFD.txt:1: latin-1',
    'd/d\uFFFD/inner.txt:1: inner',
    `d/caf\uFFFD.txt${NOTE('d/caf\\351.txt')}`,
    `d/d\uFFFD/inner.txt${NOTE('d/d\\377/inner.txt')}`,
  ]);
  // A file searched but not matched is not named.
  const plain = await run(host, 'grep', { pattern: 'plain', path: 'd' });
  assert.equal(plain.output, 'd/plain.txt:1: plain');
});
