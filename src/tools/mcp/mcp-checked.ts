/**
 * Results whose lists are checked item by item, stopping at the first MCP refuses (spec/tools.md §7).
 * The SDK checks a result with one zod schema, which for a list of items that do not fit builds an
 * issue of some 3.5 KB per item, and then a message of all of them: a server's 300 KB answer of
 * 100000 `{}` content blocks took 780 MB, and one under the 10 MB a message may have took more
 * than the agent's heap (it died, and every session of the editor with it).
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  BlobResourceContentsSchema,
  CallToolResultSchema,
  ErrorCode,
  GetPromptResultSchema,
  ListPromptsResultSchema,
  ListResourcesResultSchema,
  ListResourceTemplatesResultSchema,
  ListToolsResultSchema,
  McpError,
  PromptMessageSchema,
  PromptSchema,
  ReadResourceResultSchema,
  ResourceSchema,
  ResourceTemplateSchema,
  TextResourceContentsSchema,
  type GetPromptResult,
  type Prompt,
  type Resource,
  type ResourceTemplate,
} from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import { listTooLong, MAX_LIST_ITEMS, type Page } from './mcp-pages.js';
import { requestOf } from './mcp-request.js';

/** A call's result as the SDK reads it, but for its content: each block is checked as it is read (mcp-results.ts). */
const LooseCallToolResult = CallToolResultSchema.extend({ content: z.array(z.unknown()).default([]) });
export type UncheckedCallResult = z.infer<typeof LooseCallToolResult>;

/**
 * The most JSON values (objects, arrays, strings, numbers, …) one item may hold before it is checked:
 * far more than a tool's input schema or a content block has. Inside one item the same blow-up
 * happens (an annotation's `audience` of 100000 strings made 329 MB of issues, a schema's 100000
 * properties 86 MB), so an item past it is refused before zod sees it.
 */
const MAX_ITEM_VALUES = 10_000;

/** Why an item is refused unchecked, if it is: it holds over MAX_ITEM_VALUES values. */
function tooManyValues(value: unknown): string | undefined {
  let count = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    count++;
    if (v === null || typeof v !== 'object') continue;
    const children = Array.isArray(v) ? v : Object.values(v);
    if (count + stack.length + children.length > MAX_ITEM_VALUES) return `it holds over ${MAX_ITEM_VALUES} values`;
    for (const child of children) stack.push(child);
  }
  return undefined;
}

/**
 * One item as `schema` reads it, or why not: `tooMany` (too big to check: left unchecked), or the
 * schema's first issue (`issue`, with the whole `error` for when it has none).
 */
export function checkItem<T>(raw: unknown, schema: z.ZodType<T>): { data: T } | { tooMany: string } | { issue: z.core.$ZodIssue | undefined; error: z.ZodError } {
  const tooMany = tooManyValues(raw);
  if (tooMany) return { tooMany };
  const item = schema.safeParse(raw);
  return item.success ? { data: item.data } : { issue: item.error.issues[0], error: item.error };
}

/** Each item as `schema` reads it; the first that does not fit fails the whole, with one short reason. */
function checkedItems<T>(items: readonly unknown[], schema: z.ZodType<T>, what: string): T[] {
  const out: T[] = [];
  eachChecked(items, schema, what, (item) => out.push(item));
  return out;
}

/**
 * Gives `each` the items one by one as `schema` reads them, failing as checkedItems does on the
 * first that does not fit (those before it were given already).
 */
export function eachChecked<T>(items: readonly unknown[], schema: z.ZodType<T>, what: string, each: (item: T, index: number) => void): void {
  for (let i = 0; i < items.length; i++) {
    const item = checkItem(items[i], schema);
    if ('data' in item) {
      each(item.data, i);
      continue;
    }
    const { issue } = item as { issue?: z.core.$ZodIssue };
    const why = 'tooMany' in item ? item.tooMany : issue ? `${issue.path.length ? `${issue.path.join('.')}: ` : ''}${issue.message}` : 'it does not fit';
    throw new McpError(ErrorCode.InvalidParams, `the server sent ${what} MCP does not allow (number ${i + 1} of ${items.length}: ${why})`);
  }
}

/**
 * `tools/call` as the server answered it, its content blocks unchecked (each is checked as it is
 * read). (The SDK's callTool adds to this request only checks of what its own listTools saw; troupe
 * lists tools itself, so they never applied.)
 */
export function uncheckedCall(client: Client, params: { name: string; arguments: Record<string, unknown> }, options: RequestOptions): Promise<UncheckedCallResult> {
  return requestOf(client, { method: 'tools/call', params }, LooseCallToolResult, options);
}

/** A page's items, unless there are more than a whole list may hold: refused before each is checked. */
function listable<T>(items: T[]): T[] {
  if (items.length > MAX_LIST_ITEMS) throw listTooLong();
  return items;
}
const cursorOf = (cursor: string | undefined) => (cursor ? { cursor } : {});

const LooseTools = ListToolsResultSchema.extend({ tools: z.array(z.unknown()) });
const LoosePrompts = ListPromptsResultSchema.extend({ prompts: z.array(z.unknown()) });
const LooseResources = ListResourcesResultSchema.extend({ resources: z.array(z.unknown()) });
const LooseTemplates = ListResourceTemplatesResultSchema.extend({ resourceTemplates: z.array(z.unknown()) });
const LoosePrompt = GetPromptResultSchema.extend({ messages: z.array(z.unknown()) });
const LooseRead = ReadResourceResultSchema.extend({ contents: z.array(z.unknown()) });
const ResourceContents = z.union([TextResourceContentsSchema, BlobResourceContentsSchema]);

/**
 * A page of `tools/list` as the server sent it, each tool unchecked (listTools checks them one by
 * one, leaving out those MCP refuses), unless it is longer than a whole list may be.
 */
export async function uncheckedToolsPage(client: Client, cursor: string | undefined, options: RequestOptions): Promise<{ tools: unknown[]; nextCursor?: string | undefined }> {
  const result = await requestOf(client, { method: 'tools/list', params: cursorOf(cursor) }, LooseTools, options);
  return { tools: listable(result.tools), nextCursor: result.nextCursor };
}

/** A page of `prompts/list`, each prompt checked. */
export async function promptsPage(client: Client, cursor: string | undefined, options: RequestOptions): Promise<Page<Prompt>> {
  const result = await requestOf(client, { method: 'prompts/list', params: cursorOf(cursor) }, LoosePrompts, options);
  return { items: checkedItems(listable(result.prompts), PromptSchema, 'a prompt'), nextCursor: result.nextCursor };
}

/** A page of `resources/list`, each resource checked. */
export async function resourcesPage(client: Client, cursor: string | undefined, options: RequestOptions): Promise<Page<Resource>> {
  const result = await requestOf(client, { method: 'resources/list', params: cursorOf(cursor) }, LooseResources, options);
  return { items: checkedItems(listable(result.resources), ResourceSchema, 'a resource'), nextCursor: result.nextCursor };
}

/** A page of `resources/templates/list`, each template checked. */
export async function templatesPage(client: Client, cursor: string | undefined, options: RequestOptions): Promise<Page<ResourceTemplate>> {
  const result = await requestOf(client, { method: 'resources/templates/list', params: cursorOf(cursor) }, LooseTemplates, options);
  return { items: checkedItems(listable(result.resourceTemplates), ResourceTemplateSchema, 'a resource template'), nextCursor: result.nextCursor };
}

/** `prompts/get`, each message checked. */
export async function getPrompt(client: Client, params: { name: string; arguments?: Record<string, string> }, options: RequestOptions): Promise<GetPromptResult> {
  const result = await requestOf(client, { method: 'prompts/get', params }, LoosePrompt, options);
  return { ...result, messages: checkedItems(result.messages, PromptMessageSchema, 'a prompt message') };
}

/** `resources/read` as the server answered it, its contents unchecked: each is checked as it is read (resourceOutput). */
export async function uncheckedRead(client: Client, uri: string, options: RequestOptions): Promise<unknown[]> {
  return (await requestOf(client, { method: 'resources/read', params: { uri } }, LooseRead, options)).contents;
}

/** A resource's contents, checked one by one as `each` is given them. */
export function eachResourceContent(contents: readonly unknown[], each: (content: z.infer<typeof ResourceContents>, index: number) => void): void {
  eachChecked(contents, ResourceContents, 'a resource content', each);
}
