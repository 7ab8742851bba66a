// Every way out of the workspace is refused, and nothing outside is read or written.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { createLocalFileBackend, createWorkspaceTools } from '../../../src/tools/index.js';
import type { FileBackend } from '../../../src/tools/index.js';
import type { ToolHost, ToolResult } from '../../../src/core/ports.js';
import { makeWorkspace, run, SECRET, type Workspace } from './workspace.fixture.js';

let ws: Workspace;
let host: ToolHost;
/** Every path the file backend was asked to read or write. */
const touched: string[] = [];

/** Path → content (or "<dir>") of everything below `dir`. */
function snapshot(dir: string, out: Record<string, string> = {}): Record<string, string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      out[path] = '<dir>';
      snapshot(path, out);
    } else out[path] = readFileSync(path, 'utf8');
  }
  return out;
}

let outsideBefore: Record<string, string>;

before(() => {
  ws = makeWorkspace();
  const local = createLocalFileBackend();
  const recording: FileBackend = {
    readText: (p, w, s) => (touched.push(p), local.readText(p, w, s)),
    writeText: (p, c, s) => (touched.push(p), local.writeText(p, c, s)),
  };
  host = createWorkspaceTools({ cwd: ws.cwd, additionalDirectories: [ws.extra], files: recording });
  ws.write('inside.txt', 'inside\n');
  mkdirSync(join(ws.outside, 'deep/dir'), { recursive: true });
  // A sibling whose name starts with the cwd's name: a prefix check would let it through.
  mkdirSync(`${ws.cwd}2`);
  writeFileSync(`${ws.cwd}2/prefix.txt`, SECRET);
  symlinkSync(ws.secret, join(ws.cwd, 'link-file'));
  symlinkSync(ws.outside, join(ws.cwd, 'link-dir'));
  symlinkSync(join(ws.outside, 'not-yet.txt'), join(ws.cwd, 'dangling'));
  symlinkSync('loop-b', join(ws.cwd, 'loop-a'));
  symlinkSync('loop-a', join(ws.cwd, 'loop-b'));
  // `evil` → `a/l2/../f`: lexically `a/f` (inside), but the kernel climbs from l2's real target.
  mkdirSync(join(ws.cwd, 'a'));
  symlinkSync(join(ws.outside, 'deep/dir'), join(ws.cwd, 'a/l2'));
  symlinkSync('a/l2/../f', join(ws.cwd, 'evil'));
  outsideBefore = { ...snapshot(ws.outside), ...snapshot(`${ws.cwd}2`) };
});

after(() => ws.dispose());

function assertRefused(r: ToolResult, what: string): void {
  assert.equal(r.isError, true, `${what} was not refused: ${r.output}`);
  assert.equal(r.errorCode, 'path_outside_workspace', `${what}: ${r.output}`);
  assert.doesNotMatch(r.output, /TOP SECRET/);
}

function assertNothingOutsideTouched(): void {
  assert.deepEqual({ ...snapshot(ws.outside), ...snapshot(`${ws.cwd}2`) }, outsideBefore);
  for (const p of touched) assert.ok(p.startsWith(ws.cwd + '/') || p.startsWith(ws.extra + '/'), `backend touched ${p}`);
}

describe('escapes are refused', () => {
  const escapes: Array<[string, string]> = [
    ['.. (relative)', '../outside/secret.txt'],
    ['.. in the middle', 'a/../../outside/secret.txt'],
    ['absolute path outside', '/OUTSIDE/secret.txt'],
    ['sibling sharing the cwd prefix', '../ws2/prefix.txt'],
    ['symlink to a file outside', 'link-file'],
    ['path through a symlinked directory', 'link-dir/secret.txt'],
  ];
  const resolvePath = (p: string): string => p.replace('/OUTSIDE', ws.outside);

  for (const [label, path] of escapes) {
    test(`${label}: read, write, edit are refused`, async () => {
      assertRefused(await run(host, 'read_file', { path: resolvePath(path) }), `read ${label}`);
      assertRefused(await run(host, 'write_file', { path: resolvePath(path), content: 'pwned' }), `write ${label}`);
      assertRefused(await run(host, 'edit_file', { path: resolvePath(path), old_string: 'TOP', new_string: 'pwned' }), `edit ${label}`);
      assertNothingOutsideTouched();
    });
  }

  test('creating new files outside: via .., absolute, symlinked dir, dangling link, lexical trick', async () => {
    const attempts = [
      ['../outside/created.txt', join(ws.outside, 'created.txt')],
      [join(ws.outside, 'abs.txt'), join(ws.outside, 'abs.txt')],
      ['link-dir/new/sub/file.txt', join(ws.outside, 'new')],
      ['dangling', join(ws.outside, 'not-yet.txt')],
      ['evil', join(ws.outside, 'deep/f')],
    ] as const;
    for (const [path, wouldBe] of attempts) {
      assertRefused(await run(host, 'write_file', { path, content: 'pwned' }), `write ${path}`);
      assert.equal(existsSync(wouldBe), false, `${wouldBe} was created`);
    }
    assertNothingOutsideTouched();
  });

  test('directory tools and run_command cwd are refused outside', async () => {
    assertRefused(await run(host, 'list_dir', { path: '..' }), 'list_dir ..');
    assertRefused(await run(host, 'list_dir', { path: 'link-dir' }), 'list_dir link-dir');
    assertRefused(await run(host, 'glob', { pattern: '*', path: ws.outside }), 'glob outside');
    assertRefused(await run(host, 'grep', { pattern: 'SECRET', path: 'link-dir' }), 'grep link-dir');
    assertRefused(await run(host, 'grep', { pattern: 'SECRET', path: 'link-file' }), 'grep link-file');
    assertRefused(await run(host, 'run_command', { command: 'cat secret.txt', cwd: 'link-dir' }), 'run_command cwd');
    assertNothingOutsideTouched();
  });

  test('a symlink loop gives a clear error, not a hang', async () => {
    for (const path of ['loop-a', 'loop-a/child.txt']) {
      const read = await run(host, 'read_file', { path });
      assert.equal(read.isError, true);
      assert.match(read.output, /symlink loop/, read.output);
      const write = await run(host, 'write_file', { path, content: 'x' });
      assert.equal(write.isError, true);
      assert.match(write.output, /symlink loop/, write.output);
    }
    assertNothingOutsideTouched();
  });

  test('a directory symlink cycle does not make glob or grep loop', async () => {
    symlinkSync('.', join(ws.cwd, 'cycle'));
    const g = await run(host, 'glob', { pattern: '**/inside.txt' });
    assert.equal(g.output, 'inside.txt');
    const s = await run(host, 'grep', { pattern: '^inside$' });
    assert.equal(s.output, 'inside.txt:1: inside');
  });
});

describe('what stays inside is allowed', () => {
  test('.. that stays inside, an additional directory, and a link into it', async () => {
    assert.equal((await run(host, 'read_file', { path: 'a/../inside.txt' })).output, 'inside\n');
    const extraFile = join(ws.extra, 'notes/n.txt');
    const w = await run(host, 'write_file', { path: extraFile, content: 'extra\n' });
    assert.equal(w.isError, false, w.output);
    assert.equal(readFileSync(extraFile, 'utf8'), 'extra\n');
    symlinkSync(ws.extra, join(ws.cwd, 'to-extra'));
    assert.equal((await run(host, 'read_file', { path: 'to-extra/notes/n.txt' })).output, 'extra\n');
    assertNothingOutsideTouched();
  });

  test('names that start with ".." (..data, ..., ..env) are inside, not a way up', async () => {
    // Kubernetes volume mounts hold a `..data` directory; only a `..` segment climbs.
    mkdirSync(join(ws.cwd, '..data'));
    writeFileSync(join(ws.cwd, '..data/cfg'), 'config\n');
    assert.equal((await run(host, 'read_file', { path: '..data/cfg' })).output, 'config\n');
    assert.equal((await run(host, 'list_dir', { path: '..data' })).output, 'cfg');
    const w = await run(host, 'write_file', { path: '...', content: 'dots\n' });
    assert.equal(w.output, 'Created ... (5 bytes).');
    const e = await run(host, 'edit_file', { path: '...', old_string: 'dots', new_string: 'dotted' });
    assert.equal(e.isError, false, e.output);
    assert.equal(readFileSync(join(ws.cwd, '...'), 'utf8'), 'dotted\n');
    const g = await run(host, 'grep', { pattern: '^config$', path: '..data' });
    assert.equal(g.output, '..data/cfg:1: config');
    assert.match((await run(host, 'glob', { pattern: '**/cfg' })).output, /^\.\.data\/cfg$/m);
    const r = await run(host, 'run_command', { command: 'pwd', cwd: '..data' });
    assert.equal(r.isError, false, r.output);
    assertNothingOutsideTouched();
  });

  test('without the additional directory, the same path is refused', async () => {
    const narrow = createWorkspaceTools({ cwd: ws.cwd });
    assertRefused(await run(narrow, 'read_file', { path: join(ws.extra, 'notes/n.txt') }), 'extra without grant');
  });
});

describe('~ is the home directory, as in a shell', () => {
  test('~/… inside the workspace is that file; outside, refused; never a directory named ~', async (t) => {
    const home = process.env.HOME;
    // A home that holds the workspace (and, beside it, the outside directory).
    process.env.HOME = dirname(ws.cwd);
    t.after(() => (home === undefined ? delete process.env.HOME : (process.env.HOME = home)));
    const w = await run(host, 'write_file', { path: `~/${basename(ws.cwd)}/tilde.txt`, content: 'home-relative\n' });
    assert.equal(w.isError, false, w.output);
    assert.equal(readFileSync(join(ws.cwd, 'tilde.txt'), 'utf8'), 'home-relative\n');
    assertRefused(await run(host, 'write_file', { path: `~/${basename(ws.outside)}/tilde.txt`, content: 'pwned' }), 'write ~/outside');
    assertRefused(await run(host, 'read_file', { path: '~' }), 'read ~');
    assert.ok(!existsSync(join(ws.cwd, '~')), 'no directory named ~ in the workspace');
    assertNothingOutsideTouched();
  });
});
