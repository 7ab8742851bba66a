// read_file, write_file, edit_file and list_dir against real files in a temp workspace.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, constants, existsSync, lstatSync, mkdirSync, openSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { createWorkspaceTools } from '../../../src/tools/index.js';
import type { ToolHost } from '../../../src/core/ports.js';
import { makeWorkspace, run, type Workspace } from './workspace.fixture.js';

let ws: Workspace;
let host: ToolHost;

before(() => {
  ws = makeWorkspace();
  host = createWorkspaceTools({ cwd: ws.cwd, additionalDirectories: [ws.extra] });
});
after(() => ws.dispose());

describe('read_file', () => {
  test('returns the content verbatim with the file as location', async () => {
    const abs = ws.write('src/a.ts', 'export const a = 1;\n');
    const r = await run(host, 'read_file', { path: 'src/a.ts' });
    assert.equal(r.isError, false);
    assert.equal(r.output, 'export const a = 1;\n');
    assert.deepEqual(r.locations, [{ path: abs, line: 1 }]);
  });

  test('offset and limit select a window and say where the file continues', async () => {
    ws.write('lines.txt', Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n') + '\n');
    const r = await run(host, 'read_file', { path: 'lines.txt', offset: 3, limit: 2 });
    assert.equal(r.output, 'line 3\nline 4\n\n[showing lines 3-4; the file continues: read again with offset 5]');
    const end = await run(host, 'read_file', { path: 'lines.txt', offset: 9, limit: 2 });
    assert.equal(end.output, 'line 9\nline 10\n', 'the last window has no continuation note');
  });

  test('the default line limit applies', async () => {
    const small = createWorkspaceTools({ cwd: ws.cwd, limits: { readDefaultLines: 3 } });
    ws.write('five.txt', 'a\nb\nc\nd\ne');
    const r = await run(small, 'read_file', { path: 'five.txt' });
    assert.match(r.output, /^a\nb\nc\n\n\[showing lines 1-3; the file continues: read again with offset 4\]$/);
    ws.write('three.txt', 'a\nb\nc\n');
    assert.equal((await run(small, 'read_file', { path: 'three.txt' })).output, 'a\nb\nc\n');
  });

  test('output is cut at readMaxBytes on a line boundary', async () => {
    const small = createWorkspaceTools({ cwd: ws.cwd, limits: { readMaxBytes: 20 } });
    ws.write('wide.txt', '0123456789\n0123456789\n0123456789\n');
    const r = await run(small, 'read_file', { path: 'wide.txt' });
    assert.equal(r.output, '0123456789\n\n[output cut at 20 bytes after line 1; read again with offset 2]');
  });

  test('a line longer than readMaxBytes is cut and the next read moves past it', async () => {
    const small = createWorkspaceTools({ cwd: ws.cwd, limits: { readMaxBytes: 20 } });
    ws.write('longline.txt', `${'x'.repeat(50)}\nsecond\n`);
    const r = await run(small, 'read_file', { path: 'longline.txt' });
    assert.equal(r.output, `${'x'.repeat(20)}\n[line 1 is longer than 20 bytes and was cut here; read_file cannot show the rest of it (use grep or run_command); the file continues: read again with offset 2]`);
    assert.equal((await run(small, 'read_file', { path: 'longline.txt', offset: 2 })).output, 'second\n');
    ws.write('lastline.txt', `a\n${'y'.repeat(50)}`);
    const last = await run(small, 'read_file', { path: 'lastline.txt', offset: 2 });
    assert.equal(last.output, `${'y'.repeat(20)}\n[line 2 is longer than 20 bytes and was cut here; read_file cannot show the rest of it (use grep or run_command)]`);
  });

  test('the byte cut never splits a multi-byte character', async () => {
    const small = createWorkspaceTools({ cwd: ws.cwd, limits: { readMaxBytes: 20 } });
    ws.write('euro.txt', `${'€'.repeat(4)}\n${'€'.repeat(10)}\n`);
    const r = await run(small, 'read_file', { path: 'euro.txt', offset: 2 });
    assert.ok(r.output.startsWith(`${'€'.repeat(6)}\n[line 2 is longer`), r.output);
    assert.doesNotMatch(r.output, /\uFFFD/);
  });

  test('missing file, directory and binary file are errors the model sees', async () => {
    const missing = await run(host, 'read_file', { path: 'nope.txt' });
    assert.deepEqual([missing.isError, missing.errorCode], [true, 'tool_failed']);
    assert.match(missing.output, /File not found: nope\.txt/);
    mkdirSync(join(ws.cwd, 'adir'), { recursive: true });
    const dir = await run(host, 'read_file', { path: 'adir' });
    assert.equal(dir.isError, true);
    assert.match(dir.output, /is a directory/);
    writeFileSync(join(ws.cwd, 'blob.bin'), Buffer.from([1, 0, 2, 0]));
    const bin = await run(host, 'read_file', { path: 'blob.bin' });
    assert.equal(bin.isError, true);
    assert.match(bin.output, /binary/);
  });

  test('an additional directory is readable by absolute path', async () => {
    writeFileSync(join(ws.extra, 'x.md'), '# extra\n');
    const r = await run(host, 'read_file', { path: join(ws.extra, 'x.md') });
    assert.equal(r.isError, false);
    assert.equal(r.output, '# extra\n');
  });
});

describe('a path that names a directory by its form', () => {
  test('read_file and edit_file refuse "a.txt/", "a.txt/." and "a.txt/x/.." as the kernel would, and leave the file as it was', async () => {
    const abs = ws.write('formed/a.txt', 'keep\n');
    for (const path of ['formed/a.txt/', 'formed/a.txt/.', 'formed/a.txt/x/..']) {
      const read = await run(host, 'read_file', { path });
      assert.deepEqual([read.isError, read.errorCode], [true, 'tool_failed'], `${path}: ${read.output}`);
      assert.match(read.output, /names a directory.*read_file needs a file path \(list_dir lists a directory\)/);
      const edit = await run(host, 'edit_file', { path, old_string: 'keep', new_string: 'lost' });
      assert.deepEqual([edit.isError, edit.errorCode], [true, 'tool_failed'], `${path}: ${edit.output}`);
      assert.match(edit.output, /names a directory.*edit_file needs a file path/);
    }
    assert.equal(ws.read(abs), 'keep\n');
    assert.equal((await run(host, 'read_file', { path: 'formed/a.txt' })).output, 'keep\n');
  });
});

describe('write_file', () => {
  test('creates parent directories inside the workspace and reports a diff with null oldText', async () => {
    const r = await run(host, 'write_file', { path: 'new/deep/dir/file.txt', content: 'hello\n' });
    const abs = join(ws.cwd, 'new/deep/dir/file.txt');
    assert.equal(r.isError, false, r.output);
    assert.equal(ws.read(abs), 'hello\n');
    assert.match(r.output, /^Created new\/deep\/dir\/file\.txt \(6 bytes\)\.$/);
    assert.deepEqual(r.content, [{ type: 'diff', path: abs, oldText: null, newText: 'hello\n' }]);
    assert.deepEqual(r.locations, [{ path: abs }]);
  });

  test('replacing a file shows the old text in the diff', async () => {
    const abs = ws.write('replace.txt', 'old\n');
    const r = await run(host, 'write_file', { path: 'replace.txt', content: 'new\n' });
    assert.equal(ws.read(abs), 'new\n');
    assert.deepEqual(r.content, [{ type: 'diff', path: abs, oldText: 'old\n', newText: 'new\n' }]);
  });

  test('a path ending in "/", "." or ".." is refused instead of creating a file named like a directory', async () => {
    for (const path of ['made-dir/', 'made-dir/.', 'made-dir/sub/..']) {
      const r = await run(host, 'write_file', { path, content: 'x' });
      assert.deepEqual([r.isError, r.errorCode], [true, 'tool_failed'], `${path}: ${r.output}`);
      assert.match(r.output, /names a directory/);
      assert.equal(existsSync(join(ws.cwd, 'made-dir')), false, path);
    }
    const dots = await run(host, 'write_file', { path: 'odd/...', content: 'x' });
    assert.equal(dots.isError, false, '"..." is an ordinary file name');
  });

  test('a file where a parent directory should be is named, not reported as mkdir\'s EEXIST', async () => {
    ws.write('plain.txt', 'keep\n');
    for (const path of ['plain.txt/new.txt', 'plain.txt/sub/new.txt']) {
      const r = await run(host, 'write_file', { path, content: 'x' });
      assert.deepEqual([r.isError, r.errorCode], [true, 'tool_failed'], `${path}: ${r.output}`);
      assert.equal(r.output, `Cannot create ${path}: plain.txt is not a directory (a file is in the way); nothing was written.`);
    }
    assert.equal(ws.read(join(ws.cwd, 'plain.txt')), 'keep\n');
    symlinkSync(join(ws.cwd, 'no-such-dir'), join(ws.cwd, 'dangling-dir'));
    const r = await run(host, 'write_file', { path: 'dangling-dir/new.txt', content: 'x' });
    assert.equal(r.output, 'Cannot create dangling-dir/new.txt: dangling-dir is not a directory (a symbolic link that does not lead to a directory); nothing was written.');
  });

  test('writing onto a directory fails without touching it', async () => {
    mkdirSync(join(ws.cwd, 'adir2'));
    const r = await run(host, 'write_file', { path: 'adir2', content: 'x' });
    assert.equal(r.isError, true);
    assert.match(r.output, /is a directory/);
  });

  test('a workspace directory deleted while the session lives is not created again; the other roots are still written', async () => {
    const gone = makeWorkspace();
    try {
      const tools = createWorkspaceTools({ cwd: gone.cwd, additionalDirectories: [gone.extra] });
      rmSync(gone.cwd, { recursive: true });
      for (const path of ['file.txt', 'sub/file.txt']) {
        const r = await run(tools, 'write_file', { path, content: 'x' });
        assert.deepEqual([r.isError, r.errorCode], [true, 'tool_failed'], `${path}: ${r.output}`);
        assert.match(r.output, /workspace directory .* no longer exists/);
      }
      assert.equal(existsSync(gone.cwd), false, 'the deleted workspace stays deleted');
      const other = await run(tools, 'write_file', { path: join(gone.extra, 'new/file.txt'), content: 'y' });
      assert.equal(other.isError, false, other.output);
      assert.equal(readFileSync(join(gone.extra, 'new/file.txt'), 'utf8'), 'y');
    } finally {
      gone.dispose();
    }
  });
});

describe('edit_file', () => {
  test('replaces a unique string and yields a whole-file diff with the line', async () => {
    const before = 'const a = 1;\nconst b = 2;\nconst c = 3;\n';
    const abs = ws.write('edit/one.ts', before);
    const r = await run(host, 'edit_file', { path: 'edit/one.ts', old_string: 'const b = 2;', new_string: 'const b = 20; // $& kept literally' });
    const after = 'const a = 1;\nconst b = 20; // $& kept literally\nconst c = 3;\n';
    assert.equal(r.isError, false, r.output);
    assert.equal(ws.read(abs), after);
    assert.deepEqual(r.content, [{ type: 'diff', path: abs, oldText: before, newText: after }]);
    assert.deepEqual(r.locations, [{ path: abs, line: 2 }]);
    assert.match(r.output, /replaced 1 occurrence of old_string \(first at line 2\)/);
  });

  test('an edit whose result would be over maxFileBytes is refused before it is built, the file unchanged', async () => {
    const small = createWorkspaceTools({ cwd: ws.cwd, limits: { maxFileBytes: 1000 } });
    const abs = ws.write('edit/grow.txt', 'a'.repeat(500));
    // replace_all multiplies: 500 × 10 characters. Refused from the count, nothing built.
    const all = await run(small, 'edit_file', { path: 'edit/grow.txt', old_string: 'a', new_string: 'b'.repeat(10), replace_all: true });
    assert.deepEqual([all.isError, all.errorCode], [true, 'tool_failed']);
    assert.equal(all.output, 'The edit would make edit/grow.txt at least 5000 bytes, over the 1000-byte limit for edit_file; nothing was changed.');
    // 1000 characters (within the limit), but 2000 bytes once é is encoded: counted in bytes too.
    const wide = await run(small, 'edit_file', { path: 'edit/grow.txt', old_string: 'a', new_string: 'éé', replace_all: true });
    assert.equal(wide.output, 'The edit would make edit/grow.txt 2000 bytes, over the 1000-byte limit for edit_file; nothing was changed.');
    assert.equal(ws.read(abs), 'a'.repeat(500));
    // Up to the limit is fine.
    const fits = await run(small, 'edit_file', { path: 'edit/grow.txt', old_string: 'a', new_string: 'bb', replace_all: true });
    assert.equal(fits.isError, false, fits.output);
    assert.equal(ws.read(abs), 'b'.repeat(1000));
  });

  test('old_string not found leaves the file unchanged', async () => {
    const abs = ws.write('edit/two.ts', 'alpha\n');
    const r = await run(host, 'edit_file', { path: 'edit/two.ts', old_string: 'beta', new_string: 'gamma' });
    assert.deepEqual([r.isError, r.errorCode], [true, 'tool_failed']);
    assert.match(r.output, /old_string was not found in edit\/two\.ts/);
    assert.equal(ws.read(abs), 'alpha\n');
  });

  test('a multi-line old_string with bare LF line breaks in a CRLF file is refused, saying what would match', async () => {
    const abs = ws.write('edit/crlf.txt', 'one\r\ntwo\r\nthree\r\n');
    const r = await run(host, 'edit_file', { path: 'edit/crlf.txt', old_string: 'one\ntwo', new_string: 'uno\ndos' });
    assert.deepEqual([r.isError, r.errorCode], [true, 'tool_failed']);
    assert.match(r.output, /CRLF \(\\r\\n\) line endings and old_string has bare \\n line breaks: with \\r\\n instead, it would match once/);
    assert.equal(ws.read(abs), 'one\r\ntwo\r\nthree\r\n', 'the match stays exact: nothing changed');
    const exact = await run(host, 'edit_file', { path: 'edit/crlf.txt', old_string: 'one\r\ntwo', new_string: 'uno\r\ndos' });
    assert.equal(exact.isError, false, exact.output);
    assert.equal(ws.read(abs), 'uno\r\ndos\r\nthree\r\n');
  });

  test('an ambiguous old_string is refused unless replace_all', async () => {
    const abs = ws.write('edit/three.ts', 'x = 1;\nx = 1;\nx = 1;\n');
    const r = await run(host, 'edit_file', { path: 'edit/three.ts', old_string: 'x = 1;', new_string: 'x = 2;' });
    assert.equal(r.isError, true);
    assert.match(r.output, /occurs 3 times/);
    assert.equal(ws.read(abs), 'x = 1;\nx = 1;\nx = 1;\n');
    const all = await run(host, 'edit_file', { path: 'edit/three.ts', old_string: 'x = 1;', new_string: 'x = 2;', replace_all: true });
    assert.equal(all.isError, false);
    assert.equal(ws.read(abs), 'x = 2;\nx = 2;\nx = 2;\n');
    assert.match(all.output, /replaced 3 occurrences/);
  });

  test('a missing file is an error; identical strings are invalid input', async () => {
    const r = await run(host, 'edit_file', { path: 'edit/none.ts', old_string: 'a', new_string: 'b' });
    assert.equal(r.isError, true);
    assert.match(r.output, /File not found/);
    assert.equal(existsSync(join(ws.cwd, 'edit/none.ts')), false);
    const same = await run(host, 'edit_file', { path: 'edit/one.ts', old_string: 'a', new_string: 'a' });
    assert.deepEqual([same.isError, same.errorCode], [true, 'invalid_params']);
  });
});

describe('list_dir', () => {
  test('lists sorted entries with markers, defaulting to the cwd', async () => {
    const dir = join(ws.cwd, 'listing');
    mkdirSync(join(dir, 'sub'), { recursive: true });
    writeFileSync(join(dir, 'b.txt'), '');
    writeFileSync(join(dir, 'a.txt'), '');
    symlinkSync('a.txt', join(dir, 'link'));
    const r = await run(host, 'list_dir', { path: 'listing' });
    assert.equal(r.output, 'a.txt\nb.txt\nlink@\nsub/');
    const top = await run(host, 'list_dir', {});
    assert.ok(top.output.split('\n').includes('listing/'), top.output);
  });

  test('bounded by listMaxEntries; empty and missing directories', async () => {
    const dir = join(ws.cwd, 'many');
    mkdirSync(dir);
    for (let i = 0; i < 5; i++) writeFileSync(join(dir, `f${i}`), '');
    const small = createWorkspaceTools({ cwd: ws.cwd, limits: { listMaxEntries: 2 } });
    assert.equal((await run(small, 'list_dir', { path: 'many' })).output, 'f0\nf1\n[... 3 more entries not shown]');
    mkdirSync(join(ws.cwd, 'empty'));
    assert.equal((await run(host, 'list_dir', { path: 'empty' })).output, '[empty is empty]');
    const missing = await run(host, 'list_dir', { path: 'absent' });
    assert.equal(missing.isError, true);
    assert.match(missing.output, /Directory not found: absent/);
  });
});

describe('FIFOs and other special files', () => {
  const fifos: string[] = [];
  // Without the guard against special files, each call below blocks in open(2) until a peer opens
  // the other end. Opening read-write never blocks on Linux and releases them, so that a regression
  // fails (by the test timeout) instead of keeping the test process alive.
  after(() => {
    for (const f of fifos) closeSync(openSync(f, constants.O_RDWR | constants.O_NONBLOCK));
  });

  test('read_file, edit_file, write_file and grep refuse a FIFO instead of blocking on it', { timeout: 20_000 }, async () => {
    const fifo = join(ws.cwd, 'pipe');
    execFileSync('mkfifo', [fifo]);
    fifos.push(fifo);
    const calls: Array<[string, Record<string, unknown>]> = [
      ['read_file', { path: 'pipe' }],
      ['edit_file', { path: 'pipe', old_string: 'a', new_string: 'b' }],
      ['write_file', { path: 'pipe', content: 'x' }],
      ['grep', { pattern: 'x', path: 'pipe' }],
    ];
    for (const [name, input] of calls) {
      const r = await run(host, name, input);
      assert.deepEqual([r.isError, r.errorCode], [true, 'tool_failed'], `${name}: ${r.output}`);
      assert.match(r.output, /pipe is not a regular file/, name);
    }
    assert.equal(lstatSync(fifo).isFIFO(), true, 'the FIFO is left as it was');
  });
});

describe('edit_file on files that are not UTF-8 text', () => {
  test('a Latin-1 file and a binary file are refused and left byte for byte as they were', async () => {
    const latin1 = Buffer.from('caf\xe9\nna\xefve\n', 'latin1');
    writeFileSync(join(ws.cwd, 'latin1.txt'), latin1);
    const r = await run(host, 'edit_file', { path: 'latin1.txt', old_string: 'caf', new_string: 'CAF' });
    assert.deepEqual([r.isError, r.errorCode], [true, 'tool_failed'], r.output);
    assert.match(r.output, /latin1\.txt is not valid UTF-8/);
    assert.deepEqual(readFileSync(join(ws.cwd, 'latin1.txt')), latin1);

    const blob = Buffer.from([0x61, 0x00, 0x62, 0xff, 0xfe, 0x0a]);
    writeFileSync(join(ws.cwd, 'blob2.bin'), blob);
    const b = await run(host, 'edit_file', { path: 'blob2.bin', old_string: 'a', new_string: 'c' });
    assert.deepEqual([b.isError, b.errorCode], [true, 'tool_failed'], b.output);
    assert.match(b.output, /binary/);
    assert.deepEqual(readFileSync(join(ws.cwd, 'blob2.bin')), blob);
  });

  test('a valid UTF-8 file that contains U+FFFD itself is still edited', async () => {
    const abs = ws.write('fffd.txt', 'bad \uFFFD char\nkeep ü\n');
    const r = await run(host, 'edit_file', { path: 'fffd.txt', old_string: 'bad', new_string: 'odd' });
    assert.equal(r.isError, false, r.output);
    assert.equal(ws.read(abs), 'odd \uFFFD char\nkeep ü\n');
  });
});
