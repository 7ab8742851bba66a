/**
 * Context budget: the preflight estimate and compaction. Compaction summarizes the turns older than
 * the last `keepTurns` with the session's own model, and cuts long tool outputs; both are recorded
 * in the compaction_completed event, so a session reopened from its log sees the same context.
 *
 * A session over its limit must always be compactable, so the summarization request is itself made
 * to fit the window (see `fitForSummary`), retried once with half the room if the vendor still
 * says it is too long, and replaced by an outline made without the model if even that fails.
 */
import type { ContentBlock } from '../core/events.js';
import { newLocalId } from '../core/ids.js';
import type { InterruptionMark } from '../core/interruption.js';
import { jsonLength } from '../core/json-bytes.js';
import { jsonHead } from '../core/json-slices.js';
import { CHARS_PER_TOKEN, estimateTokens, type ModelCapabilities, type ModelMessage, type ModelRequest } from '../core/provider.js';
import type { EngineCore, EngineLimits, ResolvedModel } from './engine-core.js';
import { emitModelRetry } from './model-retry.js';
import { classify, StepError } from './step-error.js';

/** Share of the context window a summarization request may fill (offline estimate), leaving room for the summary and estimate error. */
export const SUMMARY_INPUT_SHARE = 0.6;
/** Share of the context window one tool output keeps once compacted, so that a small window is not filled by one output. */
const TOOL_OUTPUT_SHARE = 0.1;
/** Text is never cut shorter than this: below it a cut keeps nothing useful. */
const MIN_CUT_CHARS = 200;

/** The toolOutputLimit a compaction records: the configured limit, lowered for small context windows. */
export function toolOutputLimitFor(limits: Pick<EngineLimits, 'toolOutputLimit'>, capabilities: Pick<ModelCapabilities, 'contextWindow'>): number {
  const share = Math.max(MIN_CUT_CHARS, Math.floor(capabilities.contextWindow * CHARS_PER_TOKEN * TOOL_OUTPUT_SHARE));
  return Math.min(limits.toolOutputLimit, share);
}

/**
 * The vendor's count where it has one, else the offline estimate. The adapters make a count once,
 * within a short limit of their own (countTimeoutMs, src/core/model-stream.ts), so a count that never
 * answers ends here as a failure too.
 */
async function countTokens(core: EngineCore, resolved: ResolvedModel, request: ModelRequest, signal: AbortSignal): Promise<number> {
  if (resolved.provider.countTokens) {
    try {
      return await resolved.provider.countTokens(request, signal);
    } catch (err) {
      // A failed count must not fail the turn: fall back to the estimate.
      if (!signal.aborted) core.deps.logger.warn('the token count failed; sizing the request by the offline estimate', { provider: resolved.provider.id, error: String(err) });
    }
  }
  return estimateTokens(request);
}

/**
 * Characters per token assumed, when deciding to skip sizing the request, for what was added since
 * the model last measured the context: half the estimate's four, so that dense text (code, non-Latin
 * scripts) does not slip past the budget uncounted.
 */
const ADDED_CHARS_PER_TOKEN = 2;

export async function preflight(core: EngineCore, signal: AbortSignal): Promise<{ overBudget: boolean }> {
  const resolved = core.model();
  const budget = resolved.capabilities.contextWindow * core.deps.limits.compactThreshold;
  // Where the model's own last measure plus what came since is well inside the budget, neither way of
  // sizing the request can change the answer: the vendor's count is a network round trip before the
  // turn's first token, and the offline estimate serializes the whole conversation on every turn (and
  // knows the model's tokenizer less well than the model does). An answer that is still wrong ends
  // in the vendor's overflow error, which compacts and retries.
  const measured = core.conversation.measured;
  if (measured && measured.tokens + measured.charsSince / ADDED_CHARS_PER_TOKEN <= budget) return { overBudget: false };
  const tokens = await countTokens(core, resolved, core.request(resolved), signal);
  // Over the budget, but with nothing a compaction could make smaller, the turn goes on: until
  // 2026-12-06 it compacted anyway, summarizing nothing and cutting nothing (the turns it would
  // summarize were the ones it keeps: after a prompt that was itself too large, every next prompt
  // did so), and told the client it had compacted. A request that does not fit ends in the vendor's
  // overflow, whose compaction summarizes every completed turn, the too-large one included.
  return { overBudget: tokens > budget && compactionCanReduce(core, resolved, 'preflight') };
}

/**
 * The seq through which a compaction for `reason` would summarize, when that takes in turns the
 * current summary does not cover: it keeps the last `keepTurns` completed turns, or none after a
 * provider overflow (keeping them evidently did not fit).
 */
function summaryCut(core: EngineCore, reason: 'preflight' | 'overflow' | 'manual'): number | undefined {
  const conv = core.conversation;
  const ends = conv.turnEnds;
  const keep = reason === 'overflow' ? 0 : core.deps.limits.keepTurns;
  const cut = ends.length > keep ? ends[ends.length - keep - 1]! : undefined;
  return cut !== undefined && cut > (conv.summary?.throughSeq ?? 0) ? cut : undefined;
}

/** Whether a compaction for `reason` would make the request smaller: turns to summarize, or tool outputs to cut. */
export function compactionCanReduce(core: EngineCore, resolved: ResolvedModel, reason: 'preflight' | 'overflow' | 'manual'): boolean {
  return summaryCut(core, reason) !== undefined || core.conversation.hasToolOutputOver(toolOutputLimitFor(core.deps.limits, resolved.capabilities));
}

/**
 * Ends the compaction left open, if one is, failed with `errorCode`: compact() leaves it open when it
 * is aborted or fails, and its end is said by whoever knows why (a turn's end, a cancelled
 * `/compact`, crash repair). `turnId`, the turn it is ended with: by default its own (none for
 * `/compact`'s). `mark`: crash repair's (core/interruption.ts). Returns whether there was one.
 */
export function failOpenCompaction(core: EngineCore, errorCode: string, turnId = core.conversation.openCompaction?.turnId, mark: InterruptionMark = {}): boolean {
  const compaction = core.conversation.openCompaction;
  if (!compaction) return false;
  core.emit({ sessionId: core.sessionId, ...(turnId ? { turnId } : {}), type: 'compaction_completed', compactionId: compaction.compactionId, status: 'failed', errorCode, ...mark });
  return true;
}

/** The last user message of every summarization request. */
export const SUMMARY_INSTRUCTION =
  'Summarize the conversation above for your own later use: the goals, the decisions taken, the files ' +
  'touched and their state, and what remains to do. Be concise and factual.';
const SUMMARY_SYSTEM = 'You write summaries of coding sessions.';

export async function compact(core: EngineCore, turnId: string | undefined, reason: 'preflight' | 'overflow' | 'manual', signal: AbortSignal): Promise<void> {
  const resolved = core.model();
  const conv = core.conversation;
  const compactionId = newLocalId('cmp');
  const base = { sessionId: core.sessionId, compactionId, ...(turnId ? { turnId } : {}) };
  if (reason === 'overflow' && turnId) core.overflowCompactedTurn = turnId;
  core.emit({ type: 'compaction_started', ...base, reason, tokensBefore: estimateTokens(core.request(resolved)) });

  const cut = summaryCut(core, reason);
  const toolOutputLimit = toolOutputLimitFor(core.deps.limits, resolved.capabilities);
  let summary: string | undefined;
  try {
    if (cut !== undefined) summary = await summarize(core, turnId, resolved, cut, toolOutputLimit, signal);
  } catch (err) {
    if (signal.aborted) throw new StepError('request_cancelled', 'the turn was cancelled');
    const failure = classify(err);
    core.emit({ type: 'compaction_completed', ...base, status: 'failed', errorCode: failure.code });
    throw failure;
  }
  if (signal.aborted) throw new StepError('request_cancelled', 'the turn was cancelled');
  core.emit({ type: 'compaction_completed', ...base, status: 'completed', ...(summary !== undefined ? { summary, throughSeq: cut } : {}), toolOutputLimit });
}

/**
 * Asks the model for a summary of everything through `cut` (the previous summary included), within
 * SUMMARY_INPUT_SHARE of the window; on a context overflow, once more within half of that. If the
 * vendor still refuses, an outline built without the model takes the summary's place, so that the
 * session can go on rather than fail every later turn at the same compaction.
 */
async function summarize(core: EngineCore, turnId: string | undefined, resolved: ResolvedModel, cut: number, toolOutputLimit: number, signal: AbortSignal): Promise<string> {
  const conv = core.conversation;
  const history = conv.messages({ throughSeq: cut, withSummary: false });
  const budget = Math.floor(resolved.capabilities.contextWindow * SUMMARY_INPUT_SHARE);
  for (const room of [budget, Math.floor(budget / 2)]) {
    const request: ModelRequest = {
      model: resolved.model,
      system: SUMMARY_SYSTEM,
      messages: fitForSummary(history, conv.summary?.text, room, toolOutputLimit),
      tools: [],
      maxOutputTokens: Math.min(2_048, resolved.capabilities.maxOutputTokens),
      purpose: 'compaction',
    };
    try {
      let text = '';
      for await (const ev of resolved.provider.stream(request, signal)) {
        if (ev.type === 'text_delta') text += ev.text;
        // A summary waits out a rate limit as a turn's step does, and says so the same way.
        else if (ev.type === 'retry') emitModelRetry(core, turnId, resolved.provider.id, ev);
      }
      if (!text.trim()) throw new StepError('context_overflow', 'compaction produced an empty summary');
      return text;
    } catch (err) {
      if (signal.aborted || classify(err).code !== 'context_overflow') throw err;
      core.deps.logger.warn('the summarization request did not fit', { budget: room, tokens: estimateTokens(request), error: String(err) });
    }
  }
  return outline(history, conv.summary?.text, Math.floor(budget / 2) * CHARS_PER_TOKEN);
}

/**
 * The summarization input within `budget` tokens (offline estimate): text-only messages without
 * reasoning, every text, tool output and tool-call input cut to a common length that halves until
 * the request fits, then the oldest messages left out behind a marker. The previous summary is kept
 * first, since it is the only record of what came before it.
 */
export function fitForSummary(history: ModelMessage[], previous: string | undefined, budget: number, toolOutputLimit: number): ModelMessage[] {
  const instruction: ModelMessage = { role: 'user', content: [{ type: 'text', text: SUMMARY_INSTRUCTION }] };
  const tokens = (messages: ModelMessage[]) => estimateTokens({ system: SUMMARY_SYSTEM, messages, tools: [] });
  const build = (limit: number, from: number): ModelMessage[] => {
    const head: ContentBlock[] = [];
    if (previous !== undefined) head.push({ type: 'text', text: `[Summary of the earlier conversation]\n${cutText(previous, limit)}` });
    if (from > 0) head.push({ type: 'text', text: `[${from} earlier messages were left out here to fit the context window]` });
    const body = history.slice(from).map((m) => plain(m, limit, toolOutputLimit));
    return mergeUsers([...(head.length ? [{ role: 'user' as const, content: head }] : []), ...body, instruction]);
  };
  let limit = Math.max(MIN_CUT_CHARS, Math.floor((budget * CHARS_PER_TOKEN) / 4));
  let messages = build(limit, 0);
  while (tokens(messages) > budget && limit > MIN_CUT_CHARS) {
    limit = Math.max(MIN_CUT_CHARS, Math.floor(limit / 2));
    messages = build(limit, 0);
  }
  if (tokens(messages) <= budget) return messages;
  // Still too big: leave out the oldest messages. Sizes are summed once (a tail's size is close to
  // the sum of its messages), then confirmed on the real request.
  const sizes = history.map((m) => Math.ceil(jsonLength(plain(m, limit, toolOutputLimit)) / CHARS_PER_TOKEN));
  let over = tokens(messages) - budget;
  let from = 0;
  while (from < history.length && over > 0) over -= sizes[from++]!;
  for (;;) {
    // A tail never starts with tool results: their calls would be missing.
    while (from < history.length && history[from]!.role === 'tool') from++;
    messages = build(limit, from);
    if (from >= history.length || tokens(messages) <= budget) return messages;
    from++;
  }
}

/** A message as the summarizer sees it: text only, no reasoning, every long text cut to `limit`. */
function plain(message: ModelMessage, limit: number, toolOutputLimit: number): ModelMessage {
  switch (message.role) {
    case 'user':
      return { role: 'user', content: message.content.map((b) => ({ type: 'text' as const, text: cutText(blockText(b), limit) })) };
    case 'assistant':
      return {
        role: 'assistant',
        text: cutText(message.text, limit),
        toolCalls: message.toolCalls.map((c) => {
          const { head, length } = jsonHead(c.input, limit);
          return length <= limit ? c : { ...c, input: { cut_by_compaction: cut(head, length) } };
        }),
      };
    case 'tool':
      return { role: 'tool', results: message.results.map((r) => ({ ...r, output: cutText(r.output, Math.min(limit, toolOutputLimit)) })) };
  }
}

function blockText(block: ContentBlock): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'image':
      return `[image ${block.mimeType}]`;
    case 'resource_link':
      return `[${block.name}: ${block.uri}]`;
    case 'resource':
      return 'text' in block.resource ? `[${block.resource.uri}]\n${block.resource.text}` : `[binary resource ${block.resource.uri}]`;
  }
}

function cutText(text: string, limit: number): string {
  return text.length <= limit ? text : cut(text.slice(0, limit), text.length);
}

/**
 * A value's JSON as {@link cutText} cuts text, made no longer than that: a tool call's input may have
 * JSON longer than a string can be (90 million control characters are 540 million characters of it),
 * and making it whole threw a RangeError, and the compaction failed with it (until 2026-12-07).
 */
function cutJson(value: unknown, limit: number): string {
  const { head, length } = jsonHead(value, limit);
  return length <= limit ? head : cut(head, length);
}

/** `head`, the start of a text `length` long, as the text cut there and marked. */
function cut(head: string, length: number): string {
  // Never split a surrogate pair: a lone half is not valid text for any vendor.
  const end = /[\uD800-\uDBFF]/.test(head.at(-1)!) ? head.length - 1 : head.length;
  return `${head.slice(0, end)}\n[… ${length - end} characters removed by compaction]`;
}

function mergeUsers(messages: ModelMessage[]): ModelMessage[] {
  const out: ModelMessage[] = [];
  for (const m of messages) {
    const prev = out.at(-1);
    if (prev?.role === 'user' && m.role === 'user') out[out.length - 1] = { role: 'user', content: [...prev.content, ...m.content] };
    else out.push(m);
  }
  return out;
}

/**
 * The fallback summary: the person's requests and the tools used, newest kept first when it must
 * be shortened. Marked as an outline so that neither the model nor the person mistakes it for one.
 */
export function outline(history: ModelMessage[], previous: string | undefined, maxChars: number): string {
  const lines: string[] = [];
  for (const m of history) {
    if (m.role === 'user') lines.push(`- The user wrote: ${cutText(m.content.map(blockText).join(' ').replace(/\s+/g, ' '), 300)}`);
    else if (m.role === 'assistant' && m.toolCalls.length) lines.push(`- Tools used: ${m.toolCalls.map((c) => `${c.name} ${cutJson(c.input, 120)}`).join('; ')}`);
  }
  const header = '[No model summary could be made within the context window; this is an outline of the earlier conversation.]';
  const prior = previous !== undefined ? [`Earlier summary: ${cutText(previous, Math.floor(maxChars / 3))}`] : [];
  let size = header.length + prior.join('').length;
  const kept: string[] = [];
  for (let i = lines.length - 1; i >= 0 && size + lines[i]!.length < maxChars; i--) {
    kept.unshift(lines[i]!);
    size += lines[i]!.length + 1;
  }
  return [header, ...prior, ...(kept.length < lines.length ? [`- (${lines.length - kept.length} earlier entries left out)`] : []), ...kept].join('\n');
}
