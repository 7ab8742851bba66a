// A root given with a `..` after a symlink (`/top/home/link/..`, `link -> /top/data/sub`) names the
// directory the kernel reaches: `link` is followed first and `..` climbs from its target, so the root is
// `/top/data`, not `/top/home` as the text reads. The guard and the ACP layer take an additional
// directory, and the cwd, as the kernel names them (spec/tools.md §3): until 2026-12-07 both read
// `..` as text, so a client's `/top/home/link/..` let the tools into `/top/home` (its `private.txt`)
// and kept them out of `/top/data`, the directory asked for. A root reached through a symlink with no
// `..` after it counts by its target, and is shown by its own name.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from './workspace.fixture.js';
import { createWorkspaceTools } from '../../../src/tools/index.js';
import { requestedDirectories } from '../../../src/acp/session-directories.js';

let top: string;
/** The additional directory as a client gives it: the kernel's `/top/data`, the text's `/top/home`. */
let viaLink: string;
before(() => {
  top = realpathSync(mkdtempSync(join(tmpdir(), 'troupe-dotdot-root-')));
  for (const d of ['proj', 'home', 'data/sub']) mkdirSync(join(top, d), { recursive: true });
  writeFileSync(join(top, 'proj/own.txt'), 'own\n');
  writeFileSync(join(top, 'home/private.txt'), 'private: never granted\n');
  writeFileSync(join(top, 'data/shared.txt'), 'shared: granted\n');
  symlinkSync(join(top, 'data/sub'), join(top, 'home/link'));
  symlinkSync(join(top, 'data'), join(top, 'proj/dlink'));
  viaLink = join(top, 'home/link') + '/..';
});
after(() => rmSync(top, { recursive: true, force: true }));

test("an additional directory with `..` after a symlink is the kernel's: its files are in, the text's parent is out", async () => {
  const host = createWorkspaceTools({ cwd: join(top, 'proj'), additionalDirectories: [viaLink] });
  const shared = await run(host, 'read_file', { path: join(top, 'data/shared.txt') });
  assert.equal(shared.isError, false, shared.output);
  assert.equal(shared.output, 'shared: granted\n');
  const written = await run(host, 'write_file', { path: join(top, 'data/new.txt'), content: 'x' });
  assert.equal(written.isError, false, written.output);
  for (const path of [join(top, 'home/private.txt'), join(top, 'home/new.txt')]) {
    const r = await (path.endsWith('new.txt') ? run(host, 'write_file', { path, content: 'x' }) : run(host, 'read_file', { path }));
    assert.equal(r.errorCode, 'path_outside_workspace', `${path}: ${r.output}`);
  }
});

test("a cwd with `..` after a symlink is the kernel's too: relative paths and commands start there", async () => {
  const host = createWorkspaceTools({ cwd: viaLink });
  const shared = await run(host, 'read_file', { path: 'shared.txt' });
  assert.equal(shared.output, 'shared: granted\n');
  const relative = await run(host, 'read_file', { path: 'private.txt' });
  assert.equal(relative.errorCode, 'tool_failed', relative.output);
  assert.match(relative.output, /not found|No such file|does not exist/i);
  const absolute = await run(host, 'read_file', { path: join(top, 'home/private.txt') });
  assert.equal(absolute.errorCode, 'path_outside_workspace', absolute.output);
  const pwd = await run(host, 'run_command', { command: 'pwd -P' });
  assert.equal(pwd.isError, false, pwd.output);
  assert.match(pwd.output, new RegExp(`^${join(top, 'data')}$`, 'm'));
});

test('an additional directory that is a symlink counts by its target, reached by either name; what is beside it stays out', async () => {
  const host = createWorkspaceTools({ cwd: join(top, 'home/link'), additionalDirectories: [join(top, 'proj/dlink')] });
  for (const path of [join(top, 'proj/dlink/shared.txt'), join(top, 'data/shared.txt')]) {
    const r = await run(host, 'read_file', { path });
    assert.equal(r.output, 'shared: granted\n', `${path}: ${r.output}`);
  }
  for (const path of [join(top, 'proj/own.txt'), join(top, 'home/private.txt'), join(top, 'proj/dlink/../own.txt')]) {
    const r = await run(host, 'read_file', { path });
    assert.equal(r.errorCode, 'path_outside_workspace', `${path}: ${r.output}`);
  }
});

test("the ACP layer keeps an additional directory as the kernel names it: listed, compared with the cwd and the others so", () => {
  assert.deepEqual(requestedDirectories(join(top, 'proj'), [viaLink]), [join(top, 'data')]);
  assert.deepEqual(requestedDirectories(join(top, 'proj'), [viaLink, join(top, 'data/')]), [join(top, 'data')], 'one directory, named twice');
  assert.deepEqual(requestedDirectories(join(top, 'data'), [viaLink]), [], 'the cwd itself');
  // Past its last `..`, a directory keeps the name it was given (a symlink stays a symlink's name).
  assert.deepEqual(requestedDirectories(join(top, 'home'), [`${top}/proj/./dlink/`, `${top}/home/../proj/dlink`]), [join(top, 'proj/dlink')]);
});
