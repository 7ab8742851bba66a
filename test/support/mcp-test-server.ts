// A real MCP server over stdio, built with the MCP SDK, for the tests of troupe's MCP tools:
// `node dist/test/support/mcp-test-server.js`. Its tools show what troupe gave it (cwd, env), what
// it does with results (text, errors), cancel (a call that waits for it) and its process (pid).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import * as z from 'zod';

const server = new McpServer({ name: 'troupe-test', version: '1.0.0' });
const text = (t: string) => ({ content: [{ type: 'text' as const, text: t }] });

server.registerTool('echo', { description: 'Says the text back.', inputSchema: { text: z.string() }, annotations: { readOnlyHint: true } }, async ({ text: t }) => text(`echo: ${t}`));
server.registerTool('touch', { title: 'Create a file', description: 'Creates an empty file in the working directory.', inputSchema: { name: z.string() } }, async ({ name }) => {
  writeFileSync(join(process.cwd(), name), '');
  return text(`created ${name} in ${process.cwd()}`);
});
server.registerTool('env', { description: 'Which variables the server sees.', annotations: { readOnlyHint: true } }, async () =>
  text(JSON.stringify({ MCP_TEST_VAR: process.env.MCP_TEST_VAR ?? null, ANTHROPIC_API_KEY: process.env.ANTHROPIC_API_KEY ?? null, pid: process.pid })),
);
server.registerTool('fail', { description: 'Always fails.', annotations: { readOnlyHint: true } }, async () => ({ ...text('it failed on purpose'), isError: true }));
server.registerTool('hang', { description: 'Waits until cancelled.', annotations: { readOnlyHint: true } }, (extra) =>
  new Promise<ReturnType<typeof text>>((resolve) => extra.signal.addEventListener('abort', () => resolve(text('cancelled')), { once: true })),
);

await server.connect(new StdioServerTransport());
