/**
 * The resources of a session's MCP servers, for the model (spec/tools.md §7). MCP leaves it to the
 * host to decide how resources are used; troupe gives the model two read-only tools, offered while
 * a server with the `resources` capability serves: `mcp__list_resources` (what the servers offer,
 * and their URI templates) and `mcp__read_resource` (one resource's contents, by server and URI).
 * Neither name can be a server's tool: those are `mcp__<server>__<tool>`.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Resource, ResourceTemplate } from '@modelcontextprotocol/sdk/types.js';
import { TroupeError } from '../../core/errors.js';
import type { ToolSpec } from '../../core/provider.js';
import { eachResourceContent, resourcesPage, templatesPage } from './mcp-checked.js';
import { CutText } from './mcp-cut-text.js';
import { allPages } from './mcp-pages.js';

export const LIST_RESOURCES = 'mcp__list_resources';
export const READ_RESOURCE = 'mcp__read_resource';

export const isResourceTool = (name: string) => name === LIST_RESOURCES || name === READ_RESOURCE;

/** A server whose resources the model may read. */
export interface ResourceServer {
  name: string;
  client: Client;
}

export function resourceSpecs(servers: readonly ResourceServer[]): ToolSpec[] {
  const names = servers.map((s) => `"${s.name}"`).join(', ');
  const server = { type: 'string', description: `The MCP server: one of ${names}.` };
  return [
    {
      name: LIST_RESOURCES,
      description: `Lists the resources (documents, data) the MCP servers offer: each one's URI, name and type, and the URI templates a server can read. Servers with resources: ${names}.`,
      inputSchema: { type: 'object', properties: { server: { ...server, description: `Only this MCP server (one of ${names}); all of them when left out.` } }, additionalProperties: false },
    },
    {
      name: READ_RESOURCE,
      description: `Reads one resource of an MCP server by its URI (from ${LIST_RESOURCES}, or made from one of its URI templates).`,
      inputSchema: { type: 'object', properties: { server, uri: { type: 'string', description: 'The resource URI.' } }, required: ['server', 'uri'], additionalProperties: false },
    },
  ];
}

/** The server an input names, among those with resources. */
export function serverOf(servers: readonly ResourceServer[], input: Record<string, unknown>, required: boolean): ResourceServer | undefined {
  const name = input.server;
  if (name === undefined && !required) return undefined;
  const found = typeof name === 'string' ? servers.find((s) => s.name === name) : undefined;
  if (!found) throw new TroupeError('invalid_params', `"server" must be one of the MCP servers with resources: ${servers.map((s) => `"${s.name}"`).join(', ')}.`);
  return found;
}

/** What `mcp__list_resources` tells the model: a block per server. */
export async function listResourcesText(servers: readonly ResourceServer[], timeout: number, signal: AbortSignal): Promise<string> {
  const blocks = await Promise.all(
    servers.map(async ({ name, client }) => {
      const [resources, templates] = await Promise.all([
        allPages<Resource>((cursor) => resourcesPage(client, cursor, { timeout, signal })),
        allPages<ResourceTemplate>((cursor) => templatesPage(client, cursor, { timeout, signal })).catch(() => []), // templates are optional: a server may not answer them
      ]);
      const lines = [
        ...resources.map((r) => `- ${r.uri} — ${r.title ?? r.name}${r.mimeType ? ` (${r.mimeType})` : ''}${r.description ? `: ${r.description}` : ''}`),
        ...templates.map((t) => `- template ${t.uriTemplate} — ${t.title ?? t.name}${t.description ? `: ${t.description}` : ''}`),
      ];
      return `MCP server "${name}":\n${lines.length ? lines.join('\n') : '(no resources)'}`;
    }),
  );
  return blocks.join('\n\n');
}

/**
 * What `mcp__read_resource` tells the model, cut to `limit` bytes as a call's output is: each
 * content's text, a line for each binary one. Made as its contents are checked, and only up to the
 * limit, as a call's output is (mcp-results.ts): until 2026-12-07 they were checked into copies and
 * joined whole first.
 */
export function resourceOutput(contents: readonly unknown[], limit: number): string {
  if (contents.length === 0) return '(empty)';
  const text = new CutText(limit, 'bytes');
  eachResourceContent(contents, (c, i) => {
    if (i > 0) text.add('\n');
    text.add('text' in c && typeof c.text === 'string' ? c.text : `[binary content of ${c.uri}${c.mimeType ? `, ${c.mimeType}` : ''}]`);
  });
  return text.text();
}
