/**
 * `scripted/demo`: a handful of rules that turn plain requests ("list the files", "read
 * package.json", "create a file notes.txt with hello", "run `ls -la`", "search for TODO") into
 * tool calls, and tool results into a short report. It is an offline demo, not an AI, and says so.
 */
import type { ModelMessage, ModelRequest } from '../../core/provider.js';
import type { ScriptItem } from './script-items.js';

export const DEMO_BANNER = '[offline demo model: rules, not AI]';

interface ToolAsk {
  name: string;
  input: Record<string, unknown>;
  says: string;
}

function textOf(message: ModelMessage): string {
  if (message.role !== 'user') return '';
  return message.content.map((b) => (b.type === 'text' ? b.text : b.type === 'resource' && 'text' in b.resource ? b.resource.text : '')).join('\n');
}

/** A bare word such as "readme" means the file most projects have by that name. */
function filePath(word: string): string {
  const cleaned = word.replace(/[.,;:!?)'"`]+$/, '').replace(/^['"`(]+/, '');
  return /^readme$/i.test(cleaned) ? 'README.md' : cleaned;
}

/** The tool calls a prompt asks for, in the order they appear. */
export function askedTools(text: string): ToolAsk[] {
  const asks: ToolAsk[] = [];
  const lower = text.toLowerCase();
  if (/\b(list|show)\b[^.]*\b(files?|director(y|ies)|folders?|dir|contents)\b|\bls\b(?!\s*-)/.test(lower)) {
    const dir = /\b(?:in|of|under)\s+(?:the\s+)?(?:folder\s+|directory\s+)?([\w./-]+\/|\.[\w./-]*|[\w-]+\/[\w./-]*)/.exec(text);
    const path = dir ? filePath(dir[1]!) : '.';
    asks.push({ name: 'list_dir', input: { path }, says: `list ${path === '.' ? 'this directory' : path}` });
  }
  for (const m of text.matchAll(/\bread\s+(?:the\s+)?(?:file\s+)?([\w./-]+)/gi)) {
    const path = filePath(m[1]!);
    asks.push({ name: 'read_file', input: { path }, says: `read ${path}` });
  }
  const create = /\b(?:create|write)\s+(?:a\s+|the\s+)?file\s+(?:named\s+|called\s+)?([\w./-]+)(?:\s+(?:with|containing|saying)\s+([\s\S]+))?/i.exec(text);
  if (create) {
    const path = filePath(create[1]!);
    asks.push({ name: 'write_file', input: { path, content: `${(create[2] ?? '').trim()}\n` }, says: `create ${path}` });
  }
  const run = /\brun\s+`([^`]+)`/i.exec(text) ?? /\brun\s+(?:the\s+command\s+)?([^\n.]+)/i.exec(text);
  if (run) asks.push({ name: 'run_command', input: { command: run[1]!.trim() }, says: `run \`${run[1]!.trim()}\`` });
  const search = /\b(?:search|grep)\s+(?:for\s+)?["'`]?([^"'`\s]+)/i.exec(text);
  if (search) asks.push({ name: 'grep', input: { pattern: search[1]! }, says: `search for ${search[1]}` });
  return asks;
}

/** The lines of a text as a person counts them: a final newline ends the last line, it starts none. */
function linesOf(text: string): string[] {
  return text === '' ? [] : text.replace(/\n$/, '').split('\n');
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

function firstLines(text: string, n: number): string {
  const lines = linesOf(text);
  return lines.slice(0, n).join('\n') + (lines.length > n ? `\n… (${lines.length - n} more lines)` : '');
}

const FILE_LINES_SHOWN = 8;

/** Reports what the tools returned, one paragraph per result. */
function report(results: Extract<ModelMessage, { role: 'tool' }>['results']): string {
  const parts = results.map((r) => {
    if (r.isError) return `\`${r.name}\` failed: ${firstLines(r.output, 3)}`;
    switch (r.name) {
      case 'list_dir': {
        // The tool's notes (src/tools/list-dir.tool.ts) are not entries: an empty directory, or a cut list.
        if (/^\[.* is empty\]$/.test(r.output)) return 'The directory is empty.';
        const lines = r.output.split('\n').filter(Boolean);
        const more = Number(/^\[\.\.\. (\d+) more entries not shown\]$/.exec(lines.at(-1) ?? '')?.[1] ?? 0);
        const count = lines.length - (more ? 1 : 0) + more;
        return `The directory has ${plural(count, 'entry', 'entries')}:\n${firstLines(lines.join('\n'), 20)}`;
      }
      case 'read_file': {
        const lines = linesOf(r.output).length;
        return `The file has ${plural(lines, 'line')}. ${lines > FILE_LINES_SHOWN ? 'It begins' : 'It reads'}:\n\`\`\`\n${firstLines(r.output, FILE_LINES_SHOWN)}\n\`\`\``;
      }
      default:
        return `\`${r.name}\` returned:\n\`\`\`\n${firstLines(r.output, 8)}\n\`\`\``;
    }
  });
  return `${parts.join('\n\n')}\n\nThat is everything the tools returned.`;
}

export function demoReply(request: ModelRequest): ScriptItem[] {
  const last = request.messages.at(-1);
  if (last?.role === 'tool') return [{ text: report(last.results) }];
  const text = last ? textOf(last) : '';
  const asks = askedTools(text);
  if (asks.length === 0) {
    return [
      { thought: 'No file or command request found in the prompt.' },
      {
        text:
          `${DEMO_BANNER} I can list files, read or create a file, search and run a command when a prompt asks ` +
          'in plain words, for example: "list the files here and read package.json". ' +
          'Configure a real model to get real answers (see docs/providers.md).',
      },
    ];
  }
  const plan = asks.map((a) => a.says).join(', then ');
  return [
    { thought: `The prompt asks me to ${plan}.` },
    { text: `${DEMO_BANNER} I will ${plan}.` },
    ...asks.map((a) => ({ tool_call: { name: a.name, input: a.input } })),
  ];
}
