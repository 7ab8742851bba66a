// The tests' MCP server (mcp-test-tools.ts) over stdio: `node dist/test/support/mcp-test-server.js`.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { testMcpServer } from './mcp-test-tools.js';

await testMcpServer().connect(new StdioServerTransport());
