/**
 * The AgentEvent vocabulary: everything that happens in a session, as an append-only sequence.
 *
 * The zod schemas here are the single source of truth: TypeScript types are inferred from them and
 * `spec/events.schema.json` is generated from them (`node scripts/gen-event-schema.js`). Tests check
 * every emitted event against the generated JSON Schema. See spec/events.md.
 */
import * as z from 'zod';

const id = z.string().min(1).max(1024);
const nonNegInt = z.number().int().nonnegative();

/** A prompt content block, as ACP defines it (text, resource links, embedded resources, images). */
export const ContentBlock = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), text: z.string() }),
  z.object({ type: z.literal('image'), data: z.string(), mimeType: z.string(), uri: z.string().optional() }),
  z.object({
    type: z.literal('resource_link'),
    uri: z.string(),
    name: z.string(),
    title: z.string().optional(),
    description: z.string().optional(),
    mimeType: z.string().optional(),
    size: z.number().int().nonnegative().optional(),
  }),
  z.object({
    type: z.literal('resource'),
    resource: z.union([
      z.object({ uri: z.string(), text: z.string(), mimeType: z.string().optional() }),
      z.object({ uri: z.string(), blob: z.string(), mimeType: z.string().optional() }),
    ]),
  }),
]);
export type ContentBlock = z.infer<typeof ContentBlock>;

export const ToolKind = z.enum(['read', 'edit', 'delete', 'move', 'search', 'execute', 'think', 'fetch', 'switch_mode', 'other']);
export type ToolKind = z.infer<typeof ToolKind>;

export const ToolStatus = z.enum(['pending', 'in_progress', 'completed', 'failed']);
export type ToolStatus = z.infer<typeof ToolStatus>;

/** What a tool call shows: text, a diff of one file, or a live terminal. */
export const ToolContent = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), text: z.string() }),
  z.object({ type: z.literal('diff'), path: z.string(), oldText: z.string().nullable(), newText: z.string() }),
  z.object({ type: z.literal('terminal'), terminalId: z.string() }),
]);
export type ToolContent = z.infer<typeof ToolContent>;

export const ToolLocation = z.object({ path: z.string(), line: z.number().int().positive().optional() });
export type ToolLocation = z.infer<typeof ToolLocation>;

export const StopReason = z.enum(['end_turn', 'max_tokens', 'max_turn_requests', 'refusal', 'cancelled', 'error']);
export type StopReason = z.infer<typeof StopReason>;

export const PermissionOutcome = z.enum(['allow_once', 'allow_always', 'reject_once', 'reject_always', 'cancelled', 'timeout']);
export type PermissionOutcome = z.infer<typeof PermissionOutcome>;

export const PlanEntry = z.object({
  content: z.string(),
  priority: z.enum(['high', 'medium', 'low']),
  status: z.enum(['pending', 'in_progress', 'completed']),
});
export type PlanEntry = z.infer<typeof PlanEntry>;

const base = { seq: z.number().int().positive(), ts: nonNegInt, sessionId: id };
const inTurn = { ...base, turnId: id };

/** Each variant of the union, keyed by `type`. */
export const AgentEvent = z.discriminatedUnion('type', [
  z.object({
    ...base,
    type: z.literal('session_created'),
    cwd: z.string(),
    additionalDirectories: z.array(z.string()),
    model: z.string(),
    mode: z.string(),
    /** Set when the session was forked: the source session and the seq it was copied through. */
    forkedFrom: z.object({ sessionId: id, throughSeq: nonNegInt }).optional(),
  }),
  z.object({
    ...base,
    type: z.literal('session_configured'),
    mode: z.string().optional(),
    model: z.string().optional(),
    title: z.string().optional(),
    /** The whole list of additional directories from now on (a client's session/load or resume set it). */
    additionalDirectories: z.array(z.string()).optional(),
  }),
  /**
   * A slice of the JSON text of a message's content (or of a tool call's input) too large for one
   * event, logged right before the message (spec/event-log.md §5.1). `partOf` is the message's
   * `messageId` or `steerId`, or the call's `toolCallId`.
   */
  z.object({ ...inTurn, type: z.literal('content_part'), partOf: id, index: nonNegInt, data: z.string() }),
  /** `parts`: the content is in that many `content_part` events before this one, and `content` is empty. */
  z.object({ ...inTurn, type: z.literal('user_message'), messageId: id, content: z.array(ContentBlock), parts: z.number().int().positive().optional() }),
  z.object({ ...inTurn, type: z.literal('turn_started'), maxSteps: z.number().int().positive() }),
  z.object({ ...inTurn, type: z.literal('agent_message_chunk'), messageId: id, text: z.string() }),
  z.object({ ...inTurn, type: z.literal('agent_thought_chunk'), messageId: id, text: z.string() }),
  /** Opaque vendor reasoning state (signatures, encrypted items) that must be sent back verbatim. */
  z.object({
    ...inTurn,
    type: z.literal('reasoning_part'),
    part: z.object({
      provider: z.string(),
      kind: z.string(),
      text: z.string().optional(),
      data: z.string().optional(),
      id: z.string().optional(),
      at: z.object({ text: nonNegInt, toolCalls: nonNegInt }).optional(),
    }),
  }),
  z.object({
    ...inTurn,
    type: z.literal('tool_call_started'),
    toolCallId: id,
    name: z.string(),
    kind: ToolKind,
    title: z.string(),
    status: ToolStatus,
    input: z.record(z.string(), z.unknown()),
    locations: z.array(ToolLocation),
    /** `parts`: the input is in that many `content_part` events before this one, and `input` is `{}`. */
    parts: z.number().int().positive().optional(),
  }),
  z.object({
    ...inTurn,
    type: z.literal('tool_call_updated'),
    toolCallId: id,
    status: ToolStatus.optional(),
    title: z.string().optional(),
    content: z.array(ToolContent).optional(),
    locations: z.array(ToolLocation).optional(),
    /** The result as the model sees it (text), present once the call has finished. */
    output: z.string().optional(),
    errorCode: z.string().optional(),
    /** Written by crash repair (src/actors/crash-repair.ts), not by the machines: see core/interruption.ts. */
    interrupted: z.literal(true).optional(),
  }),
  z.object({ ...inTurn, type: z.literal('permission_requested'), toolCallId: id, requestId: id, options: z.array(PermissionOutcome) }),
  z.object({
    ...inTurn,
    type: z.literal('permission_resolved'),
    toolCallId: id,
    requestId: id,
    outcome: PermissionOutcome,
    /** Who decided: the person asked, the mode's policy, or an earlier "always" answer. */
    decidedBy: z.enum(['user', 'policy', 'remembered']),
    /** For "always" answers: the scope remembered for the rest of the session (a tool name). */
    remember: z.string().optional(),
  }),
  z.object({ ...inTurn, type: z.literal('plan_updated'), entries: z.array(PlanEntry) }),
  z.object({
    ...base,
    turnId: id.optional(),
    type: z.literal('usage'),
    used: nonNegInt,
    size: nonNegInt,
    inputTokens: nonNegInt,
    outputTokens: nonNegInt,
    cacheReadTokens: nonNegInt.optional(),
    cacheWriteTokens: nonNegInt.optional(),
    cost: z.object({ amount: z.number().nonnegative(), currency: z.string().length(3) }).optional(),
  }),
  /**
   * A model call failed before anything of its reply arrived and is being made again: a status for
   * the person waiting, written before the wait (src/core/model-stream.ts). `turnId` is absent for a
   * `/compact` outside any turn. `errorCode` is what the failure would have ended the turn with.
   */
  z.object({
    ...base,
    turnId: id.optional(),
    type: z.literal('model_retry'),
    /** The provider id (the model id's prefix), e.g. `anthropic`. */
    provider: z.string(),
    errorCode: z.string(),
    /** The vendor's HTTP status, when it answered with one. */
    status: z.number().int().optional(),
    /** The vendor's own words (cut to 1,000 characters). */
    message: z.string(),
    /** The attempt about to be made: 2 for the first retry. */
    attempt: z.number().int().min(2),
    /** The most attempts the call gets (the provider's `maxRetries` + 1). */
    attempts: z.number().int().min(2),
    /** How long troupe waits before it: the vendor's retry-after, else its backoff. */
    delayMs: nonNegInt,
  }),
  z.object({ ...inTurn, type: z.literal('steer_received'), steerId: id, content: z.array(ContentBlock), parts: z.number().int().positive().optional() }),
  z.object({ ...inTurn, type: z.literal('steer_applied'), steerId: id, step: z.number().int().positive() }),
  z.object({
    ...base,
    turnId: id.optional(),
    type: z.literal('steer_rejected'),
    steerId: id,
    expectedTurnId: z.string(),
    code: z.enum(['turn_mismatch', 'no_active_turn', 'turn_ended']),
  }),
  z.object({
    ...base,
    turnId: id.optional(),
    type: z.literal('compaction_started'),
    compactionId: id,
    reason: z.enum(['preflight', 'overflow', 'manual']),
    tokensBefore: nonNegInt,
  }),
  z.object({
    ...base,
    turnId: id.optional(),
    type: z.literal('compaction_completed'),
    compactionId: id,
    status: z.enum(['completed', 'failed']),
    tokensAfter: nonNegInt.optional(),
    /** The summary that replaces the compacted history in later model calls. */
    summary: z.string().optional(),
    /** Seq of the last event whose content the summary replaces. */
    throughSeq: nonNegInt.optional(),
    /** Tool outputs recorded before this event are cut to this many characters from now on. */
    toolOutputLimit: nonNegInt.optional(),
    errorCode: z.string().optional(),
    /** Written by crash repair (src/actors/crash-repair.ts), not by the machines: see core/interruption.ts. */
    interrupted: z.literal(true).optional(),
  }),
  z.object({
    ...inTurn,
    type: z.literal('turn_completed'),
    stopReason: StopReason,
    errorCode: z.string().optional(),
    message: z.string().optional(),
    /** When the vendor said to try again (ms): a rate limit, or a failure troupe retries (a 503, a 529) that said when. */
    retryAfterMs: nonNegInt.optional(),
    /** With `context_overflow`: the vendor's own words; `message` is troupe's account of the failure. */
    vendorMessage: z.string().optional(),
    steps: nonNegInt,
    /** Written by crash repair (src/actors/crash-repair.ts), not by the machines: see core/interruption.ts. */
    interrupted: z.literal(true).optional(),
  }),
  /**
   * The last event. Written today only by a delete's tombstone (`deleted`, src/store/session-tombstone.ts).
   * `closed` was written by SessionEngine.close(), which nothing but tests ever called (removed
   * 2026-12-07: session/close unloads a session, it does not end it); readers keep both, since logs
   * may hold them.
   */
  z.object({ ...base, type: z.literal('session_closed'), reason: z.enum(['closed', 'deleted']) }),
]);
export type AgentEvent = z.infer<typeof AgentEvent>;
export type AgentEventType = AgentEvent['type'];
export type EventOf<T extends AgentEventType> = Extract<AgentEvent, { type: T }>;

/** An event before the log has stamped it: the log assigns `seq` and `ts`. */
export type AgentEventInput = AgentEvent extends infer E ? (E extends AgentEvent ? Omit<E, 'seq' | 'ts'> : never) : never;
