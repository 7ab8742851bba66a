// The local FileBackend checks the file it actually opens: a symlink swapped in after the path
// guard's check (by another process) must not lead a read or a write outside the workspace. Each
// test puts the workspace in the state such a swap leaves: a path that passed the guard now leads
// outside. (Linux: the check reads /proc/self/fd.)
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createLocalFileBackend } from '../../../src/tools/local-file.backend.js';
import { isWithin } from '../../../src/tools/path-guard.js';
import { createWorkspaceTools } from '../../../src/tools/index.js';
import { makeWorkspace, run, SECRET, type Workspace } from './workspace.fixture.js';

let ws: Workspace;
before(() => (ws = makeWorkspace()));
after(() => ws.dispose());

const signal = new AbortController().signal;
const backend = () => createLocalFileBackend({ confine: (real) => isWithin(ws.cwd, real) });

/** Points `link` (inside the cwd) at `target`, replacing what it pointed at. */
function swap(link: string, target: string): string {
  const abs = join(ws.cwd, link);
  try {
    unlinkSync(abs);
  } catch {
    // nothing there yet
  }
  symlinkSync(target, abs);
  return abs;
}

test('a read through a symlink that now leads outside is refused, whole or windowed', async () => {
  const link = swap('swapped.txt', ws.secret);
  await assert.rejects(backend().readText(link, {}, signal), { code: 'path_outside_workspace' });
  await assert.rejects(backend().readText(link, { line: 1, limit: 10 }, signal), { code: 'path_outside_workspace' });
  // A symlinked parent directory swapped out.
  const dir = swap('swapped-dir', ws.outside);
  await assert.rejects(backend().readText(join(dir, 'secret.txt'), {}, signal), { code: 'path_outside_workspace' });
});

test('a write through a symlink that now leads outside changes nothing there', async () => {
  const link = swap('swapped-w.txt', ws.secret);
  await assert.rejects(backend().writeText(link, 'overwritten', signal), { code: 'path_outside_workspace' });
  assert.equal(readFileSync(ws.secret, 'utf8'), SECRET, 'the outside file is neither truncated nor written');
  // A new file below a swapped parent: created by the open, then removed.
  const dir = swap('swapped-wdir', ws.outside);
  await assert.rejects(backend().writeText(join(dir, 'planted.txt'), 'planted', signal), { code: 'path_outside_workspace' });
  assert.equal(existsSync(join(ws.outside, 'planted.txt')), false);
});

test('a file outside named like the workspace plus " (deleted)" is not taken for the workspace', async () => {
  // /proc/self/fd names an unlinked file "<path> (deleted)"; this one is linked, and lies beside the cwd.
  const beside = `${ws.cwd} (deleted)`;
  writeFileSync(beside, SECRET);
  const link = swap('to-beside.txt', beside);
  await assert.rejects(backend().readText(link, {}, signal), { code: 'path_outside_workspace' });
  await assert.rejects(backend().writeText(link, 'overwritten', signal), { code: 'path_outside_workspace' });
  assert.equal(readFileSync(beside, 'utf8'), SECRET);
  unlinkSync(beside);
});

test('inside, writes still go through symlinks, dangling ones included, and keep the file in place', async () => {
  mkdirSync(join(ws.cwd, 'real'), { recursive: true });
  const dangling = swap('to-new.txt', 'real/new.txt');
  await backend().writeText(dangling, 'created through the link', signal);
  assert.equal(readFileSync(join(ws.cwd, 'real/new.txt'), 'utf8'), 'created through the link');
  await backend().writeText(dangling, 'short', signal);
  assert.equal(readFileSync(join(ws.cwd, 'real/new.txt'), 'utf8'), 'short', 'replaced, not appended or left with a tail');
  assert.equal(await backend().readText(dangling, { line: 1, limit: 1 }, signal), 'short');
});

test('a FIFO swapped in after the tool looked is refused, not waited on', { timeout: 20_000 }, async () => {
  const fifo = join(ws.cwd, 'became-a-fifo');
  execFileSync('mkfifo', [fifo]);
  await assert.rejects(backend().readText(fifo, {}, signal), { code: 'tool_failed', message: /not a regular file/ });
  await assert.rejects(backend().writeText(fifo, 'x', signal), (err: NodeJS.ErrnoException) => err.code === 'ENXIO' || err.code === 'tool_failed');
});

test('edit_file checks the bytes of the file it opens: a FIFO swapped in after its read is not waited on', { timeout: 20_000 }, async () => {
  // Not UTF-8 (Latin-1 é): edit_file looks at the bytes on disk before writing the text back.
  const file = join(ws.cwd, 'latin1.txt');
  writeFileSync(file, Buffer.from('caf\xe9 old\n', 'latin1'));
  const local = backend();
  const host = createWorkspaceTools({
    cwd: ws.cwd,
    files: {
      // The swap lands between edit_file's read and its look at the bytes.
      readText: async (p, w, s) => {
        const text = await local.readText(p, w, s);
        unlinkSync(file);
        execFileSync('mkfifo', [file]);
        return text;
      },
      writeText: (p, c, s) => local.writeText(p, c, s),
    },
  });
  const r = await run(host, 'edit_file', { path: 'latin1.txt', old_string: 'old', new_string: 'new' });
  assert.equal(r.isError, true, r.output);
  assert.equal(r.errorCode, 'tool_failed', r.output);
});
