/**
 * Answers the agent's `session/request_permission`: `--yes` allows, a TTY asks (allow once, allow
 * always, reject, reject always), and with no TTY the call is rejected with a note saying why.
 */
import type * as acp from '@agentclientprotocol/sdk';
import { diffLines } from './line-diff.js';
import type { Style } from './style.js';
import { printable } from './terminal-text.js';

/** Asks one question; resolves undefined when the question was abandoned (Ctrl-C, cancel). */
export type Ask = (question: string) => Promise<string | undefined>;

const ANSWERS: Record<string, acp.PermissionOptionKind> = {
  y: 'allow_once',
  yes: 'allow_once',
  a: 'allow_always',
  always: 'allow_always',
  n: 'reject_once',
  no: 'reject_once',
  r: 'reject_once',
  never: 'reject_always',
};

function pick(req: acp.RequestPermissionRequest, kind: acp.PermissionOptionKind): acp.RequestPermissionResponse | undefined {
  const option = req.options.find((o) => o.kind === kind);
  return option ? { outcome: { outcome: 'selected', optionId: option.optionId } } : undefined;
}

/** The tool call asked about, in one line: its title and command or path are the model's text, spelled out. */
export function toolCallSummary(req: acp.RequestPermissionRequest): string {
  const t = req.toolCall;
  const input = t.rawInput && typeof t.rawInput === 'object' ? (t.rawInput as Record<string, unknown>) : {};
  const detail = typeof input.command === 'string' ? input.command : typeof input.path === 'string' ? input.path : '';
  const title = t.title ?? 'a tool call';
  return printable(detail && !title.includes(detail) ? `${title} (${detail})` : title);
}

export interface PermissionSettings {
  yes: boolean;
  ask: Ask | undefined;
  style: Style;
  /** Where notes go (the renderer, so they do not break a streamed line). */
  note(line: string): void;
}

/** Lines of a text shown at most in a question (the rest is counted). */
const MAX_TEXT_LINES = 40;

function textLines(text: string): string[] {
  const lines = printable(text, { lines: true }).replace(/\n$/, '').split('\n');
  return lines.length > MAX_TEXT_LINES ? [...lines.slice(0, MAX_TEXT_LINES), `… ${lines.length - MAX_TEXT_LINES} more lines`] : lines;
}

/** The answer to one permission request. */
export async function decidePermission(req: acp.RequestPermissionRequest, s: PermissionSettings): Promise<acp.RequestPermissionResponse> {
  const what = toolCallSummary(req);
  if (s.yes) {
    s.note(s.style.dim(`[allowed ${what} (--yes)]`));
    return pick(req, 'allow_once') ?? pick(req, 'allow_always') ?? { outcome: { outcome: 'cancelled' } };
  }
  if (!s.ask) {
    s.note(s.style.yellow(`[denied ${what}: no terminal to ask; pass --yes to allow]`));
    return pick(req, 'reject_once') ?? { outcome: { outcome: 'cancelled' } };
  }
  s.note(`${s.style.yellow('?')} ${s.style.bold(`Allow ${what}?`)} ${s.style.dim(`(${printable(req.toolCall.kind ?? 'tool')})`)}`);
  // An edit's diff, when the agent sent it: what the answer allows. Or the note that stands in for a
  // diff too large to send (the person saw nothing before, as if nothing would change).
  for (const c of req.toolCall.content ?? []) {
    if (c.type === 'diff') for (const line of diffLines(c.path, c.oldText, c.newText, s.style)) s.note(line);
    else if (c.type === 'content' && c.content.type === 'text') for (const line of textLines(c.content.text)) s.note(s.style.dim(`  ${line}`));
  }
  for (;;) {
    const answer = await s.ask(`  [y] allow once  [a] allow always  [n] reject  [never] always reject › `);
    if (answer === undefined) return { outcome: { outcome: 'cancelled' } };
    const kind = ANSWERS[answer.trim().toLowerCase()];
    const chosen = kind ? pick(req, kind) : undefined;
    if (chosen) return chosen;
    s.note(s.style.dim('  please answer y, a, n or never'));
  }
}
