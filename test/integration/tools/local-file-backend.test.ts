// The local FileBackend's line window: the same text as slicing the whole file, without reading it all.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, openSync, ftruncateSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { createLocalFileBackend, sliceLines } from '../../../src/tools/local-file.backend.js';
import { createWorkspaceTools } from '../../../src/tools/index.js';
import { makeWorkspace, run, type Workspace } from './workspace.fixture.js';

const seed = process.env.FC_SEED ? Number(process.env.FC_SEED) : Date.now() ^ (Math.random() * 2 ** 31);
console.log('fast-check seed', seed);

let ws: Workspace;
before(() => (ws = makeWorkspace()));
after(() => ws.dispose());

const backend = createLocalFileBackend();
const signal = new AbortController().signal;

test('a window read equals slicing the whole text (lines of any length, multi-byte characters)', async () => {
  const file = join(ws.cwd, 'window.txt');
  // Long lines so that texts cross the stream's 64 KiB chunks, in and between lines and characters.
  const line = fc.oneof(fc.string({ unit: fc.constantFrom('a', 'é', '€', '😀', '\r') }), fc.constantFrom('', 'x'.repeat(70_000), '€'.repeat(30_000)));
  await fc.assert(
    fc.asyncProperty(
      fc.array(line, { maxLength: 12 }),
      fc.option(fc.integer({ min: 1, max: 15 }), { nil: undefined }),
      fc.option(fc.integer({ min: 1, max: 15 }), { nil: undefined }),
      fc.option(fc.oneof(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 60_000, max: 150_000 })), { nil: undefined }),
      async (lines, from, limit, maxChars) => {
        const text = lines.join('\n');
        writeFileSync(file, text);
        const window = { ...(from !== undefined ? { line: from } : {}), ...(limit !== undefined ? { limit } : {}), ...(maxChars !== undefined ? { maxChars } : {}) };
        assert.equal(await backend.readText(file, window, signal), sliceLines(text, window));
      },
    ),
    { seed, numRuns: 150 },
  );
});

test('read_file reads a window at the start of a file too large to hold as one string', async () => {
  // Ten lines, then a sparse run of NUL bytes to 600 MiB (beyond V8's 512 MiB string limit); no
  // disk space is used and only the first chunk is read.
  const file = ws.write('huge.log', Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n') + '\n');
  const fd = openSync(file, 'r+');
  ftruncateSync(fd, 600 * 1024 * 1024);
  closeSync(fd);
  const host = createWorkspaceTools({ cwd: ws.cwd });
  const r = await run(host, 'read_file', { path: 'huge.log', offset: 2, limit: 3 });
  assert.equal(r.isError, false, r.output);
  assert.equal(r.output, 'line 2\nline 3\nline 4\n\n[showing lines 2-4; the file continues: read again with offset 5]');
});

test('read_file with a window on a huge file without line breaks reads only what it can show', async () => {
  // 600 MiB of sparse NUL bytes, no line break: the first line is the whole file. Read whole, the
  // window cost memory of the file's size and failed past V8's string limit ("Invalid string
  // length"); read up to the output budget, it is seen to be binary.
  const file = join(ws.cwd, 'huge.bin');
  const fd = openSync(file, 'w');
  ftruncateSync(fd, 600 * 1024 * 1024);
  closeSync(fd);
  const host = createWorkspaceTools({ cwd: ws.cwd });
  const r = await run(host, 'read_file', { path: 'huge.bin', offset: 1 });
  assert.equal(r.errorCode, 'tool_failed');
  assert.equal(r.output, 'huge.bin looks like a binary file (it contains NUL bytes); read_file only reads text.');
});

test('a line longer than the budget is read only up to it, and what follows it is still told', async () => {
  const host = createWorkspaceTools({ cwd: ws.cwd, limits: { readMaxBytes: 1000 } });
  const cut = (more: string) => `${'x'.repeat(1000)}\n[line 1 is longer than 1000 bytes and was cut here; read_file cannot show the rest of it (use grep or run_command)${more}]`;
  ws.write('one-long-line.txt', 'x'.repeat(200_000));
  assert.equal((await run(host, 'read_file', { path: 'one-long-line.txt', limit: 3 })).output, cut(''));
  ws.write('long-line-newline.txt', `${'x'.repeat(200_000)}\n`);
  assert.equal((await run(host, 'read_file', { path: 'long-line-newline.txt' })).output, cut(''));
  ws.write('long-line-then-empty.txt', `${'x'.repeat(200_000)}\n\n`);
  assert.equal((await run(host, 'read_file', { path: 'long-line-then-empty.txt' })).output, cut('; the file continues: read again with offset 2'));
  ws.write('long-line-then-short.txt', `${'x'.repeat(200_000)}\nshort`);
  assert.equal((await run(host, 'read_file', { path: 'long-line-then-short.txt' })).output, cut('; the file continues: read again with offset 2'));
});

test('a write cancelled while it runs leaves the old or the new content, never a cut file', async () => {
  const file = ws.write('cancelled-write.txt', 'o'.repeat(4 * 1024 * 1024));
  const controller = new AbortController();
  const writing = backend.writeText(file, 'n'.repeat(4 * 1024 * 1024), controller.signal).catch(() => undefined);
  // The write has begun (its open is under way) when the cancel arrives.
  setImmediate(() => controller.abort());
  await writing;
  const text = readFileSync(file, 'utf8');
  assert.ok(text === 'o'.repeat(4 * 1024 * 1024) || text === 'n'.repeat(4 * 1024 * 1024), `the file holds ${text.length} bytes of mixed or cut content`);
  await assert.rejects(backend.writeText(file, 'late', controller.signal), { name: 'AbortError' });
  assert.equal(readFileSync(file, 'utf8').length, 4 * 1024 * 1024, 'an already cancelled write does not start');
});

test('a window read cancelled before it starts rejects with the abort, and no stray stream error crashes the process', async () => {
  const path = join(ws.cwd, 'cancelled.txt');
  writeFileSync(path, 'one\ntwo\nthree\n');
  const cancel = new AbortController();
  cancel.abort();
  const uncaught: unknown[] = [];
  const onUncaught = (err: unknown) => uncaught.push(err);
  process.on('uncaughtException', onUncaught);
  try {
    await assert.rejects(backend.readText(path, { line: 2, limit: 1 }, cancel.signal), (e: Error) => e.name === 'AbortError');
    // A stream that errors twice (once to the reader, once more after it) does so within a tick or two.
    await new Promise((r) => setTimeout(r, 50));
  } finally {
    process.off('uncaughtException', onUncaught);
  }
  assert.deepEqual(uncaught, []);
  // And a read with a live signal still works on the same backend.
  assert.equal(await backend.readText(path, { line: 2, limit: 1 }, signal), 'two');
});
