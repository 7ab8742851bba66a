// A workspace root reached through a symlink whose target climbs out of another symlink
// (`ws -> link/..`, `link -> far/away`): the kernel resolves `link` first and then `..`, so the
// workspace is `far`. The guard takes a root by the real path the kernel gives, as it takes every
// path it checks (spec/tools.md §3): until 2026-12-07 the roots were resolved by Node's JavaScript
// realpathSync, which drops `link/..` as text, so the root was the directory holding the links:
// files beside the workspace were let in, and the workspace's own files refused.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from './workspace.fixture.js';
import { createWorkspaceTools } from '../../../src/tools/index.js';

let top: string;
before(() => {
  top = realpathSync(mkdtempSync(join(tmpdir(), 'troupe-root-link-')));
  mkdirSync(join(top, 'far/away'), { recursive: true });
  writeFileSync(join(top, 'far/inside.txt'), 'inside\n');
  writeFileSync(join(top, 'beside.txt'), 'beside the workspace\n');
  symlinkSync(join(top, 'far/away'), join(top, 'link'));
  symlinkSync('link/..', join(top, 'ws'));
});
after(() => rmSync(top, { recursive: true, force: true }));

test('a root whose symlink climbs out of another symlink is where the kernel says: files beside it are outside', async () => {
  const host = createWorkspaceTools({ cwd: join(top, 'ws') });
  const inside = await run(host, 'read_file', { path: 'inside.txt' });
  assert.equal(inside.output, 'inside\n');
  const beside = await run(host, 'read_file', { path: join(top, 'beside.txt') });
  assert.equal(beside.errorCode, 'path_outside_workspace', beside.output);
  const written = await run(host, 'write_file', { path: join(top, 'new.txt'), content: 'x' });
  assert.equal(written.errorCode, 'path_outside_workspace', written.output);
});

test('an additional directory reached so is where the kernel says: its files are inside', async () => {
  // `extra -> deep/link2/..`, `deep/link2 -> elsewhere/sub`: the kernel's extra is `elsewhere`.
  mkdirSync(join(top, 'deep'));
  mkdirSync(join(top, 'elsewhere/sub'), { recursive: true });
  writeFileSync(join(top, 'elsewhere/file.txt'), 'in the additional directory\n');
  symlinkSync(join(top, 'elsewhere/sub'), join(top, 'deep/link2'));
  symlinkSync('deep/link2/..', join(top, 'extra'));
  const host = createWorkspaceTools({ cwd: join(top, 'far'), additionalDirectories: [join(top, 'extra')] });
  const r = await run(host, 'read_file', { path: join(top, 'extra/file.txt') });
  assert.equal(r.isError, false, r.output);
  assert.equal(r.output, 'in the additional directory\n');
});
