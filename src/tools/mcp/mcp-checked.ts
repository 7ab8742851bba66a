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
  ContentBlockSchema,
  ErrorCode,
  GetPromptResultSchema,
  ListPromptsResultSchema,
  ListResourcesResultSchema,
  ListResourceTemplatesResultSchema,
  McpError,
  PromptMessageSchema,
  PromptSchema,
  ReadResourceResultSchema,
  ResourceSchema,
  ResourceTemplateSchema,
  TextResourceContentsSchema,
  type CallToolResult,
  type GetPromptResult,
  type Prompt,
  type ReadResourceResult,
  type Resource,
  type ResourceTemplate,
} from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import { listTooLong, MAX_LIST_ITEMS } from './mcp-pages.js';

/** A call's result as the SDK reads it, but for its content: each block is checked by checkedItems. */
export const LooseCallToolResult = CallToolResultSchema.extend({ content: z.array(z.unknown()).default([]) });

/**
 * The most JSON values (objects, arrays, strings, numbers, …) one item may hold before it is checked:
 * far more than a tool's input schema or a content block has. Inside one item the same blow-up
 * happens (an annotation's `audience` of 100000 strings made 329 MB of issues, a schema's 100000
 * properties 86 MB), so an item past it is refused before zod sees it.
 */
export const MAX_ITEM_VALUES = 10_000;

/** Why an item is refused unchecked, if it is: it holds over MAX_ITEM_VALUES values. */
export function tooManyValues(value: unknown): string | undefined {
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

/** Each item as `schema` reads it; the first that does not fit fails the whole, with one short reason. */
export function checkedItems<T>(items: readonly unknown[], schema: z.ZodType<T>, what: string): T[] {
  const out: T[] = [];
  for (let i = 0; i < items.length; i++) {
    const refused = (why: string) => new McpError(ErrorCode.InvalidParams, `the server sent ${what} MCP does not allow (number ${i + 1} of ${items.length}: ${why})`);
    const tooMany = tooManyValues(items[i]);
    if (tooMany) throw refused(tooMany);
    const item = schema.safeParse(items[i]);
    if (!item.success) {
      const issue = item.error.issues[0];
      throw refused(issue ? `${issue.path.length ? `${issue.path.join('.')}: ` : ''}${issue.message}` : 'it does not fit');
    }
    out.push(item.data);
  }
  return out;
}

/** A call's result, its content checked block by block. */
export function checkedCallResult(result: z.infer<typeof LooseCallToolResult>): CallToolResult {
  return { ...result, content: checkedItems(result.content, ContentBlockSchema, 'a content block') };
}

type Page<T> = { items: T[]; nextCursor?: string | undefined };

/** A page's items, unless there are more than a whole list may hold: refused before each is checked. */
function listable<T>(items: T[]): T[] {
  if (items.length > MAX_LIST_ITEMS) throw listTooLong();
  return items;
}
const page = <T>(items: T[], nextCursor: string | undefined): Page<T> => ({ items, ...(nextCursor !== undefined ? { nextCursor } : {}) });
const cursorOf = (cursor: string | undefined) => (cursor ? { cursor } : {});

const LoosePrompts = ListPromptsResultSchema.extend({ prompts: z.array(z.unknown()) });
const LooseResources = ListResourcesResultSchema.extend({ resources: z.array(z.unknown()) });
const LooseTemplates = ListResourceTemplatesResultSchema.extend({ resourceTemplates: z.array(z.unknown()) });
const LoosePrompt = GetPromptResultSchema.extend({ messages: z.array(z.unknown()) });
const LooseRead = ReadResourceResultSchema.extend({ contents: z.array(z.unknown()) });
const ResourceContents = z.union([TextResourceContentsSchema, BlobResourceContentsSchema]);

/** A page of `prompts/list`, each prompt checked. */
export async function promptsPage(client: Client, cursor: string | undefined, options: RequestOptions): Promise<Page<Prompt>> {
  const result = await client.request({ method: 'prompts/list', params: cursorOf(cursor) }, LoosePrompts, options);
  return page(checkedItems(listable(result.prompts), PromptSchema, 'a prompt'), result.nextCursor);
}

/** A page of `resources/list`, each resource checked. */
export async function resourcesPage(client: Client, cursor: string | undefined, options: RequestOptions): Promise<Page<Resource>> {
  const result = await client.request({ method: 'resources/list', params: cursorOf(cursor) }, LooseResources, options);
  return page(checkedItems(listable(result.resources), ResourceSchema, 'a resource'), result.nextCursor);
}

/** A page of `resources/templates/list`, each template checked. */
export async function templatesPage(client: Client, cursor: string | undefined, options: RequestOptions): Promise<Page<ResourceTemplate>> {
  const result = await client.request({ method: 'resources/templates/list', params: cursorOf(cursor) }, LooseTemplates, options);
  return page(checkedItems(listable(result.resourceTemplates), ResourceTemplateSchema, 'a resource template'), result.nextCursor);
}

/** `prompts/get`, each message checked. */
export async function getPrompt(client: Client, params: { name: string; arguments?: Record<string, string> }, options: RequestOptions): Promise<GetPromptResult> {
  const result = await client.request({ method: 'prompts/get', params }, LoosePrompt, options);
  return { ...result, messages: checkedItems(result.messages, PromptMessageSchema, 'a prompt message') };
}

/** `resources/read`, each content checked. */
export async function readResource(client: Client, uri: string, options: RequestOptions): Promise<ReadResourceResult> {
  const result = await client.request({ method: 'resources/read', params: { uri } }, LooseRead, options);
  return { ...result, contents: checkedItems(result.contents, ResourceContents, 'a resource content') };
}
