// The tests' MCP server (mcp-test-tools.ts) over stdio: `node dist/test/support/mcp-test-server.js`.
import { existsSync, writeFileSync } from 'node:fs';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { testMcpServer } from './mcp-test-tools.js';

// MCP_TEST_START_DELAY_MS: a server slow to start (it answers nothing until then).
const delay = Number(process.env.MCP_TEST_START_DELAY_MS);
if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
// MCP_TEST_START_GATE: a file; the server answers nothing until it exists (a test opens the gate).
const gate = process.env.MCP_TEST_START_GATE;
while (gate && !existsSync(gate)) await new Promise((resolve) => setTimeout(resolve, 10));
// MCP_TEST_PID_FILE: where the server writes its pid (a test sees it stop without calling it).
if (process.env.MCP_TEST_PID_FILE) writeFileSync(process.env.MCP_TEST_PID_FILE, String(process.pid));
// MCP_TEST_STUBBORN: a server that outlives its stdin's end and ignores SIGTERM (only SIGKILL stops it).
if (process.env.MCP_TEST_STUBBORN) {
  process.on('SIGTERM', () => undefined);
  setInterval(() => undefined, 60_000);
}
await testMcpServer().connect(new StdioServerTransport());
