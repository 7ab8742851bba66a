// glob and grep over a real tree: results, ignored directories, bounds, and symlink handling.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createWorkspaceTools } from '../../../src/tools/index.js';
import type { ToolHost } from '../../../src/core/ports.js';
import { makeWorkspace, run, type Workspace } from './workspace.fixture.js';

let ws: Workspace;
let host: ToolHost;

before(() => {
  ws = makeWorkspace();
  host = createWorkspaceTools({ cwd: ws.cwd });
  ws.write('src/index.ts', 'import { parse } from "./parser.js";\nexport function main() {\n  return parse("x");\n}\n');
  ws.write('src/parser.ts', 'export function parse(s: string) {\n  return s.trim();\n}\n');
  ws.write('src/util/strings.ts', 'export const TODO_MARK = "todo";\n');
  ws.write('test/parser.test.ts', 'import { parse } from "../src/parser.js";\n');
  ws.write('README.md', '# Project\nCall parse() to parse.\n');
  ws.write('node_modules/dep/index.ts', 'export function parse() {}\n');
  ws.write('.git/config', '[core]\nparse = true\n');
  writeFileSync(join(ws.cwd, 'image.png'), Buffer.concat([Buffer.from('parse'), Buffer.alloc(16)]));
  // Links: one to a file inside, one to the outside secret, one to the outside directory.
  symlinkSync(join(ws.cwd, 'src/parser.ts'), join(ws.cwd, 'parser-link.ts'));
  symlinkSync(ws.secret, join(ws.cwd, 'secret-link.ts'));
  symlinkSync(ws.outside, join(ws.cwd, 'outside-dir'));
  writeFileSync(join(ws.outside, 'leak.ts'), 'export function parse() { /* outside */ }\n');
});
after(() => ws.dispose());

describe('glob', () => {
  test('a name pattern matches at any depth, skipping node_modules and .git', async () => {
    const r = await run(host, 'glob', { pattern: '*.ts' });
    assert.equal(r.isError, false, r.output);
    assert.deepEqual(r.output.split('\n'), ['parser-link.ts', 'src/index.ts', 'src/parser.ts', 'src/util/strings.ts', 'test/parser.test.ts']);
  });

  test('a path pattern with ** and braces, and a search directory', async () => {
    const r = await run(host, 'glob', { pattern: 'src/**/*.{ts,md}' });
    assert.deepEqual(r.output.split('\n'), ['src/index.ts', 'src/parser.ts', 'src/util/strings.ts']);
    const direct = await run(host, 'glob', { pattern: 'src/*.ts' });
    assert.deepEqual(direct.output.split('\n'), ['src/index.ts', 'src/parser.ts']);
    const under = await run(host, 'glob', { pattern: '*.ts', path: 'src/util' });
    assert.equal(under.output, 'src/util/strings.ts');
  });

  test('include_ignored searches node_modules and .git', async () => {
    const r = await run(host, 'glob', { pattern: '**/*', include_ignored: true });
    const lines = r.output.split('\n');
    assert.ok(lines.includes('node_modules/dep/index.ts'), r.output);
    assert.ok(lines.includes('.git/config'), r.output);
  });

  test('never reports files through links that lead outside', async () => {
    const r = await run(host, 'glob', { pattern: '**', include_ignored: true });
    assert.doesNotMatch(r.output, /secret-link|outside-dir|leak/);
    assert.match(r.output, /parser-link\.ts/);
  });

  test('max_results and the entry budget bound the work', async () => {
    const r = await run(host, 'glob', { pattern: '*.ts', max_results: 2 });
    const lines = r.output.split('\n');
    assert.equal(lines.length, 3);
    assert.match(lines[2]!, /results limited to 2/);
    const tight = createWorkspaceTools({ cwd: ws.cwd, limits: { searchMaxEntries: 3 } });
    const t = await run(tight, 'glob', { pattern: '*.ts' });
    assert.match(t.output, /search stopped after examining 3 entries/);
  });

  test('no match, a bad pattern, and a missing directory', async () => {
    assert.match((await run(host, 'glob', { pattern: '*.rs' })).output, /^No files match `\*\.rs` in \./);
    const bad = await run(host, 'glob', { pattern: 'src/{a,b' });
    assert.deepEqual([bad.isError, bad.errorCode], [true, 'invalid_params']);
    assert.throws(() => host.describe({ id: 'x', name: 'glob', input: { pattern: '/etc/*' } }), { code: 'invalid_params' });
    const missing = await run(host, 'glob', { pattern: '*', path: 'nowhere' });
    assert.equal(missing.isError, true);
    const file = await run(host, 'glob', { pattern: '*', path: 'README.md' });
    assert.deepEqual([file.isError, file.errorCode, file.output], [true, 'tool_failed', 'README.md is a file, not a directory: glob searches a directory (read_file reads a file).']);
  });
});

describe('grep', () => {
  test('finds matching lines as path:line: text, with locations', async () => {
    const r = await run(host, 'grep', { pattern: 'function\\s+parse' });
    assert.equal(r.isError, false, r.output);
    assert.deepEqual(r.output.split('\n'), ['parser-link.ts:1: export function parse(s: string) {', 'src/parser.ts:1: export function parse(s: string) {']);
    assert.deepEqual(r.locations, [
      { path: join(ws.cwd, 'parser-link.ts'), line: 1 },
      { path: join(ws.cwd, 'src/parser.ts'), line: 1 },
    ]);
  });

  test('glob filter, case-insensitivity and a single file path', async () => {
    const md = await run(host, 'grep', { pattern: 'PARSE', glob: '*.md', case_insensitive: true });
    assert.equal(md.output, 'README.md:2: Call parse() to parse.');
    const one = await run(host, 'grep', { pattern: 'trim', path: 'src/parser.ts' });
    assert.equal(one.output, 'src/parser.ts:2:   return s.trim();');
  });

  test('skips ignored dirs, binary files and links out; include_ignored opts in', async () => {
    const r = await run(host, 'grep', { pattern: 'parse' });
    assert.doesNotMatch(r.output, /node_modules|\.git\/|image\.png|secret|outside|leak/);
    const all = await run(host, 'grep', { pattern: 'parse', include_ignored: true });
    assert.match(all.output, /node_modules\/dep\/index\.ts:1:/);
    assert.match(all.output, /\.git\/config:2: parse = true/);
  });

  test('max_results, large files and long lines are bounded', async () => {
    const limited = await run(host, 'grep', { pattern: 'parse', max_results: 1 });
    assert.equal(limited.output.split('\n').length, 2);
    assert.match(limited.output, /results limited to 1 matching lines/);
    const big = ws.write('big/large.txt', 'needle\n' + 'x'.repeat(2000));
    const small = createWorkspaceTools({ cwd: ws.cwd, limits: { grepMaxFileBytes: 1000, grepMaxLineChars: 10 } });
    const skipped = await run(small, 'grep', { pattern: 'needle', path: 'big' });
    assert.match(skipped.output, /^No matches[^\n]*\n\[1 file\(s\) over 1000 bytes skipped\]$/);
    mkdirSync(join(ws.cwd, 'long'));
    writeFileSync(join(ws.cwd, 'long/l.txt'), 'needle ' + 'y'.repeat(50));
    assert.equal((await run(small, 'grep', { pattern: 'needle', path: 'long' })).output, 'long/l.txt:1: needle yyy…');
    assert.ok(big);
  });

  test('a line and a title cut where an emoji is are cut before it, not inside it (no lone surrogate, no U+FFFD)', async () => {
    const small = createWorkspaceTools({ cwd: ws.cwd, limits: { grepMaxLineChars: 10 } });
    mkdirSync(join(ws.cwd, 'emoji'));
    // The 🔥 (two UTF-16 units) takes units 10 and 11 of the line: a cut after 10 would split it.
    writeFileSync(join(ws.cwd, 'emoji/e.txt'), 'needle aa🔥 x\n');
    const r = await run(small, 'grep', { pattern: 'needle', path: 'emoji' });
    assert.equal(r.output, 'emoji/e.txt:1: needle aa…');
    assert.equal(Buffer.from(r.output).toString(), r.output, 'well-formed: the same after a UTF-8 round trip');
    const pattern = `${'p'.repeat(59)}🔥`;
    const title = host.describe({ id: 'x', name: 'grep', input: { pattern } }).title;
    assert.equal(title, `Search \`${'p'.repeat(59)}…\``);
    const whole = host.describe({ id: 'y', name: 'grep', input: { pattern: `${'p'.repeat(58)}🔥` } }).title;
    assert.equal(whole, `Search \`${'p'.repeat(58)}🔥\``, 'an emoji that fits is kept');
  });

  test('a catastrophically backtracking regex ends in tool_timeout without freezing the agent', async () => {
    // (a+)+$ against 30 "a"s and a "!" takes about 2^30 backtracking steps: many seconds on this
    // thread (where nothing else can run meanwhile, not even a cancel), far more than the limit.
    ws.write('redos/line.txt', `${'a'.repeat(30)}!\n`);
    const slow = createWorkspaceTools({ cwd: ws.cwd, limits: { grepTimeoutMs: 500 } });
    const r = await run(slow, 'grep', { pattern: '(a+)+$', path: 'redos' });
    assert.deepEqual([r.isError, r.errorCode], [true, 'tool_timeout'], r.output);
    assert.match(r.output, /grep stopped after 500 ms: the pattern is too slow/);
    // The next search (on a host with the default limit: a worker's start alone can take 500 ms on a
    // loaded machine) is answered: the agent's thread was never frozen.
    const after = await run(host, 'grep', { pattern: 'a!$', path: 'redos' });
    assert.equal(after.output, `redos/line.txt:1: ${'a'.repeat(30)}!`, 'the next search works');
  });

  test('in a CRLF file the \\r is not part of a line: $ matches at the line\'s end, as the line is shown', async () => {
    ws.write('crlf/win.ts', 'const a = 1;\r\nif (a) {\r\n  run();\r\n}\r\n');
    const ends = await run(host, 'grep', { pattern: '[;{]$', path: 'crlf' });
    assert.equal(ends.output, 'crlf/win.ts:1: const a = 1;\ncrlf/win.ts:2: if (a) {\ncrlf/win.ts:3:   run();');
    const whole = await run(host, 'grep', { pattern: '^}$', path: 'crlf/win.ts' });
    assert.equal(whole.output, 'crlf/win.ts:4: }');
  });

  test('an invalid regex is invalid input', async () => {
    assert.throws(() => host.describe({ id: 'x', name: 'grep', input: { pattern: '(' } }), { code: 'invalid_params' });
    const r = await run(host, 'grep', { pattern: '[' });
    assert.deepEqual([r.isError, r.errorCode], [true, 'invalid_params']);
  });
});

describe('.gitignore', () => {
  let gw: Workspace;
  let tools: ToolHost;
  before(() => {
    gw = makeWorkspace();
    tools = createWorkspaceTools({ cwd: gw.cwd, limits: { searchMaxEntries: 60 } });
    gw.write('.gitignore', '# build output\n.venv/\ndist/\n*.log\n/build\n!keep.log\n');
    // A virtualenv sorts before src: walked, its entries used up the whole budget before src was reached.
    for (let i = 0; i < 80; i++) gw.write(`.venv/lib/mod${i}.py`, 'def handler(): pass\n');
    gw.write('src/app.py', 'def handler(event):\n    return event\n');
    gw.write('src/build/gen.py', 'def handler(): pass  # not the root build: /build is anchored\n');
    gw.write('src/debug.log', 'handler called\n');
    gw.write('src/.gitignore', 'generated.py\r\n');
    gw.write('src/generated.py', 'def handler(): pass\n');
    gw.write('dist/app.js', 'function handler() {}\n');
    gw.write('build/out.py', 'def handler(): pass\n');
    gw.write('keep.log', 'handler kept\n');
    // A .gitignore that is a link out of the workspace is not read (it would ignore everything).
    writeFileSync(join(gw.outside, 'ignore-all'), '*\n');
    gw.write('lib/util.py', 'def handler(): pass\n');
    symlinkSync(join(gw.outside, 'ignore-all'), join(gw.cwd, 'lib/.gitignore'));
  });
  after(() => gw.dispose());

  test('grep passes over what .gitignore files ignore, so the entry budget reaches the project', async () => {
    const r = await run(tools, 'grep', { pattern: 'handler' });
    assert.equal(r.isError, false, r.output);
    assert.deepEqual(r.output.split('\n'), ['keep.log:1: handler kept', 'lib/util.py:1: def handler(): pass', 'src/app.py:1: def handler(event):', 'src/build/gen.py:1: def handler(): pass  # not the root build: /build is anchored']);
  });

  test('a subdirectory searched is ruled by its parents\' .gitignore files too', async () => {
    const r = await run(tools, 'grep', { pattern: 'handler', path: 'src' });
    assert.deepEqual(r.output.split('\n'), ['src/app.py:1: def handler(event):', 'src/build/gen.py:1: def handler(): pass  # not the root build: /build is anchored']);
    // Also when that subdirectory is an additional directory of its own.
    const nested = createWorkspaceTools({ cwd: gw.cwd, additionalDirectories: [join(gw.cwd, 'src')] });
    assert.equal((await run(nested, 'grep', { pattern: 'handler', path: 'src' })).output, r.output);
    const none = await run(tools, 'grep', { pattern: 'handler', path: 'dist' });
    assert.equal(none.output, 'dist/app.js:1: function handler() {}', 'a directory named explicitly is searched');
  });

  test('glob does the same; include_ignored finds everything, and a search that found nothing says what it passed over', async () => {
    assert.deepEqual((await run(tools, 'glob', { pattern: '*.py' })).output.split('\n'), ['lib/util.py', 'src/app.py', 'src/build/gen.py']);
    // (With the small entry budget, the virtualenv alone would use it up.)
    const all = await run(createWorkspaceTools({ cwd: gw.cwd }), 'glob', { pattern: '*.{py,js,log}', include_ignored: true, max_results: 200 });
    for (const path of ['.venv/lib/mod0.py', 'build/out.py', 'dist/app.js', 'src/debug.log', 'src/generated.py']) assert.ok(all.output.split('\n').includes(path), `${path} in ${all.output}`);
    const missed = await run(tools, 'glob', { pattern: '*.js' });
    assert.equal(missed.output, 'No files match `*.js` in ..\n[5 entries ignored by .gitignore not searched; include_ignored: true searches them]');
  });
});
