// makeDirs (src/store/paths.ts): mkdir -p one directory at a time, because Node's recursive
// mkdirSync never returns for a path under /proc.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeDirs } from '../../../src/store/paths.js';

test('makes the missing chain with the mode, and takes a directory that exists', (t) => {
  const root = mkdtempSync(join(tmpdir(), 'troupe-make-dirs-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const deep = join(root, 'a', 'b', 'c');
  makeDirs(deep, 0o700);
  for (const dir of [join(root, 'a'), join(root, 'a', 'b'), deep]) assert.equal(statSync(dir).mode & 0o777, 0o700, dir);
  makeDirs(deep, 0o700);
  assert.ok(existsSync(deep));
});

test('a file in the way fails EEXIST (as mkdir), one on the chain ENOTDIR', (t) => {
  const root = mkdtempSync(join(tmpdir(), 'troupe-make-dirs-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const file = join(root, 'file');
  writeFileSync(file, '');
  assert.throws(() => makeDirs(file), { code: 'EEXIST' });
  assert.throws(() => makeDirs(join(file, 'below')), { code: 'ENOTDIR' });
});

test('a path under /proc fails ENOENT, and returns (Node\'s recursive mkdir loops for ever there)', { skip: !existsSync('/proc/self') }, () => {
  assert.throws(() => makeDirs('/proc/troupe-nope/home'), { code: 'ENOENT' });
  assert.throws(() => makeDirs('/proc/troupe-nope'), { code: 'ENOENT' });
});
