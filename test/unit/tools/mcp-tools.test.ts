// A session's MCP tools against a real MCP server process (test/support/mcp-test-server.ts), over
// stdio through the MCP SDK: naming, permissions from the server's hints, results, failures,
// cancel, the environment and cwd the server gets, and that closing stops the process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { isTroupeError } from '../../../src/core/errors.js';
import { silentLogger } from '../../../src/core/ports.js';
import { mcpServersOf } from '../../../src/tools/mcp/mcp-servers.js';
import { connectMcpTools } from '../../../src/tools/mcp/mcp-tools.js';
import { processAlive, waitFor } from '../../support/daemon.js';
import { startHttpMcp } from '../../support/mcp-test-tools.js';

const SERVER = resolve('dist/test/support/mcp-test-server.js');
const server = (name: string, env: Record<string, string> = {}) => ({ transport: 'stdio' as const, name, command: process.execPath, args: [SERVER], env });
const call = (name: string, input: Record<string, unknown> = {}) => ({ id: 'c1', name, input });
const ctx = (signal = new AbortController().signal) => ({ signal, update: () => undefined });
const options = (cwd: string) => ({ cwd, logger: silentLogger, connectTimeoutMs: 20_000, callTimeoutMs: 30_000, outputLimit: 1000, version: 'test' });

test('the tools of a server are offered as mcp__<server>__<tool>, and called on it', async (t) => {
  const cwd = mkdtempSync(join(tmpdir(), 'troupe-mcp-'));
  const saved = process.env.ANTHROPIC_API_KEY;
  process.env.ANTHROPIC_API_KEY = 'sk-ant-not-for-mcp-servers';
  const tools = await connectMcpTools([server('test', { MCP_TEST_VAR: 'given' })], options(cwd)).finally(() => {
    if (saved === undefined) delete process.env.ANTHROPIC_API_KEY;
    else process.env.ANTHROPIC_API_KEY = saved;
  });
  t.after(() => tools.close());
  assert.deepEqual(tools.servers, [{ name: 'test', tools: 5 }]);
  assert.deepEqual(tools.specs().map((s) => s.name).sort(), ['mcp__test__echo', 'mcp__test__env', 'mcp__test__fail', 'mcp__test__hang', 'mcp__test__touch']);
  const echo = tools.specs().find((s) => s.name === 'mcp__test__echo')!;
  assert.match(echo.description, /^Says the text back\.\n\(Tool "echo" of the MCP server "test"\.\)$/);
  assert.equal((echo.inputSchema as { type?: string }).type, 'object');

  // The server's read-only hint decides whether a call needs permission.
  assert.deepEqual(tools.describe(call('mcp__test__echo', { text: 'x' })), { kind: 'read', title: 'echo (test)', locations: [], access: 'read' });
  assert.deepEqual(tools.describe(call('mcp__test__touch', { name: 'f' })), { kind: 'other', title: 'Create a file (test)', locations: [], access: 'execute' });
  assert.throws(() => tools.describe(call('mcp__test__nope')), (e) => isTroupeError(e, 'unknown_tool'));

  assert.deepEqual(await tools.run(call('mcp__test__echo', { text: 'hi' }), ctx()), { output: 'echo: hi', isError: false });
  assert.deepEqual(await tools.run(call('mcp__test__fail'), ctx()), { output: 'it failed on purpose', isError: true, errorCode: 'tool_failed' });
  // The server runs in the session's cwd.
  assert.match((await tools.run(call('mcp__test__touch', { name: 'made.txt' }), ctx())).output, /^created made\.txt/);
  assert.ok(existsSync(join(cwd, 'made.txt')));
  // It sees the variables the client gave it, never troupe's model credentials.
  const seen = JSON.parse((await tools.run(call('mcp__test__env'), ctx())).output) as { MCP_TEST_VAR: string; ANTHROPIC_API_KEY: string | null; pid: number };
  assert.equal(seen.MCP_TEST_VAR, 'given');
  assert.equal(seen.ANTHROPIC_API_KEY, null);
  // Arguments the server refuses come back as a failed call the model can read.
  const bad = await tools.run(call('mcp__test__echo', { text: 42 }), ctx());
  assert.equal(bad.isError, true);
  assert.match(bad.output, /text/);

  // Cancel ends a call the server would otherwise never finish.
  const abort = new AbortController();
  const hanging = tools.run(call('mcp__test__hang'), ctx(abort.signal));
  setTimeout(() => abort.abort(), 50);
  assert.deepEqual(await hanging, { output: 'Cancelled before it finished.', isError: true, errorCode: 'request_cancelled' });

  // Closing stops the server process.
  assert.ok(processAlive(seen.pid));
  await tools.close();
  await waitFor('the server process to exit', () => !processAlive(seen.pid), 5_000);
});

test('a server that does not start is left out, the others serve; a server that exits fails its calls clearly', async (t) => {
  const cwd = mkdtempSync(join(tmpdir(), 'troupe-mcp-'));
  const tools = await connectMcpTools([{ transport: 'stdio' as const, name: 'broken', command: join(cwd, 'no-such-program'), args: [], env: {} }, server('ok')], options(cwd));
  t.after(() => tools.close());
  assert.equal(tools.servers.length, 2);
  assert.deepEqual(tools.servers.find((s) => s.name === 'ok'), { name: 'ok', tools: 5 });
  assert.match(tools.servers.find((s) => s.name === 'broken')?.error ?? '', /ENOENT|spawn/);
  assert.ok(tools.has('mcp__ok__echo') && !tools.specs().some((s) => s.name.startsWith('mcp__broken__')));

  const { pid } = JSON.parse((await tools.run(call('mcp__ok__env'), ctx())).output) as { pid: number };
  process.kill(pid, 'SIGKILL');
  await waitFor('the killed server to exit', () => !processAlive(pid), 5_000);
  const after = await tools.run(call('mcp__ok__echo', { text: 'x' }), ctx());
  assert.equal(after.isError, true);
  assert.match(after.output, /MCP server ok has exited|MCP server ok failed/);
});

test('server names become safe, distinct tool names', async (t) => {
  const cwd = mkdtempSync(join(tmpdir(), 'troupe-mcp-'));
  const tools = await connectMcpTools([server('my server!'), server('my server?')], options(cwd));
  t.after(() => tools.close());
  const names = tools.specs().map((s) => s.name).filter((n) => n.endsWith('echo') || n.endsWith('echo_2'));
  assert.deepEqual(names.sort(), ['mcp__my_server___echo', 'mcp__my_server___echo_2']);
  for (const s of tools.specs()) assert.match(s.name, /^[A-Za-z0-9_-]{1,64}$/);
});

test('an HTTP server is reached with the headers the client gave', async (t) => {
  const web = await startHttpMcp();
  t.after(() => web.close());
  const tools = await connectMcpTools([{ transport: 'http', name: 'web', url: web.url, headers: { Authorization: 'Bearer for-the-server' } }], options(mkdtempSync(join(tmpdir(), 'troupe-mcp-'))));
  t.after(() => tools.close());
  assert.deepEqual(tools.servers, [{ name: 'web', tools: 5 }]);
  assert.deepEqual(await tools.run(call('mcp__web__echo', { text: 'over http' }), ctx()), { output: 'echo: over http', isError: false });
  assert.ok(web.authorizations.length > 0 && web.authorizations.every((a) => a === 'Bearer for-the-server'), 'every request carried the header');
});

test('the servers of a request: stdio and http ones are used, the others left out with a reason, bad ones refused', () => {
  const { servers, skipped } = mcpServersOf([
    { name: 'a', command: 'node', args: ['s.js'], env: [{ name: 'K', value: 'v' }] },
    { type: 'http', name: 'h', url: 'http://127.0.0.1:1/mcp', headers: [{ name: 'Authorization', value: 'Bearer x' }] },
    { type: 'sse', name: 's', url: 'http://127.0.0.1:1/sse', headers: [] },
  ]);
  assert.deepEqual(servers, [
    { transport: 'stdio', name: 'a', command: 'node', args: ['s.js'], env: { K: 'v' } },
    { transport: 'http', name: 'h', url: 'http://127.0.0.1:1/mcp', headers: { Authorization: 'Bearer x' } },
  ]);
  assert.deepEqual(skipped, [{ name: 's', reason: 'troupe does not connect to sse MCP servers (stdio and http only)' }]);
  assert.deepEqual(mcpServersOf(undefined), { servers: [], skipped: [] });
  assert.throws(() => mcpServersOf([{ name: 'a', command: '' }]), (e) => isTroupeError(e, 'invalid_params'));
  assert.throws(() => mcpServersOf([{ type: 'http', name: 'h', url: 'file:///etc/passwd', headers: [] }]), (e) => isTroupeError(e, 'invalid_params') && /http\(s\) url/.test(e.message));
  assert.throws(() => mcpServersOf([{ name: 'a', command: 'x' }, { name: 'a', command: 'y' }]), (e) => isTroupeError(e, 'invalid_params') && /two MCP servers/.test(e.message));
});

test("a server's prompts are commands: listed, expanded by the server, re-listed when it says they changed", async (t) => {
  const cwd = mkdtempSync(join(tmpdir(), 'troupe-mcp-'));
  let changed = 0;
  const tools = await connectMcpTools([server('test', { MCP_TEST_LATE_PROMPT_MS: '300' })], { ...options(cwd), onCommandsChanged: () => void changed++ });
  t.after(() => tools.close());
  assert.deepEqual(tools.commands().map((c) => c.name), ['mcp__test__greet', 'mcp__test__recap']);
  assert.deepEqual(await tools.expand('mcp__test__greet', 'Ada warm'), [{ type: 'text', text: 'Please greet Ada in a warm way.' }]);
  await assert.rejects(tools.expand('mcp__test__late', ''), (e) => isTroupeError(e, 'invalid_params'));
  await waitFor('the prompt list to change', () => changed > 0, 5_000);
  assert.deepEqual(tools.commands().map((c) => c.name), ['mcp__test__greet', 'mcp__test__recap', 'mcp__test__late']);
  assert.deepEqual(await tools.expand('mcp__test__late', ''), [{ type: 'text', text: 'late' }]);
});
