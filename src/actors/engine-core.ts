/**
 * What the turn effects share: the session's dependencies, its conversation, and the one place
 * where events are emitted (append to the log, then fold into the conversation).
 */
import { partsId, sliceJson, type PartedEvent } from '../core/content-parts.js';
import { isTroupeError } from '../core/errors.js';
import type { AgentEvent, AgentEventInput, ToolContent } from '../core/events.js';
import type { Clock, EventLog, Logger, PermissionAsker, PermissionPolicy, ToolDescription, ToolHost } from '../core/ports.js';
import type { ModelCapabilities, ModelProvider, ModelRequest } from '../core/provider.js';
import { Conversation } from './conversation.js';

export interface ResolvedModel {
  provider: ModelProvider;
  /** The id the provider knows, without the `provider/` prefix. */
  model: string;
  capabilities: ModelCapabilities;
  /** Tokens of thinking a turn asks for (the provider's `thinkingBudget` setting); absent: none. */
  thinkingBudget?: number;
}

export interface EngineLimits {
  /** Model calls per turn; one more is `max_turn_requests`. */
  maxSteps: number;
  /** Preflight compacts when the estimate exceeds this share of the context window. */
  compactThreshold: number;
  /** A permission prompt nobody answers within this time is a denial. */
  permissionTimeoutMs: number;
  /** Compaction keeps this many of the latest completed turns verbatim. */
  keepTurns: number;
  /** Compaction cuts older tool outputs to this many characters. */
  toolOutputLimit: number;
}

export const DEFAULT_LIMITS: EngineLimits = {
  maxSteps: 25,
  compactThreshold: 0.8,
  permissionTimeoutMs: 5 * 60_000,
  keepTurns: 2,
  toolOutputLimit: 4_000,
};

export interface EngineDeps {
  log: EventLog;
  /** Resolves a full model id (`provider/model`); throws TroupeError('model_not_found'). */
  resolveModel(modelId: string): ResolvedModel;
  tools: ToolHost;
  policy: PermissionPolicy;
  asker: PermissionAsker;
  clock: Clock;
  logger: Logger;
  limits: EngineLimits;
  /** The system prompt for the session's workspace as it is now (a client's load may change its directories). */
  systemPrompt(workspace: Workspace): string;
}

/** Where a session works: its cwd and additional directories, as its conversation holds them now. */
export interface Workspace {
  readonly cwd: string;
  readonly additionalDirectories: readonly string[];
}

export type MessageInput = Extract<AgentEventInput, { type: 'user_message' | 'steer_received' }>;
export type ToolCallInput = Extract<AgentEventInput, { type: 'tool_call_started' }>;

/**
 * The most a part's `data` may take, as a JSON string in bytes: the log's limit less the part's
 * other fields, its stamp (seq, ts) and room to spare.
 */
function partBudget(maxEventBytes: number, part: Record<string, unknown>): number {
  return maxEventBytes - Buffer.byteLength(JSON.stringify({ ...part, index: Number.MAX_SAFE_INTEGER, data: '' })) - 128;
}

export class EngineCore {
  readonly conversation = new Conversation();
  /** Descriptions of the tool calls of the latest step, by call id (absent: the call is invalid). */
  readonly descriptions = new Map<string, ToolDescription | Error>();
  openPermission?: { requestId: string; toolCallId: string };
  /**
   * What allowing the call `decideTool` has just sent to be asked about would do (an edit's diff),
   * shown in its permission prompt: made once, before the decision to ask (tool.effects.ts).
   */
  preview?: { toolCallId: string; content: ToolContent[] | undefined };
  /**
   * Terminals running tool calls have shown (by call id), until the call's result: a failure
   * (a cancel, say) keeps them in its content, which replaces what the call showed before.
   */
  readonly shownTerminals = new Map<string, ToolContent[]>();
  /** The turn whose overflow compaction ran last: its overflow after that says compaction was tried. */
  overflowCompactedTurn?: string;
  /** Listeners for every emitted event, in order (the engine's own observers; clients use the log). */
  readonly observers = new Set<(event: AgentEvent) => void>();
  /**
   * Aborted when the session stops by itself (SessionEngine.stopWith): every effect's signal follows
   * it (engine-machines.ts), since a machine that failed does not stop what it had started.
   */
  readonly halt = new AbortController();
  /**
   * Why the running turn is being cancelled when its client did not ask (the daemon or the agent
   * shutting down), in words: what its tool call and its end say instead of "by the user" (a
   * command cut off by a daemon stop was recorded as cancelled by the user). Cleared as the turn ends.
   */
  cancelCause?: string;

  constructor(
    readonly sessionId: string,
    readonly deps: EngineDeps,
  ) {}

  emit(input: AgentEventInput): AgentEvent {
    return this.publish(this.deps.log.append(input));
  }

  /** An appended event to the conversation and the observers. */
  private publish(event: AgentEvent): AgentEvent {
    this.conversation.apply(event);
    for (const observe of this.observers) observe(event);
    return event;
  }

  /**
   * Emits a prompt's or a steer's message. Content too large for one event goes first, in
   * `content_part` events (src/core/content-parts.ts); the conversation and the observers get the
   * message with its content whole either way.
   */
  emitMessage(input: MessageInput): AgentEvent {
    return this.emitParted(input, 'content', []);
  }

  /**
   * Emits a tool call the model asked for. An input too large for one event (a model writing a
   * large file) goes first in `content_part` events, as a large prompt's content does: before, the
   * append failed the whole turn with `event_too_large`, the call neither run nor answered.
   */
  emitToolCall(input: ToolCallInput): AgentEvent {
    return this.emitParted(input, 'input', {});
  }

  /** `input`, or its `field` in parts and the event with `empty` and `parts` in its place (spec/event-log.md §5.1). */
  private emitParted<E extends MessageInput | ToolCallInput>(input: E, field: 'content' | 'input', empty: unknown): AgentEvent {
    try {
      return this.emit(input);
    } catch (err) {
      if (!isTroupeError(err, 'event_too_large')) throw err;
    }
    const { sessionId, turnId } = input;
    const partOf = partsId(input);
    // The JSON text is made and logged a slice at a time, never whole: an input the turn holds may
    // have JSON longer than V8's longest string (90M control characters are 540M characters of it).
    const budget = partBudget(this.deps.log.maxEventBytes, { type: 'content_part', sessionId, turnId, partOf });
    let index = 0;
    const parts = sliceJson((input as Record<string, unknown>)[field], budget, (data) => {
      this.emit({ type: 'content_part', sessionId, turnId, partOf, index: index++, data });
      // Each part is let go once logged: the conversation gets the content whole with the event, and
      // the log's writer would otherwise hold every part until the next turn of the loop (and then
      // encode them all into one buffer). Held, they were a second copy of the input (and its
      // encoding a third and a fourth): a 64 MiB input needed a heap of 120-140 MiB, where 80 does now.
      this.conversation.releaseParts();
      this.deps.log.writePending();
    });
    const { parts: _parts, ...logged } = this.deps.log.append({ ...input, [field]: empty, parts } as AgentEventInput) as PartedEvent;
    return this.publish({ ...logged, [field]: (input as Record<string, unknown>)[field] } as AgentEvent);
  }

  /** Throws what {@link emitMessage} would for `input`'s fields (content of any size is taken, in parts). */
  checkMessage(input: MessageInput): void {
    try {
      this.deps.log.check(input);
    } catch (err) {
      if (!isTroupeError(err, 'event_too_large')) throw err;
      this.deps.log.check({ ...input, content: [], parts: 1 });
    }
  }

  model(): ResolvedModel {
    return this.deps.resolveModel(this.conversation.model);
  }

  request(resolved: ResolvedModel, purpose: ModelRequest['purpose'] = 'turn'): ModelRequest {
    return {
      model: resolved.model,
      system: this.deps.systemPrompt(this.conversation),
      messages: this.conversation.messages(),
      tools: resolved.capabilities.tools ? this.deps.tools.specs() : [],
      maxOutputTokens: resolved.capabilities.maxOutputTokens,
      // Each adapter maps the budget onto its vendor's setting, and only for models with the `thinking` capability.
      ...(resolved.thinkingBudget ? { thinkingBudget: resolved.thinkingBudget } : {}),
      purpose,
    };
  }
}
