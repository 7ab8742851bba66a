// A directory of very many entries is listed and searched in bounded memory: list_dir shows 1000
// entries and a search examines a bounded number, so neither may hold the whole directory. Each call
// runs in a process of its own under a heap budget far below what the whole directory takes
// (readdir: about 250 bytes an entry), as a daemon's session process runs under --child-memory-mb.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ToolResult } from '../../../src/core/ports.js';
import { makeWorkspace, type Workspace } from './workspace.fixture.js';

const ENTRIES = 100_000;
/** MiB of V8 heap for the call: the whole directory's entries take some 25 more. */
const HEAP_MB = 16;

let ws: Workspace;
before(() => {
  ws = makeWorkspace();
  const dir = join(ws.cwd, 'many');
  mkdirSync(dir);
  // Dangling symlinks: the cheapest entries to make (no file, nothing to write).
  for (let i = 0; i < ENTRIES; i++) symlinkSync('nowhere', join(dir, `n${String(i).padStart(6, '0')}`));
  writeFileSync(join(dir, 'a1.txt'), 'one');
  writeFileSync(join(dir, 'a2.txt'), 'two');
  // A name that is not UTF-8 (Latin-1 é), sorting after all the others.
  writeFileSync(Buffer.from(`${dir}/z\xe9.txt`, 'latin1'), 'latin');
});
after(() => ws.dispose());

/** One call in a process of its own with a heap of HEAP_MB. */
function runBounded(name: string, input: Record<string, unknown>, limits: Record<string, number> = {}): ToolResult {
  const host = new URL('../../support/tool-call-host.js', import.meta.url).pathname;
  const child = spawnSync(process.execPath, [`--max-old-space-size=${HEAP_MB}`, host, ws.cwd, name, JSON.stringify(input), JSON.stringify(limits)], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  assert.equal(child.status, 0, `the call's process failed (${child.signal ?? child.status}):\n${child.stderr.split('\n').slice(0, 8).join('\n')}`);
  return JSON.parse(child.stdout) as ToolResult;
}

test(`list_dir lists a directory of ${ENTRIES} entries within a ${HEAP_MB} MiB heap: its first 1000 by name, and how many more`, () => {
  const r = runBounded('list_dir', { path: 'many' });
  assert.equal(r.isError, false, r.output);
  const lines = r.output.split('\n');
  assert.deepEqual(lines.slice(0, 4), ['a1.txt', 'a2.txt', 'n000000@', 'n000001@']);
  assert.equal(lines[999], 'n000997@');
  assert.deepEqual(lines.slice(1000), [`[... ${ENTRIES + 3 - 1000} more entries not shown]`]);
});

test(`glob and grep walk a directory of ${ENTRIES} entries within a ${HEAP_MB} MiB heap, up to their entry budget, in name order`, () => {
  const limits = { searchMaxEntries: 1000 };
  const found = runBounded('glob', { pattern: '*.txt', path: 'many' }, limits);
  assert.equal(found.output, 'many/a1.txt\nmany/a2.txt\n[search stopped after examining 1000 entries; some files were not considered]');
  const matched = runBounded('grep', { pattern: 'two', path: 'many' }, limits);
  assert.equal(matched.output, 'many/a2.txt:1: two\n[search stopped after examining 1000 entries; some files were not searched]');
});

test(`a path with a U+FFFD into a directory of ${ENTRIES} entries is told apart from a missing one within a ${HEAP_MB} MiB heap`, () => {
  const r = runBounded('read_file', { path: 'many/z\uFFFD.txt' });
  assert.deepEqual([r.isError, r.errorCode], [true, 'tool_failed'], r.output);
  assert.match(r.output, /^many\/z\uFFFD\.txt cannot be opened: the name z\uFFFD\.txt there is not UTF-8 .* In run_command it is "\$\(printf 'z\\351\.txt'\)"\.$/);
  const missing = runBounded('read_file', { path: 'many/y\uFFFD.txt' });
  assert.equal(missing.output, 'File not found: many/y\uFFFD.txt');
});
