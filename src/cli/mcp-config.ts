/**
 * `--mcp-config FILE` of `troupe run` and `troupe chat`: MCP servers for the session, in the
 * `{"mcpServers": {"<name>": {...}}}` file that MCP hosts commonly read, turned into ACP's
 * `mcpServers` list (stdio `{command, args?, env?}`, or `{type?: "http" | "sse", url, headers?}`, http
 * unless it says sse). The agent checks them further and starts them (spec/tools.md §7).
 */
import { readFileSync } from 'node:fs';
import { CliError } from './cli-io.js';

type AcpMcpServer =
  | { name: string; command: string; args: string[]; env: { name: string; value: string }[] }
  | { type: 'http' | 'sse'; name: string; url: string; headers: { name: string; value: string }[] };

const pairs = (o: unknown) => Object.entries((o ?? {}) as Record<string, unknown>).map(([name, value]) => ({ name, value: String(value) }));

export function readMcpConfig(path: string): AcpMcpServer[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new CliError('usage', `cannot read the MCP config ${path}: ${(err as Error).message}`);
  }
  const servers = (parsed as { mcpServers?: unknown })?.mcpServers;
  if (!servers || typeof servers !== 'object' || Array.isArray(servers)) throw new CliError('usage', `${path}: expected {"mcpServers": {"<name>": {...}}}`);
  return Object.entries(servers as Record<string, Record<string, unknown>>).map(([name, s]) => {
    if (typeof s?.command === 'string') return { name, command: s.command, args: Array.isArray(s.args) ? s.args.map(String) : [], env: pairs(s.env) };
    if (typeof s?.url === 'string') return { type: s.type === 'sse' ? 'sse' : 'http', name, url: s.url, headers: pairs(s.headers) };
    throw new CliError('usage', `${path}: the MCP server "${name}" needs a "command" (stdio) or a "url" (http, or sse with "type": "sse")`);
  });
}
