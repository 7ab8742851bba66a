// A write that fails midway (disk full, quota, file-size limit) leaves the old content, never a cut
// file. The failure is real: the tools run in a child process under `ulimit -f` (RLIMIT_FSIZE), so
// its writes past the limit fail with EFBIG as they would with ENOSPC on a full disk.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, linkSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeWorkspace, run, type Workspace } from './workspace.fixture.js';
import { createWorkspaceTools } from '../../../src/tools/index.js';

let ws: Workspace;
before(() => (ws = makeWorkspace()));
after(() => ws.dispose());

const toolsModule = fileURLToPath(new URL('../../../src/tools/index.js', import.meta.url));
/** Old files stay well under the limit (8 KiB or 16 KiB, as the shell counts blocks); new content is far over it. */
const OLD = `first\n${'keep this line\n'.repeat(100)}`;
const HUGE = 'x'.repeat(64 * 1024);

/** Runs one tool call in a child process whose file-size limit a 64 KiB write exceeds; its result. */
function runLimited(name: string, input: Record<string, unknown>): { isError: boolean; errorCode?: string; output: string } {
  const script = `
    const { createWorkspaceTools } = await import(${JSON.stringify(toolsModule)});
    const host = createWorkspaceTools({ cwd: ${JSON.stringify(ws.cwd)} });
    const r = await host.run({ id: 'c1', name: ${JSON.stringify(name)}, input: ${JSON.stringify(input)} }, { signal: new AbortController().signal, update() {} });
    process.stdout.write(JSON.stringify({ isError: r.isError, errorCode: r.errorCode, output: r.output }));`;
  const out = execFileSync('/bin/sh', ['-c', 'ulimit -f 16 && exec "$0" --input-type=module -e "$1"', process.execPath, script], { encoding: 'utf8' });
  return JSON.parse(out) as { isError: boolean; errorCode?: string; output: string };
}

/** Names in the cwd that are not `expected`: a temporary file left behind, a cut new file. */
function strays(expected: string[]): string[] {
  return readdirSync(ws.cwd).filter((n) => !expected.includes(n));
}

test('an edit whose write fails (EFBIG) leaves the file as it was, and no temporary file', () => {
  const file = ws.write('one-link.txt', OLD);
  const r = runLimited('edit_file', { path: 'one-link.txt', old_string: 'first\n', new_string: HUGE });
  assert.equal(r.errorCode, 'tool_failed', r.output);
  assert.match(r.output, /EFBIG/);
  assert.equal(readFileSync(file, 'utf8'), OLD, 'the old content is all there');
  assert.deepEqual(strays(['one-link.txt']), []);
});

test('a hard-linked file whose write fails leaves both names as they were', () => {
  const file = ws.write('linked.txt', OLD);
  linkSync(file, join(ws.cwd, 'linked-too.txt'));
  const r = runLimited('write_file', { path: 'linked.txt', content: `first\n${HUGE}` });
  assert.equal(r.errorCode, 'tool_failed', r.output);
  assert.equal(readFileSync(file, 'utf8'), OLD);
  assert.equal(readFileSync(join(ws.cwd, 'linked-too.txt'), 'utf8'), OLD);
  assert.deepEqual(strays(['one-link.txt', 'linked.txt', 'linked-too.txt']), []);
});

test('a new file whose write fails is not left behind cut', () => {
  const r = runLimited('write_file', { path: 'new.txt', content: HUGE });
  assert.equal(r.errorCode, 'tool_failed', r.output);
  assert.equal(existsSync(join(ws.cwd, 'new.txt')), false);
});

test('a write that succeeds keeps the mode and a symlink on the way, and breaks a hard link', async () => {
  const host = createWorkspaceTools({ cwd: ws.cwd });
  const script = ws.write('tool.sh', '#!/bin/sh\necho old\n');
  chmodSync(script, 0o751);
  const edit = await run(host, 'edit_file', { path: 'tool.sh', old_string: 'old', new_string: 'new' });
  assert.equal(edit.isError, false, edit.output);
  assert.equal(statSync(script).mode & 0o7777, 0o751);
  assert.equal(readFileSync(script, 'utf8'), '#!/bin/sh\necho new\n');

  const shared = ws.write('shared.txt', 'before\n');
  linkSync(shared, join(ws.cwd, 'shared-link.txt'));
  assert.equal((await run(host, 'write_file', { path: 'shared.txt', content: 'after, longer than before\n' })).isError, false);
  assert.equal(readFileSync(shared, 'utf8'), 'after, longer than before\n');
  // The other name may lie outside the workspace (hard-links.test.ts): it keeps the old content.
  assert.equal(readFileSync(join(ws.cwd, 'shared-link.txt'), 'utf8'), 'before\n', 'the other link is left as it was');

  symlinkSync('tool.sh', join(ws.cwd, 'tool-link.sh'));
  assert.equal((await run(host, 'edit_file', { path: 'tool-link.sh', old_string: 'new', new_string: 'newer' })).isError, false);
  assert.equal(readFileSync(script, 'utf8'), '#!/bin/sh\necho newer\n');
  assert.ok(statSync(join(ws.cwd, 'tool-link.sh')).isFile() && readdirSync(ws.cwd).includes('tool-link.sh'));
  assert.equal(execFileSync('readlink', [join(ws.cwd, 'tool-link.sh')], { encoding: 'utf8' }).trim(), 'tool.sh', 'the symlink is still a symlink');
  assert.deepEqual(strays(['one-link.txt', 'linked.txt', 'linked-too.txt', 'tool.sh', 'shared.txt', 'shared-link.txt', 'tool-link.sh']), []);
});

/**
 * Runs one tool call as runLimited does, in a child that is killed (SIGKILL) the moment one of its
 * writes fails: an agent killed midway through a write, at a point the test knows.
 */
function runKilledMidWrite(name: string, input: Record<string, unknown>): NodeJS.Signals | null {
  const script = `
    const { open } = await import('node:fs/promises');
    const probe = await open(process.execPath, 'r');
    const FileHandle = Object.getPrototypeOf(probe);
    await probe.close();
    const write = FileHandle.write;
    FileHandle.write = async function (...args) {
      try {
        return await write.apply(this, args);
      } catch (err) {
        if (err.code === 'EFBIG') process.kill(process.pid, 'SIGKILL');
        throw err;
      }
    };
    const { createWorkspaceTools } = await import(${JSON.stringify(toolsModule)});
    const host = createWorkspaceTools({ cwd: ${JSON.stringify(ws.cwd)} });
    await host.run({ id: 'c1', name: ${JSON.stringify(name)}, input: ${JSON.stringify(input)} }, { signal: new AbortController().signal, update() {} });`;
  return spawnSync('/bin/sh', ['-c', 'ulimit -f 16 && exec "$0" --input-type=module -e "$1"', process.execPath, script]).signal;
}

test('an agent killed midway through a write leaves the old file, and no new file at all, never a cut one', () => {
  const before = readdirSync(ws.cwd);
  assert.equal(runKilledMidWrite('write_file', { path: 'killed-new.txt', content: HUGE }), 'SIGKILL');
  // Until 2026-12-07 a new file was created empty and then written: killed midway, it stayed cut.
  assert.equal(existsSync(join(ws.cwd, 'killed-new.txt')), false, 'a cut new file was left');
  const file = ws.write('killed-old.txt', OLD);
  assert.equal(runKilledMidWrite('edit_file', { path: 'killed-old.txt', old_string: 'first\n', new_string: HUGE }), 'SIGKILL');
  assert.equal(readFileSync(file, 'utf8'), OLD);
  // What a killed write leaves is its temporary file, never the file's name.
  const left = strays([...before, 'killed-old.txt']);
  assert.ok(left.length > 0 && left.every((n) => /^\.killed-(new|old)\.txt\.troupe-[0-9a-f]{12}\.tmp$/.test(n)), left.join(', '));
  for (const n of left) rmSync(join(ws.cwd, n));
});
