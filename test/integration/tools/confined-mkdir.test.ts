// write_file's missing parent directories are made only in directories that are inside the workspace
// when they are opened: a symlink swapped in for an ancestor after the guard's check (by another
// process) must not lead mkdir outside. Each test puts the workspace in the state such a swap leaves:
// a path that passed the guard now leads outside (as confined-open.test.ts does for files). Until
// 2026-12-07 a plain recursive mkdir made the directories wherever the link pointed. (Linux: /proc.)
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeDirectories } from '../../../src/tools/confined-mkdir.js';
import { isWithin } from '../../../src/tools/path-guard.js';
import { createWorkspaceTools } from '../../../src/tools/index.js';
import { makeWorkspace, run, type Workspace } from './workspace.fixture.js';

let ws: Workspace;
before(() => (ws = makeWorkspace()));
after(() => ws.dispose());

const confine = (real: string) => isWithin(ws.cwd, real);

test('a swapped ancestor that now leads outside: refused, and nothing made there', async () => {
  const outsideBefore = readdirSync(ws.outside).sort();
  // The link is the deepest existing ancestor.
  symlinkSync(ws.outside, join(ws.cwd, 'swapped'));
  await assert.rejects(makeDirectories(join(ws.cwd, 'swapped/a/b'), confine), { code: 'path_outside_workspace', message: /^Refused: creating .*\/ws\/swapped\/a\/b, .*\/ws\/swapped led to .*\/outside, outside the workspace .*nothing was created there\.$/ });
  // The link higher up, with a directory that exists below it (outside).
  mkdirSync(join(ws.outside, 'deep'));
  mkdirSync(join(ws.cwd, 'real'));
  symlinkSync(ws.outside, join(ws.cwd, 'real/link'));
  await assert.rejects(makeDirectories(join(ws.cwd, 'real/link/deep/c/d'), confine), { code: 'path_outside_workspace' });
  assert.deepEqual(readdirSync(ws.outside).sort(), [...outsideBefore, 'deep'].sort());
  assert.deepEqual(readdirSync(join(ws.outside, 'deep')), [], 'nothing was made outside');
});

test('inside, the levels are made, through a symlink that stays inside too', async () => {
  await makeDirectories(join(ws.cwd, 'new/a/b'), confine);
  assert.ok(statSync(join(ws.cwd, 'new/a/b')).isDirectory());
  symlinkSync('new', join(ws.cwd, 'to-new'));
  await makeDirectories(join(ws.cwd, 'to-new/a/c/d'), confine);
  assert.ok(statSync(join(ws.cwd, 'new/a/c/d')).isDirectory());
  // Already there: nothing to do.
  await makeDirectories(join(ws.cwd, 'new/a/b'), confine);
});

test('errors name the path, not the descriptor it was made through', async () => {
  writeFileSync(join(ws.cwd, 'a-file'), 'x');
  await assert.rejects(makeDirectories(join(ws.cwd, 'a-file/sub'), confine), { code: 'ENOTDIR' });
  // A dangling symlink on the way: its open fails, and the message names it, never /proc/self/fd.
  symlinkSync('nowhere', join(ws.cwd, 'dangling'));
  await assert.rejects(makeDirectories(join(ws.cwd, 'dangling/sub'), confine), (err: NodeJS.ErrnoException) => {
    assert.equal(err.code, 'ENOENT');
    assert.equal(err.message, `ENOENT: no such file or directory, open '${join(ws.cwd, 'dangling')}'`);
    return true;
  });
});

test('write_file still makes missing directories, and names a file in the way', async () => {
  const host = createWorkspaceTools({ cwd: ws.cwd });
  const r = await run(host, 'write_file', { path: 'made/x/y/f.txt', content: 'f\n' });
  assert.equal(r.output, 'Created made/x/y/f.txt (2 bytes).');
  const blocked = await run(host, 'write_file', { path: 'a-file/sub/f.txt', content: 'f\n' });
  assert.equal(blocked.output, 'Cannot create a-file/sub/f.txt: a-file is not a directory (a file is in the way); nothing was written.');
  const dangling = await run(host, 'write_file', { path: 'dangling/sub/f.txt', content: 'f\n' });
  assert.equal(dangling.output, 'Cannot create dangling/sub/f.txt: dangling is not a directory (a symbolic link that does not lead to a directory); nothing was written.');
  assert.equal(existsSync(join(ws.outside, 'made')), false);
});
