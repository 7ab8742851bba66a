// Runs calls of an MCP tool of the tests' server (mcp-test-server.ts, over stdio) through troupe's MCP
// tools, keeping every result as a session's history does, and prints them as one JSON line on
// stdout: for tests that run it in a process of their own, under a heap budget (`--max-old-space-size`).
// Arguments: the tool (without its mcp__test__ prefix), its input as JSON, how many calls, and the
// server's environment as JSON.
import { resolve } from 'node:path';
import type { ToolResult } from '../../src/core/ports.js';
import { silentLogger } from '../../src/core/ports.js';
import { connectMcpTools } from '../../src/tools/mcp/mcp-tools.js';

const [tool, input, calls, env] = process.argv.slice(2);
const server = { transport: 'stdio' as const, name: 'test', command: process.execPath, args: [resolve('dist/test/support/mcp-test-server.js')], env: JSON.parse(env ?? '{}') as Record<string, string> };
const tools = await connectMcpTools([server], { cwd: process.cwd(), logger: silentLogger, connectTimeoutMs: 20_000, callTimeoutMs: 60_000, callMaxTotalMs: 600_000, outputLimit: 262_144, version: 'test' });
const kept: ToolResult[] = [];
for (let i = 0; i < Number(calls); i++) kept.push(await tools.run({ id: `c${i}`, name: `mcp__test__${tool!}`, input: JSON.parse(input!) as Record<string, unknown> }, { signal: new AbortController().signal, update: () => undefined }));
await tools.close();
process.stdout.write(`${JSON.stringify(kept)}\n`);
