/**
 * The MCP servers an ACP client names in `session/new`, `session/load` and `session/resume`: stdio
 * servers (which ACP requires every agent to support), which troupe starts, and Streamable HTTP
 * servers (`mcpCapabilities.http`) and HTTP+SSE ones (`mcpCapabilities.sse`, MCP's deprecated
 * transport, which many servers still speak), which it connects to. Other types are left out with a
 * reason.
 */
import { TroupeError } from '../../core/errors.js';

export type McpServerConfig =
  | { transport: 'stdio'; name: string; command: string; args: string[]; env: Record<string, string> }
  | { transport: 'http' | 'sse'; name: string; url: string; headers: Record<string, string> };

/** ACP's `{name, value}[]` as a record (the later of two equal names wins). */
function pairs(list: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of Array.isArray(list) ? list : []) {
    const { name, value } = (v ?? {}) as { name?: unknown; value?: unknown };
    if (typeof name === 'string' && name) out[name] = String(value ?? '');
  }
  return out;
}

function parseUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

/** Reads the request's `mcpServers`: the servers to use, and the others with why they are left out. */
export function mcpServersOf(mcpServers: readonly unknown[] | undefined): { servers: McpServerConfig[]; skipped: { name: string; reason: string }[] } {
  const servers: McpServerConfig[] = [];
  const skipped: { name: string; reason: string }[] = [];
  for (const raw of mcpServers ?? []) {
    const s = (raw ?? {}) as { type?: unknown; name?: unknown; command?: unknown; args?: unknown; env?: unknown; url?: unknown; headers?: unknown };
    const name = typeof s.name === 'string' ? s.name : '';
    if (!name.trim()) throw new TroupeError('invalid_params', 'an MCP server needs a name');
    if (servers.some((x) => x.name === name)) throw new TroupeError('invalid_params', `two MCP servers are named "${name}"`);
    if (s.type === undefined || s.type === 'stdio') {
      if (typeof s.command !== 'string' || !s.command.trim()) throw new TroupeError('invalid_params', `the MCP server "${name}" needs a command`);
      servers.push({ transport: 'stdio', name, command: s.command, args: Array.isArray(s.args) ? s.args.map(String) : [], env: pairs(s.env) });
    } else if (s.type === 'http' || s.type === 'sse') {
      const url = typeof s.url === 'string' ? parseUrl(s.url) : undefined;
      if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) throw new TroupeError('invalid_params', `the MCP server "${name}" needs an http(s) url`);
      servers.push({ transport: s.type, name, url: url.href, headers: pairs(s.headers) });
    } else {
      skipped.push({ name, reason: `troupe does not connect to ${String(s.type)} MCP servers (stdio, http and sse only)` });
    }
  }
  return { servers, skipped };
}
