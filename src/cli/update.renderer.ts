/**
 * Human output of a session's `session/update`s: the agent's text streams as it arrives, thoughts
 * dimmed, tool calls as one line each (title, kind, status) with coloured diffs and command output,
 * plans as lists. A spinner shows on stderr while the agent is quiet.
 */
import type * as acp from '@agentclientprotocol/sdk';
import { diffLines } from './line-diff.js';
import { printable } from './terminal-text.js';
import { Spinner } from './spinner.js';
import type { Style } from './style.js';

type Stream = 'text' | 'thought' | 'user' | undefined;

const MAX_OUTPUT_LINES = 20;

export interface RendererOptions {
  /** Draw the waiting spinner (only takes effect on a TTY). */
  spinner: boolean;
}

export class UpdateRenderer {
  private stream: Stream;
  private messageId: string | undefined;
  private atLineStart = true;
  private readonly tools = new Map<string, { title: string; kind: string; status: string }>();
  private readonly spinner: Spinner;
  /** Between waiting() and done(): the agent is working, so quiet moments show the spinner. */
  private active = false;
  /** The turn the latest update belonged to (from `_meta.troupe.turnId`). */
  lastTurnId: string | undefined;
  /** Called before anything is written (the chat loop clears its prompt line there). */
  beforeOutput: (() => void) | undefined;

  constructor(
    private readonly out: NodeJS.WritableStream,
    err: NodeJS.WritableStream,
    private readonly style: Style,
    private readonly opts: RendererOptions,
  ) {
    this.spinner = new Spinner(err, 'working…', opts.spinner);
  }

  /** Starts showing the spinner between outputs (call when a turn starts). */
  waiting(): void {
    this.active = true;
    this.spinner.start(() => this.atLineStart);
  }

  /** Stops the spinner and ends the current line (call when a turn ends). */
  done(): void {
    this.active = false;
    this.spinner.stop();
    this.newline();
    this.stream = undefined;
  }

  /** Writes a line of our own (notes, prompts) without breaking the layout. */
  note(text: string): void {
    this.spinner.stop();
    this.newline();
    this.write(`${text}\n`);
    this.stream = undefined;
  }

  private write(s: string): void {
    if (!s) return;
    this.beforeOutput?.();
    this.spinner.stop();
    this.out.write(s);
    this.atLineStart = s.endsWith('\n');
    if (this.active) this.spinner.start(() => this.atLineStart);
  }

  private newline(): void {
    if (!this.atLineStart) this.write('\n');
  }

  private chunk(kind: Stream, text: string, messageId: string | undefined): void {
    if (kind !== this.stream || (messageId && messageId !== this.messageId && this.messageId)) {
      this.newline();
      if (this.stream !== undefined && kind !== this.stream) this.write('\n');
      if (kind === 'user') this.write(this.style.bold('› '));
    }
    this.stream = kind;
    this.messageId = messageId;
    const safe = printable(text, { lines: true });
    const styled = kind === 'thought' ? this.style.dim(safe) : kind === 'user' ? this.style.bold(safe) : safe;
    this.write(styled);
  }

  /** The slash commands the agent last announced for the session (its own, its MCP servers' prompts). */
  commands: acp.AvailableCommand[] = [];

  /** Renders one update. */
  update(n: acp.SessionNotification): void {
    const u = n.update as acp.SessionUpdate & { _meta?: { troupe?: { turnId?: string } }; messageId?: string };
    const turnId = u._meta?.troupe?.turnId;
    if (turnId) this.lastTurnId = turnId;
    switch (u.sessionUpdate) {
      case 'agent_message_chunk':
      case 'agent_thought_chunk':
      case 'user_message_chunk': {
        // A prompt or steer shows as `› TEXT`: the daemon sends a client only the ones other clients sent.
        const text = u.content.type === 'text' ? u.content.text : `[${printable(u.content.type)}]`;
        const kind = u.sessionUpdate === 'agent_message_chunk' ? 'text' : u.sessionUpdate === 'agent_thought_chunk' ? 'thought' : 'user';
        this.chunk(kind, text, u.messageId ?? undefined);
        return;
      }
      case 'tool_call':
        this.tools.set(u.toolCallId, { title: u.title, kind: u.kind ?? 'other', status: u.status ?? 'pending' });
        this.toolLine(u.toolCallId);
        this.toolContent(u.toolCallId, u.content ?? undefined, u.rawOutput);
        return;
      case 'tool_call_update': {
        const t = this.tools.get(u.toolCallId) ?? { title: u.title ?? u.toolCallId, kind: u.kind ?? 'other', status: 'pending' };
        const changed = (u.status && u.status !== t.status) || (u.title && u.title !== t.title);
        if (u.title) t.title = u.title;
        if (u.status) t.status = u.status;
        this.tools.set(u.toolCallId, t);
        if (changed && t.status !== 'in_progress') this.toolLine(u.toolCallId);
        this.toolContent(u.toolCallId, u.content ?? undefined, u.rawOutput);
        return;
      }
      case 'plan':
        this.note(this.style.bold('Plan:'));
        for (const e of u.entries) this.write(`  ${e.status === 'completed' ? '☑' : e.status === 'in_progress' ? '▸' : '☐'} ${printable(e.content)}\n`);
        return;
      case 'current_mode_update':
        // The agent's id, spelled out (until 2026-12-06 printed raw).
        this.note(this.style.dim(`[mode: ${printable(u.currentModeId)}]`));
        return;
      case 'available_commands_update':
        // Not shown as it comes: `/help` lists them.
        this.commands = u.availableCommands;
        return;
      default:
        // usage, config options and titles are not part of the conversation text.
        return;
    }
  }

  private toolLine(id: string): void {
    const t = this.tools.get(id)!;
    const mark =
      t.status === 'completed' ? this.style.green('✓') : t.status === 'failed' ? this.style.red('✗') : t.status === 'in_progress' ? this.style.yellow('…') : this.style.cyan('●');
    this.newline();
    // Title, kind and status are all the agent's (until 2026-12-06 kind and status were printed raw).
    this.write(`${mark} ${this.style.bold(printable(t.title))} ${this.style.dim(printable(`(${t.kind}, ${t.status})`))}\n`);
    this.stream = undefined;
  }

  private toolContent(id: string, content: acp.ToolCallContent[] | undefined, rawOutput: unknown): void {
    const t = this.tools.get(id)!;
    for (const c of content ?? []) {
      if (c.type === 'diff') {
        for (const line of diffLines(c.path, c.oldText, c.newText, this.style)) this.write(`${line}\n`);
      } else if (c.type === 'content' && c.content.type === 'text' && (t.kind === 'execute' || t.status === 'failed')) {
        this.output(c.content.text, t.status === 'failed');
      }
    }
    if (!content?.length && t.status === 'failed' && rawOutput && typeof rawOutput === 'object') {
      const o = (rawOutput as { output?: unknown }).output;
      if (typeof o === 'string') this.output(o, true);
    }
  }

  private output(text: string, failed: boolean): void {
    const lines = printable(text, { lines: true }).replace(/\n$/, '').split('\n');
    const line = (l: string) => this.write(`${failed ? this.style.red(`  │ ${l}`) : this.style.dim(`  │ ${l}`)}\n`);
    if (lines.length <= MAX_OUTPUT_LINES) return lines.forEach(line);
    // The first lines and the last: a command's end (its errors, its "[exit code: N]") matters as
    // much as its start, and the first lines alone hid whether it failed.
    const half = MAX_OUTPUT_LINES / 2;
    lines.slice(0, half).forEach(line);
    this.write(this.style.dim(`  │ … ${lines.length - MAX_OUTPUT_LINES} more lines\n`));
    lines.slice(-half).forEach(line);
  }
}
