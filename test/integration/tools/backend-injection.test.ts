// When the ACP client offers fs and terminals, the tools must go through the injected backends.
// These doubles stand in for the client bridge (a port double): they record every call.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createWorkspaceTools, DEFAULT_LIMITS } from '../../../src/tools/index.js';
import type { CommandBackend, CommandRequest, FileBackend, ReadWindow } from '../../../src/tools/index.js';
import type { ToolHost } from '../../../src/core/ports.js';
import { call, makeWorkspace, run, runContext, type Workspace } from './workspace.fixture.js';

let ws: Workspace;
let host: ToolHost;
const fileCalls: Array<{ op: 'read' | 'write'; path: string; window?: ReadWindow; content?: string }> = [];
const buffers = new Map<string, string>();
const commandCalls: CommandRequest[] = [];

/** Editor buffers: what the client says a file contains, which may differ from the disk. */
const editorFiles: FileBackend = {
  async readText(path, window) {
    fileCalls.push({ op: 'read', path, window });
    const text = buffers.get(path);
    if (text === undefined) throw Object.assign(new Error('no buffer'), { code: 'ENOENT' });
    const lines = text.split('\n').slice((window.line ?? 1) - 1);
    return (window.limit === undefined ? lines : lines.slice(0, window.limit)).join('\n');
  },
  async writeText(path, content) {
    fileCalls.push({ op: 'write', path, content });
    buffers.set(path, content);
  },
};

const clientTerminal: CommandBackend = {
  async run(request, ctx) {
    commandCalls.push(request);
    ctx.update([{ type: 'terminal', terminalId: 'term-1' }]);
    return { output: 'from the client terminal\n', truncated: false, exitCode: 0, signal: null, timedOut: false, terminalId: 'term-1' };
  },
};

before(() => {
  ws = makeWorkspace();
  host = createWorkspaceTools({ cwd: ws.cwd, files: editorFiles, commands: clientTerminal, limits: { commandOutputBytes: 4096 } });
});
after(() => ws.dispose());

test('read_file reads the editor buffer, not the disk', async () => {
  const abs = ws.write('a.ts', 'disk content\n');
  buffers.set(abs, 'buffer content\nline 2\n');
  const r = await run(host, 'read_file', { path: 'a.ts', offset: 2, limit: 1 });
  assert.equal(r.isError, false, r.output);
  assert.equal(r.output, 'line 2\n');
  assert.deepEqual(fileCalls.at(-1), { op: 'read', path: abs, window: { line: 2, limit: 3, maxChars: DEFAULT_LIMITS.readMaxBytes + 1 } });
});

test('edit_file reads and writes through the backend; the disk is untouched', async () => {
  const abs = join(ws.cwd, 'a.ts');
  fileCalls.length = 0;
  const r = await run(host, 'edit_file', { path: 'a.ts', old_string: 'buffer', new_string: 'edited' });
  assert.equal(r.isError, false, r.output);
  assert.deepEqual(fileCalls, [
    { op: 'read', path: abs, window: { maxBytes: DEFAULT_LIMITS.maxFileBytes } },
    { op: 'write', path: abs, content: 'edited content\nline 2\n' },
  ]);
  assert.equal(ws.read(abs), 'disk content\n');
  assert.deepEqual(r.content, [{ type: 'diff', path: abs, oldText: 'buffer content\nline 2\n', newText: 'edited content\nline 2\n' }]);
});

test('write_file writes through the backend', async () => {
  fileCalls.length = 0;
  const abs = join(ws.cwd, 'gen/new.ts');
  const r = await run(host, 'write_file', { path: 'gen/new.ts', content: 'generated\n' });
  assert.equal(r.isError, false, r.output);
  assert.deepEqual(fileCalls, [{ op: 'write', path: abs, content: 'generated\n' }]);
  assert.equal(existsSync(abs), false, 'the local disk was written');
  assert.equal(buffers.get(abs), 'generated\n');
});

test('the path guard applies whatever the backend', async () => {
  fileCalls.length = 0;
  const r = await run(host, 'write_file', { path: ws.secret, content: 'x' });
  assert.equal(r.errorCode, 'path_outside_workspace');
  assert.deepEqual(fileCalls, []);
});

test('run_command goes through the command backend and embeds its terminal', async () => {
  const ctx = runContext();
  const r = await host.run(call('run_command', { command: 'npm test', timeout_ms: 5000 }), ctx);
  assert.deepEqual(commandCalls, [{ command: 'npm test', cwd: ws.cwd, timeoutMs: 5000, outputByteLimit: 4096 }]);
  assert.deepEqual(ctx.updates, [[{ type: 'terminal', terminalId: 'term-1' }]]);
  assert.deepEqual(r.content, [{ type: 'terminal', terminalId: 'term-1' }]);
  assert.equal(r.output, 'from the client terminal\n[exit code: 0]');
});
