// What troupe reads of an MCP server is bounded (spec/tools.md §7): a message over 10 MB, on any
// transport, disconnects the server that sent it, its calls fail saying why, and the other servers
// serve on. The flooding server is a real one on 127.0.0.1 (test/support/mcp-flood-http.ts). And what
// it keeps of a message it read is what the model reads of it.
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { silentLogger } from '../../../src/core/ports.js';
import { connectMcpTools } from '../../../src/tools/mcp/mcp-tools.js';
import { startFloodMcp, type FloodServer } from '../../support/mcp-flood-http.js';

const SERVER = resolve('dist/test/support/mcp-test-server.js');
const call = (name: string, input: Record<string, unknown> = {}) => ({ id: 'c1', name, input });
const ctx = () => ({ signal: new AbortController().signal, update: () => undefined });
const options = (cwd: string) => ({ cwd, logger: silentLogger, connectTimeoutMs: 20_000, callTimeoutMs: 60_000, callMaxTotalMs: 600_000, outputLimit: 1000, version: 'test' });
/** Far more than troupe reads of one message, which the server writes only as fast as it is read (and, for chatty, in messages of 1 MiB). */
const FLOOD = 64 * 1024 * 1024;
const why = 'it sent a message over 10 MB, more than troupe reads from a server, so troupe disconnected from it';

const cases: [string, 'http' | 'sse', (s: FloodServer) => string][] = [
  ['a Streamable HTTP server answering with JSON', 'http', (s) => s.httpUrl('json')],
  ['a Streamable HTTP server answering with an event stream', 'http', (s) => s.httpUrl('event')],
  ['a legacy HTTP+SSE server', 'sse', (s) => s.sseUrl],
];
for (const [what, transport, url] of cases) {
  test(`${what} that sends a message over 10 MB is disconnected, its calls and status say why, and the others serve`, async (t) => {
    const cwd = mkdtempSync(join(tmpdir(), 'troupe-mcp-'));
    const flood = await startFloodMcp(FLOOD);
    t.after(() => flood.close());
    const tools = await connectMcpTools(
      [
        { transport, name: 'big', url: url(flood), headers: {} },
        { transport: 'stdio', name: 'ok', command: process.execPath, args: [SERVER], env: {} },
      ],
      options(cwd),
    );
    t.after(() => tools.close());
    assert.deepEqual(await tools.run(call('mcp__big__echo', { text: 'before' }), ctx()), { output: 'echo: before', isError: false });
    // The limit is on one message: an event stream may carry more than that in all.
    if (!what.endsWith('JSON')) assert.deepEqual(await tools.run(call('mcp__big__chatty'), ctx()), { output: 'chatted', isError: false });
    assert.deepEqual(await tools.run(call('mcp__big__flood'), ctx()), { output: `The MCP server big failed the call: ${why}`, isError: true, errorCode: 'tool_failed' });
    // troupe stopped reading: the server could not hand its sockets the whole message.
    assert.ok(flood.written() < FLOOD, `the server wrote ${flood.written()} bytes`);
    assert.equal(tools.exited('big'), `the MCP server big was disconnected: ${why}`);
    assert.deepEqual(await tools.run(call('mcp__big__echo', { text: 'after' }), ctx()), { output: `the MCP server big was disconnected: ${why}; mcp__big__echo cannot run.`, isError: true, errorCode: 'tool_failed' });
    assert.deepEqual(await tools.run(call('mcp__ok__echo', { text: 'still here' }), ctx()), { output: 'echo: still here', isError: false });
  });
}

test('what troupe keeps of an MCP result is what the model reads: eight results of 9.5 MB, each kept, fit a 48 MB heap', () => {
  // Until 2026-12-07 each result was kept whole for as long as its output was (a slice of its text),
  // and by the SDK for as long as the process lived (its listener on the call's signal): eight kept
  // whole are over 76 MB. Kept as the model reads them, the host needs some 33–40 MB (a 40 MB heap
  // failed one clean run in four here), so 48 leaves room for the collector's timing and none for
  // a result kept whole (with the SDK's listener back, 0 of 3 runs fit).
  const host = resolve('dist/test/support/mcp-call-host.js');
  const child = spawnSync(process.execPath, ['--max-old-space-size=48', host, 'big', JSON.stringify({ chars: 9_500_000 }), '8', JSON.stringify({ MCP_TEST_BIG: '1' })], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  assert.equal(child.status, 0, `the host died: ${child.stderr.slice(-1500)}`);
  const kept = JSON.parse(child.stdout) as { output: string; isError: boolean }[];
  assert.equal(kept.length, 8);
  const output = `${'x'.repeat(262_144)}\n[… ${9_500_000 - 262_144} more characters cut]`;
  for (const [i, result] of kept.entries()) assert.ok(result.output === output && !result.isError, `result ${i + 1}: ${result.output.slice(-60)}`);
});
