/**
 * The prompts of a session's MCP servers, offered to the ACP client as slash commands
 * `/mcp__<server>__<prompt>` (spec/tools.md §7): MCP prompts are templates meant to be chosen by the
 * person, which is what a client's slash commands are. A command's input fills the prompt's
 * arguments; the messages the server makes of them become the turn's prompt.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { GetPromptResult, Prompt, PromptArgument } from '@modelcontextprotocol/sdk/types.js';
import type { ContentBlock } from '../../core/events.js';
import { TroupeError } from '../../core/errors.js';
import { promptsPage } from './mcp-checked.js';
import { allPages } from './mcp-pages.js';

/** A slash command as an ACP client is told of it (`available_commands_update`). */
export interface McpCommand {
  name: string;
  description: string;
  /** What to type after the command: the prompt's arguments, optional ones in brackets. */
  input?: { hint: string };
}

/** One server's prompt, under its command name. */
export interface PromptEntry {
  client: Client;
  server: string;
  prompt: Prompt;
  command: McpCommand;
}

/** Every page of a server's prompt list (none if it has no prompts). */
export function listPrompts(client: Client, timeout: number, signal?: AbortSignal): Promise<Prompt[]> {
  if (!client.getServerCapabilities()?.prompts) return Promise.resolve([]);
  return allPages((cursor) => promptsPage(client, cursor, { timeout, ...(signal ? { signal } : {}) }));
}

export function commandOf(name: string, server: string, prompt: Prompt): McpCommand {
  const args = prompt.arguments ?? [];
  const what = prompt.description?.trim() || prompt.title || prompt.name;
  return {
    name,
    description: `${what} (prompt "${prompt.name}" of the MCP server "${server}")`,
    ...(args.length ? { input: { hint: args.map((a) => (a.required ? a.name : `[${a.name}]`)).join(' ') } } : {}),
  };
}

/**
 * The prompt's arguments from what follows the command. One argument takes the whole input. With
 * several, `name=value` words name them (a value may be "quoted"); otherwise the words fill them in
 * order, and the last one takes the rest of the line as typed.
 */
export function promptArguments(command: string, declared: readonly PromptArgument[], input: string): Record<string, string> {
  const text = input.trim();
  // No prototype while filling: an argument may be named `constructor` or `__proto__`, and must be
  // an own value (the spread at the end copies it as one, `__proto__` too).
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  if (declared.length === 0) {
    if (text) throw new TroupeError('invalid_params', `/${command} takes no input`);
    return {};
  }
  if (declared.length === 1) {
    if (text) out[declared[0]!.name] = text;
  } else {
    const words = wordsOf(text);
    const names = new Set(declared.map((a) => a.name));
    const keyOf = (w: Word) => /^([^=\s"]+)=/.exec(w.raw)?.[1];
    if (words.length > 0 && words.every((w) => names.has(keyOf(w) ?? ''))) {
      for (const w of words) out[keyOf(w)!] = w.value.slice(w.value.indexOf('=') + 1);
    } else {
      declared.forEach((a, i) => {
        const w = words[i];
        if (w) out[a.name] = i === declared.length - 1 && words.length > declared.length ? text.slice(w.at) : w.value;
      });
    }
  }
  const missing = declared.filter((a) => a.required && !Object.hasOwn(out, a.name)).map((a) => a.name);
  if (missing.length) {
    const hint = declared.map((a) => (a.required ? a.name : `[${a.name}]`)).join(' ');
    throw new TroupeError('invalid_params', `/${command} needs ${missing.join(', ')}: /${command} ${hint}`);
  }
  return { ...out };
}

interface Word {
  /** As typed. */
  raw: string;
  /** Without its quotes (a backslash escapes the next character inside them). */
  value: string;
  /** Where it starts in the text. */
  at: number;
}

/** Words separated by white space outside "quotes". */
function wordsOf(text: string): Word[] {
  const words: Word[] = [];
  let i = 0;
  while (i < text.length) {
    while (i < text.length && /\s/.test(text[i]!)) i++;
    if (i >= text.length) break;
    const at = i;
    let value = '';
    let quoted = false;
    for (; i < text.length && (quoted || !/\s/.test(text[i]!)); i++) {
      const ch = text[i]!;
      if (ch === '"') quoted = !quoted;
      else if (ch === '\\' && quoted && i + 1 < text.length) value += text[++i];
      else value += ch;
    }
    words.push({ raw: text.slice(at, i), value, at });
  }
  return words;
}

/**
 * The prompt's messages as the content of one user turn. A message of the assistant's is kept as
 * text marked as such (a turn starts from a person's message); audio is refused, as in prompts.
 */
export function promptContent(command: string, result: GetPromptResult): ContentBlock[] {
  const blocks: ContentBlock[] = [];
  const roles = new Set(result.messages.map((m) => m.role));
  for (const { role, content: c } of result.messages) {
    const mark = roles.size > 1 ? `${role === 'assistant' ? 'Assistant' : 'User'}: ` : '';
    switch (c.type) {
      case 'text':
        blocks.push({ type: 'text', text: mark + c.text });
        break;
      case 'image':
        if (mark) blocks.push({ type: 'text', text: mark });
        blocks.push({ type: 'image', data: c.data, mimeType: c.mimeType });
        break;
      case 'resource': {
        const r = c.resource;
        if (mark) blocks.push({ type: 'text', text: mark });
        const mime = r.mimeType ? { mimeType: r.mimeType } : {};
        blocks.push({ type: 'resource', resource: 'text' in r && typeof r.text === 'string' ? { uri: r.uri, text: r.text, ...mime } : { uri: r.uri, blob: String((r as { blob?: unknown }).blob ?? ''), ...mime } });
        break;
      }
      case 'resource_link':
        if (mark) blocks.push({ type: 'text', text: mark });
        blocks.push({ type: 'resource_link', uri: c.uri, name: c.name, ...(c.title ? { title: c.title } : {}), ...(c.description ? { description: c.description } : {}), ...(c.mimeType ? { mimeType: c.mimeType } : {}) });
        break;
      default:
        throw new TroupeError('invalid_params', `/${command}: troupe does not accept ${c.type} content in prompts`);
    }
  }
  if (blocks.length === 0) throw new TroupeError('invalid_params', `/${command}: the MCP server made an empty prompt`);
  return blocks;
}
