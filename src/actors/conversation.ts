/**
 * The conversation as the model sees it, folded from the event log. Because it is derived only
 * from events, a session reopened from its log (after a restart or a crash) sends the model exactly
 * what it would have sent before.
 */
import { ContentJoiner } from '../core/content-parts.js';
import type { AgentEvent, ContentBlock, EventOf, ToolStatus } from '../core/events.js';
import { contentChars, type ModelMessage } from '../core/provider.js';
import { jsonLength } from '../core/json-bytes.js';
import { headOf } from '../core/text-cut.js';

interface Entry {
  seq: number;
  message: ModelMessage;
}

/** What is still open in a turn that has started and not completed (used for crash repair). */
export interface OpenTurn {
  turnId: string;
  tools: Map<string, ToolStatus>;
  /** requestId → toolCallId of permission prompts not yet resolved. */
  permissions: Map<string, string>;
  /** Steers received and not yet applied. */
  steers: Set<string>;
  /**
   * Model steps seen so far (assistant messages started in this turn, but the retried reply of a
   * step the context window cut: `retrying`), as the turn counts them (turn_completed's `steps`).
   */
  steps: number;
  /**
   * Set by the note after a cut reply (continueCutReply): the next reply is the same step again, as
   * the turn machine retries it under the same number. Until 2026-12-07 it was counted as a step of
   * its own, and a turn that crash repair ended had one step more than the turn had made.
   */
  retrying?: boolean;
}

const GUIDANCE_PREFIX = '[Guidance from the user, sent while you were working on this turn]';
/** Sent after a reply the context window cut, once the conversation is compacted (continueCutReply). */
export const CUT_REPLY_NOTE =
  '[Your reply above was cut off: it filled the context window. The conversation has been compacted to make room. ' +
  'Continue exactly where the reply stopped, without repeating what it already says.]';

export class Conversation {
  cwd = '';
  additionalDirectories: string[] = [];
  model = '';
  mode = '';
  title?: string;
  closed = false;
  lastSeq = 0;
  openTurn?: OpenTurn;
  /**
   * A compaction started and not completed (a turn's, or `/compact`'s outside any turn): its end
   * closes it, as a cancel or a failure does; a process killed during it leaves it for crash repair.
   */
  openCompaction?: { compactionId: string; turnId?: string; startedSeq: number; reason: 'preflight' | 'overflow' | 'manual' };
  /**
   * The turn of the latest `user_message` while its `turn_started` has not followed: only a process
   * killed between the two writes of a large prompt leaves one (spec/event-log.md §3).
   */
  unstartedTurnId?: string;
  /** Tool name → remembered "always" answer. */
  readonly remembered = new Map<string, 'allow' | 'reject'>();
  /** Seqs of every turn_completed, in order: compaction cuts the history at one of them. */
  readonly turnEnds: number[] = [];
  summary?: { text: string; throughSeq: number };
  /**
   * The context as the model last measured it: the tokens its last call used (input, cache and
   * output, from the `usage` event) and the characters added since. Preflight uses it to skip sizing
   * the request (the vendor's count, or the offline estimate) when the session is far from its
   * budget. Unknown until a call reports usage, and again after a compaction or a change of model
   * (another tokenizer).
   */
  measured?: { tokens: number; charsSince: number };
  private toolOutputLimit?: { limit: number; atSeq: number };
  private entries: Entry[] = [];
  /** The latest turn's prompt (its `user_message`): where a refusal cuts the history. */
  private turnStart?: { turnId: string; seq: number };
  private readonly steerContent = new Map<string, ContentBlock[]>();
  private readonly finishedTools = new Set<string>();
  /** Every tool call id the session has had (a summary that replaces the entries keeps them taken). */
  private readonly toolCallIds = new Set<string>();
  /**
   * The greatest turn id the session has had. Turn ids sort by their time (src/core/ids.ts), so one
   * beyond it is one the session never had: the test a turn id a prompt names must pass.
   */
  latestTurnId = '';
  private readonly parts = new ContentJoiner();

  apply(event: AgentEvent): void {
    this.lastSeq = event.seq;
    // Parts are taken until their message; any other event lets them go (a crash left them alone).
    this.parts.see(event);
    switch (event.type) {
      case 'session_created':
        this.cwd = event.cwd;
        this.additionalDirectories = event.additionalDirectories;
        this.model = event.model;
        this.mode = event.mode;
        break;
      case 'session_configured':
        if (event.mode !== undefined) this.mode = event.mode;
        if (event.model !== undefined && event.model !== this.model) {
          this.model = event.model;
          this.measured = undefined;
        }
        if (event.title !== undefined) this.title = event.title;
        if (event.additionalDirectories !== undefined) this.additionalDirectories = event.additionalDirectories;
        break;
      case 'user_message': {
        const content = this.parts.contentOf(event);
        this.turnStart = { turnId: event.turnId, seq: event.seq };
        this.unstartedTurnId = event.turnId;
        if (event.turnId > this.latestTurnId) this.latestTurnId = event.turnId;
        this.entries.push({ seq: event.seq, message: { role: 'user', content } });
        this.added(contentChars(content));
        break;
      }
      case 'turn_started':
        this.openTurn = { turnId: event.turnId, tools: new Map(), permissions: new Map(), steers: new Set(), steps: 0 };
        this.unstartedTurnId = undefined;
        break;
      case 'agent_message_chunk':
      case 'agent_thought_chunk': {
        const a = this.assistant(event.seq);
        if (event.type === 'agent_message_chunk') a.text += event.text;
        else a.thinking = (a.thinking ?? '') + event.text;
        this.added(event.text.length);
        break;
      }
      case 'reasoning_part': {
        const a = this.assistant(event.seq);
        (a.reasoning ??= []).push(event.part);
        this.added(jsonLength(event.part));
        break;
      }
      case 'tool_call_started': {
        const input = this.parts.inputOf(event);
        this.assistant(event.seq).toolCalls.push({ id: event.toolCallId, name: event.name, input });
        this.toolCallIds.add(event.toolCallId);
        // Counted, not made: an input's JSON may be longer than a string can be (90M control characters).
        this.added(event.name.length + jsonLength(input));
        this.openTurn?.tools.set(event.toolCallId, event.status);
        break;
      }
      case 'tool_call_updated':
        if (event.status) this.openTurn?.tools.set(event.toolCallId, event.status);
        if (event.output !== undefined && !this.finishedTools.has(event.toolCallId)) this.toolResult(event);
        break;
      case 'permission_requested':
        this.openTurn?.permissions.set(event.requestId, event.toolCallId);
        break;
      case 'permission_resolved':
        this.openTurn?.permissions.delete(event.requestId);
        if (event.remember) this.remembered.set(event.remember, event.outcome === 'allow_always' ? 'allow' : 'reject');
        break;
      case 'steer_received':
        this.steerContent.set(event.steerId, this.parts.contentOf(event));
        this.openTurn?.steers.add(event.steerId);
        break;
      case 'steer_applied': {
        const content = this.steerContent.get(event.steerId) ?? [];
        // Taken out once applied or rejected: kept, every steer's content (a pasted screenshot) stayed
        // for the session's life, after a rejection or a compaction that summarized it away too.
        this.steerContent.delete(event.steerId);
        this.openTurn?.steers.delete(event.steerId);
        this.entries.push({ seq: event.seq, message: { role: 'user', content: [{ type: 'text', text: GUIDANCE_PREFIX }, ...content] } });
        this.added(GUIDANCE_PREFIX.length + contentChars(content));
        break;
      }
      case 'steer_rejected':
        this.steerContent.delete(event.steerId);
        this.openTurn?.steers.delete(event.steerId);
        break;
      case 'compaction_started':
        this.openCompaction = { compactionId: event.compactionId, ...(event.turnId ? { turnId: event.turnId } : {}), startedSeq: event.seq, reason: event.reason };
        break;
      case 'compaction_completed': {
        const open = this.openCompaction?.compactionId === event.compactionId ? this.openCompaction : undefined;
        if (open) this.openCompaction = undefined;
        if (event.status === 'completed') {
          if (event.summary !== undefined && event.throughSeq !== undefined) this.summary = { text: event.summary, throughSeq: event.throughSeq };
          if (event.toolOutputLimit !== undefined) this.toolOutputLimit = { limit: event.toolOutputLimit, atSeq: event.seq };
          // Entries the summary replaces are gone for good: drop them to keep memory flat.
          const through = this.summary?.throughSeq ?? 0;
          this.entries = this.entries.filter((e) => e.seq > through);
          this.measured = undefined;
          if (open?.reason === 'overflow' && open.turnId !== undefined && open.turnId === this.openTurn?.turnId) this.continueCutReply(event.seq);
        }
        break;
      }
      case 'usage':
        this.measured = { tokens: event.used, charsSince: 0 };
        break;
      case 'turn_completed':
        this.turnEnds.push(event.seq);
        this.openTurn = undefined;
        // ACP's `refusal`: the prompt and everything after it is left out of the next prompt (the
        // client shows it so), and a vendor that refused would only refuse again with it there.
        if (event.stopReason === 'refusal' && this.turnStart?.turnId === event.turnId) {
          const from = this.turnStart.seq;
          this.entries = this.entries.filter((e) => e.seq < from);
          this.measured = undefined;
        }
        break;
      case 'session_closed':
        // A log's last event (src/core/events.ts): no prompt is taken after it.
        this.closed = true;
        break;
      default:
        break;
    }
  }

  /** How many content parts it holds, waiting for their message (src/core/content-parts.ts). */
  get heldParts(): number {
    return this.parts.heldParts;
  }

  /**
   * Lets go of the content parts taken so far: the engine that logs a message (a tool call) in parts
   * hands it over whole with the message, so the parts it logged live are not needed here, and kept
   * until then they would be a second copy of a large input (src/actors/engine-core.ts emitParted).
   */
  releaseParts(): void {
    this.parts.release();
  }

  /** Whether a tool call of this id was ever started in the session. */
  hasToolCall(id: string): boolean {
    return this.toolCallIds.has(id);
  }

  /**
   * The messages for the next model call, repaired so that every vendor accepts them. `throughSeq`
   * stops at an event; `withSummary: false` leaves out the summary of earlier turns (compaction
   * places it itself).
   */
  messages(options: { throughSeq?: number; withSummary?: boolean } = {}): ModelMessage[] {
    const through = options.throughSeq ?? Infinity;
    const out: ModelMessage[] = [];
    if (this.summary && options.withSummary !== false) out.push({ role: 'user', content: [{ type: 'text', text: `[Summary of the earlier conversation]\n${this.summary.text}` }] });
    for (const entry of this.entries) {
      if (entry.seq > through) break;
      const message = this.truncated(entry);
      const prev = out.at(-1);
      // Vendors want alternating roles: merge neighbours of the same role.
      if (prev?.role === 'user' && message.role === 'user') out[out.length - 1] = { role: 'user', content: [...prev.content, ...message.content] };
      else if (prev?.role === 'tool' && message.role === 'tool') out[out.length - 1] = { role: 'tool', results: [...prev.results, ...message.results] };
      else out.push(message);
    }
    return answerDanglingToolCalls(out);
  }

  /** Whether a tool output the next model call sends is longer than `limit` (a compaction cutting to it would shorten it). */
  hasToolOutputOver(limit: number): boolean {
    const t = this.toolOutputLimit;
    return this.entries.some(
      (e) => e.message.role === 'tool' && e.message.results.some((r) => r.output.length > limit && (!t || e.seq > t.atSeq || t.limit > limit)),
    );
  }

  private truncated(entry: Entry): ModelMessage {
    const t = this.toolOutputLimit;
    if (!t || entry.message.role !== 'tool' || entry.seq > t.atSeq) return entry.message;
    return {
      role: 'tool',
      results: entry.message.results.map((r) =>
        r.output.length <= t.limit ? r : { ...r, output: cutOutput(r.output, t.limit) },
      ),
    };
  }

  private added(chars: number): void {
    if (this.measured) this.measured.charsSince += chars;
  }

  /**
   * After the overflow compaction of a step whose reply the full window cut (Anthropic's
   * `model_context_window_exceeded`, Mistral's `model_length`, a local server's "Context size has
   * been exceeded." mid-stream, OpenAI's `max_output_tokens` or a compatible server's `length` whose
   * counts show the window filled),
   * the same step is sent again: what it had said stays in the history, as it stays in the log and
   * on the client's screen, and a note after it asks the model to go on from there. Without the note
   * the retried reply's chunks would join the cut one as one message, and a model that started over
   * would say the same things twice, in the client and in every later request. A reply of thinking
   * alone gets no note: it said nothing to go on from (and Anthropic's request leaves it out). Derived
   * from the log, so a reopened session sends the same.
   */
  private continueCutReply(seq: number): void {
    const last = this.entries.at(-1)?.message;
    if (last?.role !== 'assistant' || !last.text.trim()) return;
    this.entries.push({ seq, message: { role: 'user', content: [{ type: 'text', text: CUT_REPLY_NOTE }] } });
    this.added(CUT_REPLY_NOTE.length);
    if (this.openTurn) this.openTurn.retrying = true;
  }

  private assistant(seq: number): Extract<ModelMessage, { role: 'assistant' }> {
    const last = this.entries.at(-1)?.message;
    if (last?.role === 'assistant') return last;
    const fresh: Extract<ModelMessage, { role: 'assistant' }> = { role: 'assistant', text: '', toolCalls: [] };
    if (this.openTurn?.retrying) this.openTurn.retrying = false;
    else if (this.openTurn) this.openTurn.steps++;
    this.entries.push({ seq, message: fresh });
    return fresh;
  }

  private toolResult(event: EventOf<'tool_call_updated'>): void {
    this.finishedTools.add(event.toolCallId);
    const name = this.toolName(event.toolCallId);
    const result = { toolCallId: event.toolCallId, name, output: event.output ?? '', isError: event.status === 'failed' };
    this.added(result.output.length);
    const last = this.entries.at(-1)?.message;
    if (last?.role === 'tool') last.results.push(result);
    else this.entries.push({ seq: event.seq, message: { role: 'tool', results: [result] } });
  }

  private toolName(toolCallId: string): string {
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const m = this.entries[i]!.message;
      if (m.role === 'assistant') {
        const call = m.toolCalls.find((c) => c.id === toolCallId);
        if (call) return call.name;
      }
    }
    return 'unknown';
  }
}

/** A tool call with no result (cancelled, crashed) gets one, since vendors reject unanswered calls. */
function answerDanglingToolCalls(messages: ModelMessage[]): ModelMessage[] {
  const out: ModelMessage[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    out.push(m);
    if (m.role !== 'assistant' || m.toolCalls.length === 0) continue;
    const next = messages[i + 1];
    const answered = new Set(next?.role === 'tool' ? next.results.map((r) => r.toolCallId) : []);
    const missing = m.toolCalls
      .filter((c) => !answered.has(c.id))
      .map((c) => ({ toolCallId: c.id, name: c.name, output: 'The tool call did not run: the turn was interrupted.', isError: true }));
    if (missing.length === 0) continue;
    if (next?.role === 'tool') {
      messages[i + 1] = { role: 'tool', results: [...next.results, ...missing] };
    } else {
      out.push({ role: 'tool', results: missing });
    }
  }
  return out;
}

/** A tool output cut to its first `limit` characters, a surrogate pair never parted, and the cut said. */
function cutOutput(output: string, limit: number): string {
  const head = headOf(output, limit);
  return `${head}\n[… ${output.length - head.length} characters removed by compaction]`;
}
