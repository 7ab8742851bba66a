// A hard link in the workspace to a file outside it: the file is in the workspace by that name, so the
// tools read it, but a write through it must not reach the file outside (spec/tools.md §3.8). Until
// 2026-12-07 a hard-linked file was written in place, and edit_file and write_file changed the
// outside file (a pnpm store's, say) along with the workspace's name of it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, linkSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeWorkspace, run, type Workspace } from './workspace.fixture.js';
import { createWorkspaceTools } from '../../../src/tools/index.js';

let ws: Workspace;
before(() => (ws = makeWorkspace()));
after(() => ws.dispose());

/** A file `name` in the "outside" directory (a sibling of the cwd) and a hard link to it by that name in the cwd. */
function linkedFromOutside(name: string, content: string, mode = 0o644): { outside: string; inside: string } {
  const outside = join(ws.outside, name);
  writeFileSync(outside, content);
  chmodSync(outside, mode);
  const inside = join(ws.cwd, name);
  linkSync(outside, inside);
  return { outside, inside };
}

test('edit_file on a hard link to a file outside changes the workspace name only, and keeps its mode', async () => {
  const host = createWorkspaceTools({ cwd: ws.cwd });
  const { outside, inside } = linkedFromOutside('edited.sh', '#!/bin/sh\necho old\n', 0o750);
  const r = await run(host, 'edit_file', { path: 'edited.sh', old_string: 'old', new_string: 'new' });
  assert.equal(r.isError, false, r.output);
  assert.equal(readFileSync(outside, 'utf8'), '#!/bin/sh\necho old\n', 'the file outside is unchanged');
  assert.equal(readFileSync(inside, 'utf8'), '#!/bin/sh\necho new\n');
  assert.equal(statSync(inside).mode & 0o7777, 0o750);
  assert.equal(statSync(inside).nlink, 1, 'the link is broken');
  assert.equal(statSync(outside).nlink, 1);
});

test('write_file over a hard link to a file outside changes the workspace name only', async () => {
  const host = createWorkspaceTools({ cwd: ws.cwd });
  const { outside, inside } = linkedFromOutside('written.txt', 'outside content, longer than the new one\n');
  const r = await run(host, 'write_file', { path: 'written.txt', content: 'new\n' });
  assert.equal(r.isError, false, r.output);
  assert.equal(r.output, 'Wrote written.txt (4 bytes; replaced the previous content).');
  assert.equal(readFileSync(outside, 'utf8'), 'outside content, longer than the new one\n');
  assert.equal(readFileSync(inside, 'utf8'), 'new\n');
});

test('read_file reads a hard link to a file outside: the name is in the workspace', async () => {
  const host = createWorkspaceTools({ cwd: ws.cwd });
  linkedFromOutside('read.txt', 'shared text\n');
  const r = await run(host, 'read_file', { path: 'read.txt' });
  assert.equal(r.isError, false, r.output);
  assert.equal(r.output, 'shared text\n');
});

test('a hard-linked file that cannot be replaced by a new file is refused, not written in place', async () => {
  const host = createWorkspaceTools({ cwd: ws.cwd });
  // No temporary name fits beside a name this long (.<name>.troupe-<hex>.tmp is over 255 bytes), which
  // holds for root too, unlike a read-only directory.
  const name = `${'n'.repeat(240)}.txt`;
  const { outside, inside } = linkedFromOutside(name, 'old\n');
  const before = readdirSync(ws.cwd).sort();
  for (const r of [
    await run(host, 'write_file', { path: name, content: 'new\n' }),
    await run(host, 'edit_file', { path: name, old_string: 'old', new_string: 'new' }),
  ]) {
    assert.equal(r.errorCode, 'tool_failed', r.output);
    assert.match(r.output, /^Cannot write .*: it has 2 hard links \(other names of the same file, which may lie outside the workspace\), and no new file can be made in its directory \(ENAMETOOLONG\), so it cannot be replaced by a new file; .* Nothing was changed\.$/);
  }
  assert.equal(readFileSync(outside, 'utf8'), 'old\n');
  assert.equal(readFileSync(inside, 'utf8'), 'old\n');
  assert.deepEqual(readdirSync(ws.cwd).sort(), before, 'no temporary file is left');
  // With one link it is written in place, as before: nothing else can see it.
  const single = join(ws.cwd, `${'s'.repeat(240)}.txt`);
  writeFileSync(single, 'old\n');
  const r = await run(host, 'write_file', { path: single, content: 'new\n' });
  assert.equal(r.isError, false, r.output);
  assert.equal(readFileSync(single, 'utf8'), 'new\n');
});
