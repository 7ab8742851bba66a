/**
 * The MCP servers an ACP client names in `session/new`, `session/load` and `session/resume`: the
 * stdio ones, which troupe starts (ACP: every agent must support them), and the rest, which it does
 * not advertise (`mcpCapabilities` http and sse are false) and leaves out with a reason.
 */
import { TroupeError } from '../../core/errors.js';

export interface McpStdioServer {
  name: string;
  command: string;
  args: string[];
  env: Record<string, string>;
}

/** Splits the request's `mcpServers` into the stdio servers to start and the others, with why. */
export function stdioServersOf(mcpServers: readonly unknown[] | undefined): { stdio: McpStdioServer[]; skipped: { name: string; reason: string }[] } {
  const stdio: McpStdioServer[] = [];
  const skipped: { name: string; reason: string }[] = [];
  for (const raw of mcpServers ?? []) {
    const s = (raw ?? {}) as { type?: unknown; name?: unknown; command?: unknown; args?: unknown; env?: unknown };
    const name = typeof s.name === 'string' ? s.name : '';
    if (s.type !== undefined && s.type !== 'stdio') {
      skipped.push({ name, reason: `troupe does not connect to ${String(s.type)} MCP servers (only stdio ones)` });
      continue;
    }
    if (!name.trim() || typeof s.command !== 'string' || !s.command.trim()) {
      throw new TroupeError('invalid_params', 'an MCP server needs a name and a command');
    }
    if (stdio.some((x) => x.name === name)) throw new TroupeError('invalid_params', `two MCP servers are named "${name}"`);
    const args = Array.isArray(s.args) ? s.args.map(String) : [];
    const env: Record<string, string> = {};
    for (const v of Array.isArray(s.env) ? s.env : []) {
      const { name: key, value } = (v ?? {}) as { name?: unknown; value?: unknown };
      if (typeof key === 'string' && key) env[key] = String(value ?? '');
    }
    stdio.push({ name, command: s.command, args, env });
  }
  return { stdio, skipped };
}
