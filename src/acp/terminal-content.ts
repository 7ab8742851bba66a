/**
 * A command run in a client terminal (run-command.tool.ts) has its tool call carry that terminal
 * (`{type: "terminal", terminalId}`): the terminal of the one client that created it
 * (`terminal/create`), released as the command ended. Any other client has no terminal of that id:
 * a client loading the session later (a restarted editor, another window, a client without
 * terminals), and, through the daemon, another client attached to the session while the command
 * runs. Zed fails a whole update whose terminal id it does not know ("Terminal with id … not
 * found"), so such a call stayed pending there, its output never shown (until 2026-12-07 a replay
 * sent such terminals, and the daemon sent every attached client the live terminals of the one that
 * ran the command). Such a client is shown the call without the terminal: what the call's content
 * says besides it, or else its output as text (the final update has it), as a client without
 * terminals sees the call; the update that only embedded it changes nothing. One rule, for the
 * event a `session/load` replays (`withoutTerminals`) and for the update the daemon relays live to a
 * client that does not own the terminal (`updateWithoutTerminals`, src/daemon/relay/terminal-views.ts).
 */
import type { AgentEvent } from '../core/events.js';

/** An event as a replay shows it: without the terminals of its tool call (see the module comment). */
export function withoutTerminals(e: AgentEvent): AgentEvent {
  if (e.type !== 'tool_call_updated' || !e.content?.some((c) => c.type === 'terminal')) return e;
  const { content: all, ...rest } = e;
  const content = all.filter((c) => c.type !== 'terminal');
  if (content.length === 0 && e.output !== undefined) content.push({ type: 'text', text: e.output });
  return content.length ? { ...rest, content } : rest;
}

type Content = { type?: unknown; terminalId?: unknown };

const isTerminal = (c: unknown): c is { type: 'terminal'; terminalId: string } => typeof c === 'object' && c !== null && (c as Content).type === 'terminal' && typeof (c as Content).terminalId === 'string';

/** The terminal ids a `session/update`'s update shows (a tool call's content), none for any other. */
export function terminalIdsOf(update: unknown): string[] {
  const u = update as { sessionUpdate?: unknown; content?: unknown } | undefined;
  if ((u?.sessionUpdate !== 'tool_call' && u?.sessionUpdate !== 'tool_call_update') || !Array.isArray(u.content)) return [];
  return u.content.filter(isTerminal).map((c) => c.terminalId);
}

/**
 * An ACP tool call update (the wire form of what `withoutTerminals` does to its event) without the
 * terminals `keep` does not keep: their place taken by the output as text (`rawOutput.output`) when
 * nothing else is left of its content, the content gone when that is empty too. The update itself
 * when it shows no such terminal. Its keys keep their order.
 */
export function updateWithoutTerminals<U extends Record<string, unknown>>(update: U, keep: (terminalId: string) => boolean = () => false): U {
  const all = update.content;
  if (!Array.isArray(all) || !all.some((c) => isTerminal(c) && !keep(c.terminalId))) return update;
  const content: unknown[] = all.filter((c) => !isTerminal(c) || keep(c.terminalId));
  const output = (update.rawOutput as { output?: unknown } | undefined)?.output;
  if (content.length === 0 && typeof output === 'string') content.push({ type: 'content', content: { type: 'text', text: output } });
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(update)) {
    if (key !== 'content') out[key] = value;
    else if (content.length) out[key] = content;
  }
  return out as U;
}
