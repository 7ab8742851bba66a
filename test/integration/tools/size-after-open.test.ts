// The size limits of grep, edit_file and write_file hold for the file actually read: a file that
// grows, or is swapped for a bigger one, after the tool checked the size on its path is not read
// whole. Each test makes the change land right after the check, where another process's would.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, readlinkSync, renameSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import fsPromises, { open, type FileHandle } from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import { readAtMost } from '../../../src/tools/confined-open.js';
import { createLocalFileBackend } from '../../../src/tools/local-file.backend.js';
import { createWorkspaceTools, FileTooLargeError, type FileBackend } from '../../../src/tools/index.js';
import { makeWorkspace, run, type Workspace } from './workspace.fixture.js';

let ws: Workspace;
before(() => (ws = makeWorkspace()));
after(() => ws.dispose());

const signal = new AbortController().signal;
const LIMIT = 1000;
/** What edit_file's message about a file too large tells the model to do instead. */
const INSTEAD = 'Edit it with run_command instead (e.g. sed -i, or a patch), or read the part you need with read_file (offset and limit).';

/** The local backend, the file at `path` growing past the limit just before each read opens it; records what each read returned. */
function growingBackend(path: string): { files: FileBackend; returned: number[] } {
  const local = createLocalFileBackend();
  const returned: number[] = [];
  const files: FileBackend = {
    async readText(p, w, s) {
      if (p === path) appendFileSync(path, 'z'.repeat(5 * LIMIT));
      const text = await local.readText(p, w, s);
      returned.push(text.length);
      return text;
    },
    writeText: (p, c, s) => local.writeText(p, c, s),
  };
  return { files, returned };
}

test('grep skips a file swapped for a bigger one between its size check and its open, unread', async () => {
  const small = ws.write('swap/a.txt', 'small\n');
  const big = join(ws.root, 'big.txt');
  writeFileSync(big, 'x'.repeat(5 * LIMIT) + '\nneedle\n');
  const host = createWorkspaceTools({ cwd: ws.cwd, limits: { grepMaxFileBytes: LIMIT } });
  // The swap lands just before grep opens the file, after anything it looked at on the path.
  const realOpen = fsPromises.open;
  fsPromises.open = (async (path: Parameters<typeof open>[0], ...rest: unknown[]) => {
    if (String(path) === small) renameSync(big, small);
    return (realOpen as (...a: unknown[]) => Promise<FileHandle>)(path, ...rest);
  }) as typeof open;
  syncBuiltinESMExports();
  try {
    const r = await run(host, 'grep', { pattern: 'needle', path: 'swap' });
    assert.equal(r.isError, false, r.output);
    assert.equal(r.output, `No matches for \`needle\` in swap.\n[1 file(s) over ${LIMIT} bytes skipped]`);
    assert.match(readFileSync(small, 'utf8'), /needle/, 'the swap happened');
  } finally {
    fsPromises.open = realOpen;
    syncBuiltinESMExports();
  }
});

test('edit_file refuses a file that grew past the limit after its size check, and never holds it whole', async () => {
  const path = ws.write('grow/edit.txt', 'old\n');
  const { files, returned } = growingBackend(path);
  const host = createWorkspaceTools({ cwd: ws.cwd, files, limits: { maxFileBytes: LIMIT } });
  const r = await run(host, 'edit_file', { path: 'grow/edit.txt', old_string: 'old', new_string: 'new' });
  assert.deepEqual([r.isError, r.errorCode], [true, 'tool_failed'], r.output);
  assert.equal(r.output, `grow/edit.txt is more than ${LIMIT} bytes, over the ${LIMIT}-byte limit for edit_file. ${INSTEAD}`);
  assert.deepEqual(returned, [], 'no read returned the grown file');
  assert.equal(readFileSync(path, 'utf8'), `old\n${'z'.repeat(5 * LIMIT)}`, 'unchanged');
});

test('edit_file refuses a file that grew to GiBs between its read and its look at the bytes on disk, without reading it, and leaves it', async () => {
  // Not UTF-8 (Latin-1 é): edit_file looks at the bytes on disk before writing the text back.
  const path = join(ws.cwd, 'grow/latin1.txt');
  writeFileSync(path, Buffer.from('caf\xe9 old\n', 'latin1'));
  const huge = 3 * 2 ** 30; // sparse: nothing is written; past 2 GiB, a whole read fails outright
  const local = createLocalFileBackend();
  const files: FileBackend = {
    // The growth lands between edit_file's (bounded) read of the text and its look at the bytes.
    readText: async (p, w, s) => {
      const text = await local.readText(p, w, s);
      if (p === path) truncateSync(path, huge);
      return text;
    },
    writeText: (p, c, s) => local.writeText(p, c, s),
  };
  const host = createWorkspaceTools({ cwd: ws.cwd, files, limits: { maxFileBytes: LIMIT } });
  const r = await run(host, 'edit_file', { path: 'grow/latin1.txt', old_string: 'old', new_string: 'new' });
  assert.deepEqual([r.isError, r.errorCode], [true, 'tool_failed'], r.output);
  assert.equal(r.output, `grow/latin1.txt is more than ${LIMIT} bytes, over the ${LIMIT}-byte limit for edit_file. ${INSTEAD}`);
  assert.equal(statSync(path).size, huge, 'not replaced by the edited text');
  truncateSync(path, 0);
});

test('write_file shows a file that grew past the limit after its size check as newly written, not read whole', async () => {
  const path = ws.write('grow/write.txt', 'old\n');
  const { files, returned } = growingBackend(path);
  const host = createWorkspaceTools({ cwd: ws.cwd, files, limits: { maxFileBytes: LIMIT } });
  const r = await run(host, 'write_file', { path: 'grow/write.txt', content: 'new\n' });
  assert.equal(r.isError, false, r.output);
  assert.deepEqual(r.content, [{ type: 'diff', path, oldText: null, newText: 'new\n' }]);
  assert.deepEqual(returned, [], 'no read returned the grown file');
  assert.equal(readFileSync(path, 'utf8'), 'new\n');
});

test('a .gitignore that grows past 1 MiB after its size was looked at is not read whole, and is left out as one that large always is', async () => {
  const gitignore = ws.write('ignore-grows/.gitignore', '# nothing yet\n');
  ws.write('ignore-grows/kept.txt', 'kept');
  // The growth lands before the first byte of the .gitignore is read, after any size looked at.
  const probe = await open(gitignore, 'r');
  const proto = Object.getPrototypeOf(probe) as Record<'read' | 'readFile', (this: FileHandle, ...args: unknown[]) => unknown>;
  await probe.close();
  const real = { read: proto.read, readFile: proto.readFile };
  let grown = false;
  const growingFirst = (original: (this: FileHandle, ...args: unknown[]) => unknown) =>
    function (this: FileHandle, ...args: unknown[]) {
      if (!grown && readlinkSync(`/proc/self/fd/${this.fd}`) === gitignore) {
        grown = true;
        appendFileSync(gitignore, `${'#'.repeat(2 * 2 ** 20)}\nkept.txt\n`);
      }
      return original.apply(this, args);
    };
  proto.read = growingFirst(real.read);
  proto.readFile = growingFirst(real.readFile);
  try {
    const host = createWorkspaceTools({ cwd: ws.cwd });
    const r = await run(host, 'glob', { pattern: '*.txt', path: 'ignore-grows' });
    assert.equal(grown, true, 'the growth happened');
    assert.equal(r.output, 'ignore-grows/kept.txt', 'the grown .gitignore, over 1 MiB, ignores nothing');
  } finally {
    Object.assign(proto, real);
  }
});

test('a local read with maxBytes returns a file of that many bytes and refuses one more', async () => {
  const at = ws.write('bound/at.txt', 'é'.repeat(LIMIT / 2));
  const over = ws.write('bound/over.txt', `${'é'.repeat(LIMIT / 2)}!`);
  const local = createLocalFileBackend();
  assert.equal(await local.readText(at, { maxBytes: LIMIT }, signal), 'é'.repeat(LIMIT / 2));
  assert.equal(await local.readText(at, { maxBytes: LIMIT, line: 1, limit: 1, maxChars: 3 }, signal), 'ééé', 'the window still applies');
  await assert.rejects(local.readText(over, { maxBytes: LIMIT }, signal), (err: unknown) => err instanceof FileTooLargeError && err.maxBytes === LIMIT);
});

test('readAtMost stops at the bound when the file grows after the open handle was measured', async () => {
  const path = ws.write('bound/grows.txt', 'start\n');
  const handle = await open(path, 'r');
  try {
    // The growth lands between the handle's size and the reads that follow.
    const growing = {
      stat: async () => {
        const info = await handle.stat();
        appendFileSync(path, 'y'.repeat(3 * LIMIT));
        return info;
      },
      read: handle.read.bind(handle),
    } as unknown as FileHandle;
    assert.equal(await readAtMost(growing, LIMIT), undefined);
    // Within the bound, what is there is read, growth included.
    writeFileSync(path, 'short');
    assert.equal((await readAtMost(growing, 10 * LIMIT))?.toString(), `short${'y'.repeat(3 * LIMIT)}`);
  } finally {
    await handle.close();
  }
});
