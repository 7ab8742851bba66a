/**
 * `--mcp-config FILE` of `troupe run` and `troupe chat`: MCP servers for the session, in the
 * `{"mcpServers": {"<name>": {...}}}` file that MCP hosts commonly read, turned into ACP's
 * `mcpServers` list (stdio `{command, args?, env?}`, or `{type?: "http" | "sse", url, headers?}`, http
 * unless it says sse). The agent checks them further and starts them (spec/tools.md §7).
 */
import { readFileSync } from 'node:fs';
import { CliError } from './cli-io.js';
import { systemErrorReason } from './file-read-failed.js';
import { printable } from './terminal-text.js';

type AcpMcpServer =
  | { name: string; command: string; args: string[]; env: { name: string; value: string }[] }
  | { type: 'http' | 'sse'; name: string; url: string; headers: { name: string; value: string }[] };

const pairs = (o: unknown) => Object.entries((o ?? {}) as Record<string, unknown>).map(([name, value]) => ({ name, value: String(value) }));

export function readMcpConfig(path: string): AcpMcpServer[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    // Its reason and errno, not Node's words (until 2026-12-07 "ENOENT: no such file or directory, open '…'").
    const errno = (err as NodeJS.ErrnoException).code;
    throw new CliError('usage', `cannot read the MCP config ${path}: ${systemErrorReason(err)}${errno ? ` (${errno})` : ''}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    // V8 quotes the text it stopped at, line breaks and all: spelled out, or the error line (cut at
    // its first line break) ended mid-quote, without "is not valid JSON" (until 2026-12-07).
    throw new CliError('usage', `the MCP config ${path} is not JSON: ${printable((err as Error).message)}`);
  }
  const servers = (parsed as { mcpServers?: unknown })?.mcpServers;
  if (!servers || typeof servers !== 'object' || Array.isArray(servers)) throw new CliError('usage', `${path}: expected {"mcpServers": {"<name>": {...}}}`);
  return Object.entries(servers as Record<string, Record<string, unknown>>).map(([name, s]) => {
    if (typeof s?.command === 'string') return { name, command: s.command, args: Array.isArray(s.args) ? s.args.map(String) : [], env: pairs(s.env) };
    if (typeof s?.url === 'string') return { type: s.type === 'sse' ? 'sse' : 'http', name, url: s.url, headers: pairs(s.headers) };
    throw new CliError('usage', `${path}: the MCP server "${name}" needs a "command" (stdio) or a "url" (http, or sse with "type": "sse")`);
  });
}
