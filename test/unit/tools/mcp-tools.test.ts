// A session's MCP tools against a real MCP server process (test/support/mcp-test-server.ts), over
// stdio through the MCP SDK: naming, permissions from the server's hints, results, failures,
// cancel, the environment and cwd the server gets, and that closing stops the process.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basename, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isTroupeError } from '../../../src/core/errors.js';
import { silentLogger } from '../../../src/core/ports.js';
import { mcpServersOf } from '../../../src/tools/mcp/mcp-servers.js';
import { connectMcpTools } from '../../../src/tools/mcp/mcp-tools.js';
import { processAlive, waitFor } from '../../support/daemon.js';
import { startHttpMcp, startSseMcp } from '../../support/mcp-test-tools.js';

const SERVER = resolve('dist/test/support/mcp-test-server.js');
const server = (name: string, env: Record<string, string> = {}) => ({ transport: 'stdio' as const, name, command: process.execPath, args: [SERVER], env });
const call = (name: string, input: Record<string, unknown> = {}) => ({ id: 'c1', name, input });
const ctx = (signal = new AbortController().signal) => ({ signal, update: () => undefined });
const options = (cwd: string) => ({ cwd, logger: silentLogger, connectTimeoutMs: 20_000, callTimeoutMs: 30_000, callMaxTotalMs: 600_000, outputLimit: 1000, version: 'test' });

// Four tests at a time: each has servers of its own, and much of their time is waiting (a server's
// start and listing, a kill's grace, a connect or call time limit), not the CPU.
describe('MCP tools against real servers', { concurrency: 4 }, () => {
  test('the tools of a server are offered as mcp__<server>__<tool>, and called on it', async (t) => {
    const cwd = mkdtempSync(join(tmpdir(), 'troupe-mcp-'));
    const saved = process.env.ANTHROPIC_API_KEY;
    process.env.ANTHROPIC_API_KEY = 'sk-ant-not-for-mcp-servers';
    const tools = await connectMcpTools([server('test', { MCP_TEST_VAR: 'given' })], options(cwd)).finally(() => {
      if (saved === undefined) delete process.env.ANTHROPIC_API_KEY;
      else process.env.ANTHROPIC_API_KEY = saved;
    });
    t.after(() => tools.close());
    assert.deepEqual(tools.servers, [{ name: 'test', tools: 6 }]);
    // The server's tools, and (it has resources) the two resource tools.
    assert.deepEqual(tools.specs().map((s) => s.name).sort(), ['mcp__list_resources', 'mcp__read_resource', 'mcp__test__count', 'mcp__test__echo', 'mcp__test__env', 'mcp__test__fail', 'mcp__test__hang', 'mcp__test__touch']);
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
    const seen = JSON.parse((await tools.run(call('mcp__test__env'), ctx())).output) as { MCP_TEST_VAR: string; ANTHROPIC_API_KEY: string | null; pid: number; roots: unknown };
    assert.equal(seen.MCP_TEST_VAR, 'given');
    assert.equal(seen.ANTHROPIC_API_KEY, null);
    // Asked for the client's roots, it is told the session's directory.
    assert.deepEqual(seen.roots, [{ uri: pathToFileURL(cwd).href, name: basename(cwd) }]);
    // Arguments that do not fit the tool's input schema fail invalid_params, saying why, before the
    // call is shown, asked for or sent (the server would have answered with an error of its own).
    const invalid = (e: unknown) => isTroupeError(e, 'invalid_params') && e.message === 'Invalid input for mcp__test__echo: "text" must be a string.';
    assert.throws(() => tools.describe(call('mcp__test__echo', { text: 42 })), invalid);
    await assert.rejects(tools.run(call('mcp__test__echo', { text: 42 }), ctx()), invalid);
    assert.throws(() => tools.describe(call('mcp__test__count', {})), (e) => isTroupeError(e, 'invalid_params') && /"n" is required/.test(e.message));

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
    assert.deepEqual(tools.servers.find((s) => s.name === 'ok'), { name: 'ok', tools: 6 });
    assert.match(tools.servers.find((s) => s.name === 'broken')?.error ?? '', /ENOENT|spawn/);
    assert.ok(tools.has('mcp__ok__echo') && !tools.specs().some((s) => s.name.startsWith('mcp__broken__')));

    const { pid } = JSON.parse((await tools.run(call('mcp__ok__env'), ctx())).output) as { pid: number };
    // A call waiting for it when it dies says so (killed once the server has reported its first progress).
    let progressed!: () => void;
    const running = new Promise<void>((resolve) => (progressed = resolve));
    const waiting = tools.run(call('mcp__ok__count', { n: 100_000, delayMs: 10 }), { signal: new AbortController().signal, update: () => progressed() });
    await running;
    process.kill(pid, 'SIGKILL');
    assert.deepEqual(await waiting, { output: 'The MCP server ok failed the call: it exited before it answered (MCP error -32000: Connection closed)', isError: true, errorCode: 'tool_failed' });
    await waitFor('the killed server to exit', () => !processAlive(pid), 5_000);
    const after = await tools.run(call('mcp__ok__echo', { text: 'x' }), ctx());
    assert.equal(after.isError, true);
    assert.match(after.output, /MCP server ok has exited|MCP server ok failed/);
    // No server with resources serves any more: the resource tools are no longer offered.
    await waitFor('the resource tools to go', () => !tools.has('mcp__read_resource'), 5_000);
    assert.ok(!tools.specs().some((s) => s.name === 'mcp__list_resources' || s.name === 'mcp__read_resource'));
  });

  test('closing stops what a server started too: a wrapper\'s child that outlives its stdin and ignores SIGTERM', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'troupe-mcp-'));
    // `sh -c '…; true'` forks the server (no exec): the SDK stops the shell, never the server itself.
    const wrapped = { transport: 'stdio' as const, name: 'wrapped', command: '/bin/sh', args: ['-c', '"$0" "$1"; true', process.execPath, SERVER], env: { MCP_TEST_STUBBORN: '1' } };
    const tools = await connectMcpTools([wrapped], options(cwd));
    const { pid } = JSON.parse((await tools.run(call('mcp__wrapped__env'), ctx())).output) as { pid: number };
    await tools.close();
    await waitFor('the wrapped server to be stopped', () => !processAlive(pid), 10_000).finally(() => processAlive(pid) && process.kill(pid, 'SIGKILL'));
  });

  test('a tool MCP does not allow is left out of its server\'s list, and the server\'s other tools serve', async (t) => {
    const cwd = mkdtempSync(join(tmpdir(), 'troupe-mcp-'));
    const warnings: unknown[] = [];
    const logger = { ...silentLogger, warn: (message: string, fields?: unknown) => void warnings.push({ message, fields }) };
    const tools = await connectMcpTools([server('odd', { MCP_TEST_BROKEN_TOOLS: '1' })], { ...options(cwd), logger });
    t.after(() => tools.close());
    // Its six tools, and the one whose output schema is odd (troupe does not check results against it).
    assert.deepEqual(tools.servers, [{ name: 'odd', tools: 7 }]);
    assert.ok(tools.has('mcp__odd__odd_output') && !tools.has('mcp__odd__no_object'));
    assert.deepEqual(await tools.run(call('mcp__odd__echo', { text: 'still' }), ctx()), { output: 'echo: still', isError: false });
    assert.deepEqual(warnings, [
      { message: 'an MCP server listed a tool MCP does not allow; it is left out', fields: { server: 'odd', tool: 'no_object', error: 'inputSchema.type: Invalid input: expected "object"' } },
      { message: 'an MCP server listed a tool MCP does not allow; it is left out', fields: { server: 'odd', tool: null, error: 'name: Invalid input: expected string, received undefined' } },
    ]);
  });

  test('a server that starts but never lists its tools is left out and stopped, its status failed with why; the others serve', async (t) => {
    const cwd = mkdtempSync(join(tmpdir(), 'troupe-mcp-'));
    const pidFile = join(cwd, 'silent.pid');
    // Long enough for the 'ok' server to start and list under a loaded test run (1 s was not, at load 9).
    const tools = await connectMcpTools([server('silent', { MCP_TEST_SILENT_TOOLS: '1', MCP_TEST_PID_FILE: pidFile }), server('ok')], { ...options(cwd), connectTimeoutMs: 4000 });
    t.after(() => tools.close());
    assert.deepEqual(tools.servers.find((s) => s.name === 'ok'), { name: 'ok', tools: 6 });
    const silent = tools.servers.find((s) => s.name === 'silent');
    assert.equal(silent?.tools, 0);
    assert.match(silent?.error ?? '', /^did not list its tools: .*timed out/i);
    assert.match(tools.exited('silent') ?? '', /the MCP server silent did not list its tools/);
    // Nothing of it is offered, its prompts neither; its process is stopped.
    assert.ok(!tools.specs().some((s) => s.name.startsWith('mcp__silent__')));
    assert.deepEqual(tools.commands().map((c) => c.name), ['mcp__ok__greet', 'mcp__ok__recap']);
    assert.deepEqual(await tools.run(call('mcp__ok__echo', { text: 'x' }), ctx()), { output: 'echo: x', isError: false });
    const pid = Number(readFileSync(pidFile, 'utf8'));
    await waitFor('the silent server to be stopped', () => !processAlive(pid), 10_000);
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
    assert.deepEqual(tools.servers, [{ name: 'web', tools: 6 }]);
    assert.deepEqual(await tools.run(call('mcp__web__echo', { text: 'over http' }), ctx()), { output: 'echo: over http', isError: false });
    assert.ok(web.authorizations.length > 0 && web.authorizations.every((a) => a === 'Bearer for-the-server'), 'every request carried the header');
  });

  test('an SSE server (the legacy HTTP+SSE transport) is reached with the headers the client gave, on its event stream and every message', async (t) => {
    const legacy = await startSseMcp();
    t.after(() => legacy.close());
    const cwd = mkdtempSync(join(tmpdir(), 'troupe-mcp-'));
    const tools = await connectMcpTools([{ transport: 'sse', name: 'legacy', url: legacy.url, headers: { Authorization: 'Bearer for-the-server' } }], options(cwd));
    t.after(() => tools.close());
    assert.deepEqual(tools.servers, [{ name: 'legacy', tools: 6 }]);
    assert.deepEqual(await tools.run(call('mcp__legacy__echo', { text: 'over sse' }), ctx()), { output: 'echo: over sse', isError: false });
    // What the server asks of troupe comes back over the event stream too: its roots.
    const seen = JSON.parse((await tools.run(call('mcp__legacy__env'), ctx())).output) as { roots: unknown };
    assert.deepEqual(seen.roots, [{ uri: pathToFileURL(cwd).href, name: basename(cwd) }]);
    // And progress, which extends a call's time as over any transport.
    const updates: unknown[] = [];
    const counted = await tools.run(call('mcp__legacy__count', { n: 3 }), { signal: new AbortController().signal, update: (c: unknown) => void updates.push(c) });
    assert.deepEqual([counted.output, updates.length > 0], ['counted 3', true]);
    // Its prompts and resources, as for any server.
    assert.deepEqual(await tools.expand('mcp__legacy__greet', 'Ada'), [{ type: 'text', text: 'Please greet Ada.' }]);
    assert.deepEqual(await tools.run(call('mcp__read_resource', { server: 'legacy', uri: 'test://notes' }), ctx()), { output: 'remember the milk', isError: false });

    const methods = (m: string) => legacy.requests.filter((r) => r.method === m);
    assert.equal(methods('GET').length, 1, 'one event stream');
    assert.ok(methods('POST').length > 1, 'the messages are POSTed');
    assert.ok(legacy.requests.every((r) => r.authorization === 'Bearer for-the-server'), `every request carried the header: ${JSON.stringify(legacy.requests)}`);
    // Closing ends its event stream.
    assert.equal(legacy.streams(), 1);
    await tools.close();
    await waitFor('the event stream to close', () => legacy.streams() === 0, 5_000);
  });

  test('an SSE server that cannot be reached, or answers no event stream, is left out with why; the others serve', async (t) => {
    const down = await startSseMcp();
    await down.close(); // nothing listens on its port any more
    const legacy = await startSseMcp();
    t.after(() => legacy.close());
    const web = await startHttpMcp();
    t.after(() => web.close());
    const cwd = mkdtempSync(join(tmpdir(), 'troupe-mcp-'));
    const servers = [
      { transport: 'sse' as const, name: 'down', url: down.url, headers: {} },
      // A URL the server answers 404: no event stream there.
      { transport: 'sse' as const, name: 'wrong', url: new URL('/nope', legacy.url).href, headers: {} },
      { transport: 'http' as const, name: 'web', url: web.url, headers: {} },
    ];
    const tools = await connectMcpTools(servers, options(cwd));
    t.after(() => tools.close());
    assert.deepEqual(tools.servers.find((s) => s.name === 'web'), { name: 'web', tools: 6 });
    for (const name of ['down', 'wrong']) {
      const s = tools.servers.find((x) => x.name === name);
      assert.equal(s?.tools, 0, name);
      assert.match(s?.error ?? '', /SSE error/, name);
    }
    assert.deepEqual(await tools.run(call('mcp__web__echo', { text: 'still' }), ctx()), { output: 'echo: still', isError: false });
    assert.ok(!tools.specs().some((s) => s.name.startsWith('mcp__down__') || s.name.startsWith('mcp__wrong__')));
  });

  test('an HTTP server that refuses troupe is left out with its status in one line, not its page', async (t) => {
    // A gateway's login page, answered to every request with 401.
    const page = `<!DOCTYPE html><html><head><title>Sign in</title><style>${'body{margin:0}'.repeat(500)}</style></head><body><h1>Sign in</h1></body></html>`;
    const http = createServer((_req, res) => void res.writeHead(401, { 'content-type': 'text/html' }).end(page));
    await new Promise<void>((done) => http.listen(0, '127.0.0.1', done));
    t.after(() => http.close());
    const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
    const servers = [
      { transport: 'http' as const, name: 'web', url, headers: { Authorization: 'Bearer wrong' } },
      { transport: 'sse' as const, name: 'legacy', url, headers: { Authorization: 'Bearer wrong' } },
    ];
    const tools = await connectMcpTools(servers, options(mkdtempSync(join(tmpdir(), 'troupe-mcp-'))));
    t.after(() => tools.close());
    const hint = 'HTTP 401 (it refused the credentials: see the headers given for it): ';
    assert.deepEqual(tools.servers, [
      { name: 'web', tools: 0, error: `${hint}an HTML page ("Sign in"), not the API's answer: a proxy or gateway answered, or the base URL is wrong` },
      { name: 'legacy', tools: 0, error: `${hint}SSE error: Non-200 status code (401)` },
    ]);
  });

  test('the servers of a request: stdio, http and sse ones are used, the others left out with a reason, bad ones refused', () => {
    const { servers, skipped } = mcpServersOf([
      { name: 'a', command: 'node', args: ['s.js'], env: [{ name: 'K', value: 'v' }] },
      { type: 'http', name: 'h', url: 'http://127.0.0.1:1/mcp', headers: [{ name: 'Authorization', value: 'Bearer x' }] },
      { type: 'sse', name: 's', url: 'https://example.com/sse', headers: [{ name: 'Authorization', value: 'Bearer y' }] },
      { type: 'websocket', name: 'w', url: 'ws://127.0.0.1:1/mcp' },
    ]);
    assert.deepEqual(servers, [
      { transport: 'stdio', name: 'a', command: 'node', args: ['s.js'], env: { K: 'v' } },
      { transport: 'http', name: 'h', url: 'http://127.0.0.1:1/mcp', headers: { Authorization: 'Bearer x' } },
      { transport: 'sse', name: 's', url: 'https://example.com/sse', headers: { Authorization: 'Bearer y' } },
    ]);
    assert.deepEqual(skipped, [{ name: 'w', reason: 'troupe does not connect to websocket MCP servers (stdio, http and sse only)' }]);
    assert.deepEqual(mcpServersOf(undefined), { servers: [], skipped: [] });
    assert.throws(() => mcpServersOf([{ name: 'a', command: '' }]), (e) => isTroupeError(e, 'invalid_params'));
    for (const type of ['http', 'sse']) {
      assert.throws(() => mcpServersOf([{ type, name: 'h', url: 'file:///etc/passwd', headers: [] }]), (e) => isTroupeError(e, 'invalid_params') && /the MCP server "h" needs an http\(s\) url/.test(e.message), type);
      assert.throws(() => mcpServersOf([{ type, name: 'h', headers: [] }]), (e) => isTroupeError(e, 'invalid_params') && /needs an http\(s\) url/.test(e.message), type);
    }
    assert.throws(() => mcpServersOf([{ name: 'a', command: 'x' }, { name: 'a', command: 'y' }]), (e) => isTroupeError(e, 'invalid_params') && /two MCP servers/.test(e.message));
  });

  test("a server's prompts are commands: listed, expanded by the server, re-listed when it says they changed", async (t) => {
    const cwd = mkdtempSync(join(tmpdir(), 'troupe-mcp-'));
    let changed = 0;
    // The server adds its late prompt once the gate exists, after the first list is looked at (a time
    // after its start raced its first listing on a loaded machine: the first list had it already).
    const gate = join(cwd, 'add-late-prompt');
    const tools = await connectMcpTools([server('test', { MCP_TEST_LATE_PROMPT_GATE: gate })], { ...options(cwd), onCommandsChanged: () => void changed++ });
    t.after(() => tools.close());
    assert.deepEqual(tools.commands().map((c) => c.name), ['mcp__test__greet', 'mcp__test__recap']);
    assert.deepEqual(await tools.expand('mcp__test__greet', 'Ada warm'), [{ type: 'text', text: 'Please greet Ada in a warm way.' }]);
    await assert.rejects(tools.expand('mcp__test__late', ''), (e) => isTroupeError(e, 'invalid_params'));
    writeFileSync(gate, '');
    await waitFor('the prompt list to change', () => changed > 0, 5_000);
    assert.deepEqual(tools.commands().map((c) => c.name), ['mcp__test__greet', 'mcp__test__recap', 'mcp__test__late']);
    assert.deepEqual(await tools.expand('mcp__test__late', ''), [{ type: 'text', text: 'late' }]);
  });

  test("a server's resources: listed and read through two read-only tools, offered only while such a server serves", async (t) => {
    const cwd = mkdtempSync(join(tmpdir(), 'troupe-mcp-'));
    const tools = await connectMcpTools([server('test'), server('other')], options(cwd));
    t.after(() => tools.close());
    const read = tools.specs().find((s) => s.name === 'mcp__read_resource')!;
    assert.match(read.description, /Reads one resource of an MCP server by its URI/);
    assert.deepEqual((read.inputSchema as { required: string[] }).required, ['server', 'uri']);
    assert.deepEqual(tools.describe(call('mcp__read_resource', { server: 'test', uri: 'test://notes' })), { kind: 'read', title: 'Read test://notes (test)', locations: [], access: 'read' });
    assert.deepEqual(tools.describe(call('mcp__list_resources')), { kind: 'read', title: 'List MCP resources', locations: [], access: 'read' });
    // The model's uri and server name in a title are one printable line (until 2026-12-07, raw).
    assert.equal(tools.describe(call('mcp__read_resource', { server: 'te\x1bst', uri: 'test://\u202Enotes\r\n2' })).title, 'Read test:// notes… (te st)');

    const listed = await tools.run(call('mcp__list_resources', { server: 'test' }), ctx());
    assert.deepEqual(listed, {
      output: 'MCP server "test":\n- test://notes — Notes (text/plain): What the team wrote down.\n- template test://day/{n} — day: A day of the log.',
      isError: false,
    });
    // Without a server: every server that has resources.
    assert.match((await tools.run(call('mcp__list_resources'), ctx())).output, /^MCP server "test":[\s\S]*\n\nMCP server "other":\n- test:\/\/notes/);
    assert.deepEqual(await tools.run(call('mcp__read_resource', { server: 'test', uri: 'test://notes' }), ctx()), { output: 'remember the milk', isError: false });
    assert.deepEqual(await tools.run(call('mcp__read_resource', { server: 'other', uri: 'test://day/3' }), ctx()), { output: 'day 3', isError: false });
    // Bad input is refused before the server is asked; what the server refuses comes back as a failed call.
    await assert.rejects(tools.run(call('mcp__read_resource', { server: 'nope', uri: 'test://notes' }), ctx()), (e) => isTroupeError(e, 'invalid_params') && /one of the MCP servers with resources: "test", "other"/.test((e as Error).message));
    await assert.rejects(tools.run(call('mcp__read_resource', { server: 'test' }), ctx()), (e) => isTroupeError(e, 'invalid_params'));
    const missing = await tools.run(call('mcp__read_resource', { server: 'test', uri: 'test://nothing' }), ctx());
    assert.equal(missing.isError, true);
    assert.equal(missing.errorCode, 'tool_failed');
    assert.match(missing.output, /test:\/\/nothing/);
  });

  test("a call's progress is shown as it comes (now and then), and each progress notification extends its timeout", async (t) => {
    const cwd = mkdtempSync(join(tmpdir(), 'troupe-mcp-'));
    // A call may take 1.5 s without progress; this one takes 6 × 300 ms, with progress after each step
    // (a step may run long on a loaded machine: the margin is 1.2 s a step).
    const tools = await connectMcpTools([server('test')], { ...options(cwd), callTimeoutMs: 1500 });
    t.after(() => tools.close());
    const shown: string[] = [];
    const result = await tools.run(call('mcp__test__count', { n: 6, delayMs: 300 }), { signal: new AbortController().signal, update: (content) => shown.push(content.map((c) => (c.type === 'text' ? c.text : c.type)).join('')) });
    assert.deepEqual(result, { output: 'counted 6', isError: false });
    // At most one showing per 500 ms: the first step, and then some of the others.
    assert.equal(shown[0], 'Progress 1/6: step 1');
    assert.ok(shown.length >= 2 && shown.length < 6, JSON.stringify(shown));
    // Without progress the same time limit ends the call.
    const slow = await tools.run(call('mcp__test__hang'), ctx());
    assert.equal(slow.isError, true);
    assert.match(slow.output, /timed out|Request timed out/i);
    assert.equal(slow.errorCode, 'tool_timeout');
  });

  test('a progress message is shown cut to 1000 characters, with a note: a server cannot fill the log with it', async (t) => {
    const cwd = mkdtempSync(join(tmpdir(), 'troupe-mcp-'));
    const tools = await connectMcpTools([server('test', { MCP_TEST_PROGRESS_PAD: '3000000' })], options(cwd));
    t.after(() => tools.close());
    const shown: string[] = [];
    // Three steps: the SDK may drop a progress notification read together with the call's result
    // (it handles notifications a tick later than results), so the first is the one to look at.
    const result = await tools.run(call('mcp__test__count', { n: 3 }), { signal: new AbortController().signal, update: (content) => shown.push(content.map((c) => (c.type === 'text' ? c.text : c.type)).join('')) });
    assert.deepEqual(result, { output: 'counted 3', isError: false });
    assert.equal(shown[0], `Progress 1/3: step 1${'.'.repeat(994)}\n[… ${3_000_006 - 1000} more characters cut]`);
    assert.ok(shown.every((s) => s.length < 1100), JSON.stringify(shown.map((s) => s.length)));
  });

  test('a call has an overall limit: a server that keeps reporting progress is cancelled past it, tool_timeout', async (t) => {
    const cwd = mkdtempSync(join(tmpdir(), 'troupe-mcp-'));
    // Progress every 20 ms for 20 s; each wait is 30 s, the whole call 1 s.
    const tools = await connectMcpTools([server('test')], { ...options(cwd), callMaxTotalMs: 1000 });
    t.after(() => tools.close());
    const shown: unknown[] = [];
    const result = await tools.run(call('mcp__test__count', { n: 1000, delayMs: 20 }), { signal: new AbortController().signal, update: (c) => void shown.push(c) });
    assert.deepEqual(result, {
      output: 'The MCP server test did not finish the call within 1000 ms in all (its progress extends each wait for its next word, never the whole call), so troupe cancelled it.',
      isError: true,
      errorCode: 'tool_timeout',
    });
    assert.ok(shown.length > 0, 'it did report progress');
    // The server serves on.
    assert.deepEqual(await tools.run(call('mcp__test__echo', { text: 'after' }), ctx()), { output: 'echo: after', isError: false });
  });

  /** A logger that keeps what it is told (message and fields), and `waitFor` one message. */
  function keptLogger() {
    const told: { level: string; message: string; fields?: unknown }[] = [];
    const keep = (level: string) => (message: string, fields?: unknown) => void told.push({ level, message, fields });
    return { logger: { debug: keep('debug'), info: keep('info'), warn: keep('warn'), error: keep('error') }, told, saw: (message: string) => told.some((m) => m.message === message) };
  }

  /** The tools of `servers`, started in `cwd` (a new directory by default) with a logger that keeps what it is told; closed after the test. */
  async function toolsKeepingLog(t: { after(fn: () => unknown): void }, servers: Parameters<typeof connectMcpTools>[0], cwd = mkdtempSync(join(tmpdir(), 'troupe-mcp-'))) {
    const { logger, told, saw } = keptLogger();
    const tools = await connectMcpTools(servers, { ...options(cwd), logger });
    t.after(() => tools.close());
    return { tools, told, saw };
  }

  test("a server's tools/list_changed lists that server again, only; a listing that fails keeps its tools", async (t) => {
    // `b` answers its first listing only.
    const { tools, told, saw } = await toolsKeepingLog(t, [server('a', { MCP_TEST_LISTED: '1' }), server('b', { MCP_TEST_LISTED: '1', MCP_TEST_LIST_FAIL: '1' })]);
    assert.ok(tools.has('mcp__a__listed_1') && tools.has('mcp__b__listed_1'));

    await tools.run(call('mcp__a__tools_changed'), ctx());
    await waitFor('a to be listed again', () => tools.has('mcp__a__listed_2'), 5_000);
    // b was not asked: it keeps its first list (asked, it would have failed).
    assert.ok(tools.has('mcp__b__listed_1') && tools.has('mcp__b__echo'));
    assert.ok(!saw('cannot list the tools of an MCP server again; its previous tools are kept'), JSON.stringify(told));

    await tools.run(call('mcp__b__tools_changed'), ctx());
    await waitFor('b to fail its listing', () => saw('cannot list the tools of an MCP server again; its previous tools are kept'), 5_000);
    const warned = told.find((m) => m.message === 'cannot list the tools of an MCP server again; its previous tools are kept');
    assert.deepEqual(warned?.fields, { server: 'b', error: 'MCP error -32603: listing 2 fails on purpose' });
    assert.ok(tools.has('mcp__b__listed_1') && tools.has('mcp__a__listed_2'));
    assert.deepEqual(await tools.run(call('mcp__b__echo', { text: 'kept' }), ctx()), { output: 'echo: kept', isError: false });
  });

  /** What the test server says of its tool listings: how many were asked for, the most answered at once. */
  const listingsOf = async (tools: Awaited<ReturnType<typeof connectMcpTools>>, server: string) => JSON.parse((await tools.run(call(`mcp__${server}__listings`), ctx())).output) as { listings: number; mostAtOnce: number };
  /** The numbers n of the `listed_<n>` tools the session has of a server (which listings it took). */
  const listedOf = (tools: Awaited<ReturnType<typeof connectMcpTools>>, server: string) => tools.specs().flatMap((s) => (s.name.startsWith(`mcp__${server}__listed_`) ? [Number(s.name.slice(`mcp__${server}__listed_`.length))] : []));

  test('a change said while a listing runs is listed once that listing ends: the agent ends with the latest list', async (t) => {
    const cwd = mkdtempSync(join(tmpdir(), 'troupe-mcp-'));
    const gate = join(cwd, 'gate');
    const tools = await connectMcpTools([server('s', { MCP_TEST_LISTED: '1', MCP_TEST_LIST_GATE: gate })], options(cwd));
    t.after(() => tools.close());
    // Listing 2 waits for the gate; the second change is said while it does.
    await tools.run(call('mcp__s__tools_changed'), ctx());
    await waitFor('listing 2 to be asked for', async () => (await listingsOf(tools, 's')).listings === 2, 5_000);
    await tools.run(call('mcp__s__tools_changed'), ctx());
    // Listing 3 is not asked for while listing 2 runs (the call above answered after its
    // notification was read, and listing 2 cannot end before the gate opens)…
    assert.deepEqual(await listingsOf(tools, 's'), { listings: 2, mostAtOnce: 1 });
    writeFileSync(gate, '');
    // …but once it ends: the agent ends with listing 3, made after the last change.
    await waitFor('listing 3 to be taken', () => tools.has('mcp__s__listed_3'), 5_000);
    assert.deepEqual(listedOf(tools, 's'), [3]);
    assert.deepEqual(await listingsOf(tools, 's'), { listings: 3, mostAtOnce: 1 });
  });

  test('a server that floods tools/list_changed during a listing is listed once more after it, not once per notification', async (t) => {
    const cwd = mkdtempSync(join(tmpdir(), 'troupe-mcp-'));
    const gate = join(cwd, 'gate');
    const { tools, told } = await toolsKeepingLog(t, [server('s', { MCP_TEST_LISTED: '1', MCP_TEST_LIST_GATE: gate })], cwd);
    // 1000 notifications in a burst: the first asks for listing 2, which waits for the gate; the
    // others come while it runs. The call answers after them all, and `listings` answers after the
    // agent has handled them (and sent any listing they asked for).
    assert.deepEqual(await tools.run(call('mcp__s__tools_changed', { times: 1000 }), ctx()), { output: 'told', isError: false });
    assert.deepEqual(await listingsOf(tools, 's'), { listings: 2, mostAtOnce: 1 });
    writeFileSync(gate, '');
    await waitFor('a listing after listing 2 to be taken', () => listedOf(tools, 's').some((n) => n > 2), 5_000);
    // In all: the first listing, the one the first notification asked for, and one more for the 999
    // said while it ran; never two at once. The agent has the last one's list.
    assert.deepEqual(await listingsOf(tools, 's'), { listings: 3, mostAtOnce: 1 });
    assert.deepEqual(listedOf(tools, 's'), [3]);
    assert.equal(told.filter((m) => m.message === "an MCP server said its tool list changed while a listing was queued; that listing covers it").length, 998);
  });

  test('a change said while the lists at start are answered is listed after them', async (t) => {
    const { tools, told } = await toolsKeepingLog(t, [server('s', { MCP_TEST_LISTED: '1', MCP_TEST_LIST_CHANGE_FIRST: '1' })]);
    await waitFor('listing 2 to be taken', () => tools.has('mcp__s__listed_2'), 5_000);
    assert.deepEqual(listedOf(tools, 's'), [2]);
    assert.deepEqual(await listingsOf(tools, 's'), { listings: 2, mostAtOnce: 1 });
    assert.deepEqual(told.filter((m) => m.level === 'warn'), []);
  });

  test('a stdio server that sends a message over 10 MB is stopped, and its calls and status say why', async (t) => {
    const cwd = mkdtempSync(join(tmpdir(), 'troupe-mcp-'));
    const tools = await connectMcpTools([server('big', { MCP_TEST_FLOOD: '1' })], options(cwd));
    t.after(() => tools.close());
    const why = 'it sent a message over 10 MB, more than troupe reads from a server, so troupe stopped it';
    assert.deepEqual(await tools.run(call('mcp__big__flood'), ctx()), { output: `The MCP server big failed the call: ${why}`, isError: true, errorCode: 'tool_failed' });
    assert.equal(tools.exited('big'), `the MCP server big was stopped: ${why}`);
    assert.deepEqual(await tools.run(call('mcp__big__echo', { text: 'x' }), ctx()), { output: `the MCP server big was stopped: ${why}; mcp__big__echo cannot run.`, isError: true, errorCode: 'tool_failed' });
  });

  /** A server's status when its tool list passed what troupe reads. */
  const LIST_TOO_LONG = "did not list its tools: the server's list is too long (over 10000 items or 16 MiB in all); troupe reads no more of it";

  test('a server whose tool list never ends is left out when the list passes 10000 tools, its status says why; the others serve', async (t) => {
    const cwd = mkdtempSync(join(tmpdir(), 'troupe-mcp-'));
    const tools = await connectMcpTools([server('endless', { MCP_TEST_ENDLESS_TOOLS: '2000' }), server('ok')], options(cwd));
    t.after(() => tools.close());
    assert.deepEqual(tools.servers, [
      { name: 'endless', tools: 0, error: LIST_TOO_LONG },
      { name: 'ok', tools: 6 },
    ]);
    assert.equal(tools.has('mcp__endless__t_0_0'), false);
    assert.deepEqual(await tools.run(call('mcp__ok__echo', { text: 'hi' }), ctx()), { output: 'echo: hi', isError: false });
  });

  test('a page of over 10000 tools is refused whole, before its tools are checked: none is logged one by one', async (t) => {
    const { tools, told } = await toolsKeepingLog(t, [server('broken', { MCP_TEST_ENDLESS_TOOLS: '10001', MCP_TEST_ENDLESS_BROKEN: '1' })]);
    assert.deepEqual(tools.servers, [{ name: 'broken', tools: 0, error: LIST_TOO_LONG }]);
    assert.deepEqual(told.filter((m) => m.message === 'an MCP server listed a tool MCP does not allow; it is left out').length, 0);
  });

  test('refused tools count toward the 10000 a list may hold, and a listing logs the first 20 refusals one by one, the rest in one line', async (t) => {
    // Pages of 5000 tools MCP refuses, without end: before, only kept tools counted, so the server was
    // stopped at 1000 pages only, after 5 million refusals checked and logged, one line each.
    const { tools, told } = await toolsKeepingLog(t, [server('broken', { MCP_TEST_ENDLESS_TOOLS: '5000', MCP_TEST_ENDLESS_BROKEN: '1' })]);
    assert.deepEqual(tools.servers, [{ name: 'broken', tools: 0, error: LIST_TOO_LONG }]);
    assert.equal(told.filter((m) => m.message === 'an MCP server listed a tool MCP does not allow; it is left out').length, 20);
    // Three pages were checked, the third taking the list past 10000: 15000 refused, 20 of them logged.
    assert.deepEqual(told.filter((m) => m.message === 'an MCP server listed more tools MCP does not allow; they are left out').map((m) => m.fields), [{ server: 'broken', notLogged: 14980 }]);
  });

  test("a result of many content blocks MCP does not allow fails on the first, in a line: the SDK's check of them all took some 3.5 KB a block, and a message of them all", async (t) => {
    const { tools, told } = await toolsKeepingLog(t, [server('junk', { MCP_TEST_JUNK: '20000' })]);
    // A listed tool that holds over 10000 values is left out unchecked, and logged.
    assert.deepEqual(
      told.filter((m) => m.message === 'an MCP server listed a tool MCP does not allow; it is left out').map((m) => m.fields),
      [{ server: 'junk', tool: 'dense', error: 'it holds over 10000 values' }],
    );
    assert.deepEqual(await tools.run(call('mcp__junk__junk'), ctx()), {
      output: 'The MCP server junk failed the call: MCP error -32602: the server sent a content block MCP does not allow (number 2 of 20001: Invalid input)',
      isError: true,
      errorCode: 'tool_failed',
    });
    // One block that holds over 10000 values is refused before it is checked (which took 3.3 KB a value).
    assert.deepEqual(await tools.run(call('mcp__junk__dense_answer'), ctx()), {
      output: 'The MCP server junk failed the call: MCP error -32602: the server sent a content block MCP does not allow (number 1 of 1: it holds over 10000 values)',
      isError: true,
      errorCode: 'tool_failed',
    });
    // So do a prompt's messages and a resource's contents.
    await assert.rejects(tools.expand('mcp__junk__greet', 'Ada'), (e) => isTroupeError(e, 'tool_failed') && e.message === 'The MCP server junk could not make the prompt /mcp__junk__greet: MCP error -32602: the server sent a prompt message MCP does not allow (number 2 of 20001: role: Invalid option: expected one of "user"|"assistant")');
    assert.deepEqual(await tools.run(call('mcp__read_resource', { server: 'junk', uri: 'test://notes' }), ctx()), {
      output: 'The MCP server failed the request: MCP error -32602: the server sent a resource content MCP does not allow (number 2 of 20001: Invalid input)',
      isError: true,
      errorCode: 'tool_failed',
    });
    // The server serves on.
    assert.deepEqual(await tools.run(call('mcp__junk__echo', { text: 'hi' }), ctx()), { output: 'echo: hi', isError: false });
  });

  test('a list of many items MCP does not allow fails on the first, in a line (prompts, resources)', async (t) => {
    const { tools, told } = await toolsKeepingLog(t, [server('junk', { MCP_TEST_JUNK: '9000', MCP_TEST_JUNK_LISTS: '1' })]);
    assert.deepEqual(tools.commands(), []);
    assert.deepEqual(
      told.filter((m) => m.message === 'cannot list the prompts of an MCP server').map((m) => m.fields),
      [{ server: 'junk', error: 'MCP error -32602: the server sent a prompt MCP does not allow (number 2 of 9001: name: Invalid input: expected string, received undefined)' }],
    );
    assert.deepEqual(await tools.run(call('mcp__list_resources', { server: 'junk' }), ctx()), {
      output: 'The MCP server failed the request: MCP error -32602: the server sent a resource MCP does not allow (number 2 of 9001: name: Invalid input: expected string, received undefined)',
      isError: true,
      errorCode: 'tool_failed',
    });
  });

  test('a page of prompts or resources longer than a whole list may be is refused before its items are checked', async (t) => {
    const { tools, told } = await toolsKeepingLog(t, [server('junk', { MCP_TEST_JUNK: '20000', MCP_TEST_JUNK_LISTS: '1' })]);
    const tooLong = "the server's list is too long (over 10000 items or 16 MiB in all); troupe reads no more of it";
    assert.deepEqual(told.filter((m) => m.message === 'cannot list the prompts of an MCP server').map((m) => m.fields), [{ server: 'junk', error: tooLong }]);
    assert.deepEqual(await tools.run(call('mcp__list_resources', { server: 'junk' }), ctx()), { output: `The MCP server failed the request: ${tooLong}`, isError: true, errorCode: 'tool_failed' });
  });
});
