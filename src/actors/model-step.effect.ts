/**
 * One model call of a turn: stream the provider, emit chunks as they arrive, record usage, and
 * announce the tool calls the model asked for. Nothing is emitted once `signal` has aborted, so a
 * cancelled turn keeps exactly the events emitted before the cancel.
 */
import { costOf, estimateTokens, type ModelCapabilities, type ProviderEvent, type ProviderStopReason } from '../core/provider.js';
import { newLocalId } from '../core/ids.js';
import { TroupeError } from '../core/errors.js';
import type { ToolCallRequest } from '../core/ports.js';
import type { StepOutcome } from '../machines/turn.machine.js';
import type { EngineCore } from './engine-core.js';
import { classify, contextOverflowError, StepError } from './step-error.js';
import { compactionCanReduce } from './compaction.effect.js';
import { emitModelRetry } from './model-retry.js';
import { headOf } from '../core/text-cut.js';
import { oneLineClipped } from '../core/one-line.js';

/** What one model call produced, filled in as its stream is read. */
interface StepReading {
  calls: ToolCallRequest[];
  /** Calls whose arguments were not a JSON object: they fail with the raw text for the model to see. */
  invalid: Map<string, string>;
  stop: ProviderStopReason;
  usage?: StepUsage;
  /** Whether the model's reply (text or thought) had begun: a failure after it cut the reply. */
  replied: boolean;
  /** Set by the signal's abort event. */
  aborted: boolean;
}

type StepUsage = { inputTokens: number; outputTokens: number; cacheReadTokens?: number; cacheWriteTokens?: number };

export async function modelStep(core: EngineCore, turnId: string, signal: AbortSignal): Promise<StepOutcome> {
  const resolved = core.model();
  const request = core.request(resolved);
  const reading: StepReading = { calls: [], invalid: new Map(), stop: 'end_turn', replied: false, aborted: signal.aborted };
  // The signal is touched here, once per step, and never in the loop that reads the stream: every
  // AbortSignal has a V8 map of its own, so optimized code that touched one would be thrown away by
  // the next turn's signal and compiled again (tens of ms of CPU per turn).
  const onAbort = () => void (reading.aborted = true);
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    await readStream(core, turnId, resolved.provider.id, resolved.provider.stream(request, signal), reading);
  } catch (err) {
    if (signal.aborted) throw new StepError('request_cancelled', 'the turn was cancelled');
    const failure = classify(err);
    if (failure.code !== 'context_overflow') throw failure;
    const { conversation } = core;
    // The same test as preflight's: until 2026-12-06 an overflow that no compaction could help (a
    // session's first prompt too large by itself, or every older turn summarized already and no long
    // tool output left to cut) compacted nothing and sent the identical request again, a second
    // refused vendor round trip before the same error.
    const compactable = compactionCanReduce(core, resolved, 'overflow');
    // A reply that filled the window (Anthropic's model_context_window_exceeded) was billed: its
    // usage is kept, as any step's is. What it streamed stays too: the client has shown it, and the
    // retried step goes on from it (Conversation, on the overflow compaction's end).
    if (reading.usage) emitUsage(core, turnId, resolved.capabilities, reading.usage);
    throw contextOverflowError(
      failure.vendorMessage ?? failure.message,
      { model: conversation.model, contextWindow: resolved.capabilities.contextWindow, requestTokens: estimateTokens(request), replyCut: reading.replied },
      compactable,
      core.overflowCompactedTurn === turnId,
    );
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
  if (signal.aborted) throw new StepError('request_cancelled', 'the turn was cancelled');
  const { calls, invalid, usage, stop } = reading;
  if (usage) emitUsage(core, turnId, resolved.capabilities, usage);
  announceToolCalls(core, turnId, calls, invalid, cutCallOf(stop, calls, invalid));
  return { stop, toolCalls: calls };
}

function emitUsage(core: EngineCore, turnId: string, capabilities: ModelCapabilities, usage: StepUsage): void {
  const cost = costOf(usage, capabilities.pricing);
  core.emit({
    type: 'usage',
    sessionId: core.sessionId,
    turnId,
    used: usage.inputTokens + usage.outputTokens + (usage.cacheReadTokens ?? 0) + (usage.cacheWriteTokens ?? 0),
    size: capabilities.contextWindow,
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    ...(usage.cacheReadTokens !== undefined ? { cacheReadTokens: usage.cacheReadTokens } : {}),
    ...(usage.cacheWriteTokens !== undefined ? { cacheWriteTokens: usage.cacheWriteTokens } : {}),
    ...(cost ? { cost } : {}),
  });
}

/** Emits the deltas of a provider stream as they arrive (the hot loop of a streamed reply). */
async function readStream(core: EngineCore, turnId: string, provider: string, stream: AsyncIterable<ProviderEvent>, reading: StepReading): Promise<void> {
  const sessionId = core.sessionId;
  const messageId = newLocalId('msg');
  const thoughtId = newLocalId('thought');
  // Names arrive on tool_call_start and are needed at tool_call_end, first in first out per vendor
  // id: a stream may start every call before it ends any (Chat Completions), and a server that
  // repeats an id within one response must not have the first call run under the second's name.
  const names = new Map<string, string[]>();
  // A vendor's call id the session already has is made unique (some servers number the calls of
  // each response from 0): ACP and the model's history need every call's id once.
  const renamed = new Map<string, string>();
  for await (const ev of stream) {
    if (reading.aborted) break;
    switch (ev.type) {
      case 'text_delta':
        if (ev.text) {
          core.emit({ type: 'agent_message_chunk', sessionId, turnId, messageId, text: ev.text });
          reading.replied = true;
        }
        break;
      case 'thinking_delta':
        if (ev.text) {
          core.emit({ type: 'agent_thought_chunk', sessionId, turnId, messageId: thoughtId, text: ev.text });
          reading.replied = true;
        }
        break;
      case 'tool_call_end': {
        const taken = core.conversation.hasToolCall(ev.id) || reading.calls.some((c) => c.id === ev.id);
        const id = taken ? newLocalId(ev.id) : ev.id;
        if (taken) renamed.set(ev.id, id);
        reading.calls.push({ id, name: names.get(ev.id)?.shift() ?? 'unknown', input: ev.input });
        if (ev.invalidArgs !== undefined) reading.invalid.set(id, ev.invalidArgs);
        break;
      }
      case 'reasoning_part': {
        // A signature names the call it belongs to (Gemini), by the id the call has now.
        const callId = ev.part.id === undefined ? undefined : renamed.get(ev.part.id);
        core.emit({ type: 'reasoning_part', sessionId, turnId, part: callId ? { ...ev.part, id: callId } : ev.part });
        break;
      }
      case 'tool_call_start': {
        const queued = names.get(ev.id);
        if (queued) queued.push(ev.name);
        else names.set(ev.id, [ev.name]);
        break;
      }
      case 'usage':
        reading.usage = ev;
        break;
      case 'stop':
        reading.stop = ev.reason;
        break;
      case 'retry':
        emitModelRetry(core, turnId, provider, ev);
        break;
      default:
        break;
    }
  }
}

/**
 * The call a reply cut at the output token limit (`max_tokens`) was writing: its last, when its
 * arguments are not whole (a JSON text cut short, or none yet, which parses as `{}`). Run, it would
 * fail the tool's schema with a message that hides why, or act on a part of what the model meant;
 * it fails saying why instead, so that the model can send it again in smaller pieces.
 */
function cutCallOf(stop: ProviderStopReason, calls: ToolCallRequest[], invalid: Map<string, string>): string | undefined {
  const last = calls.at(-1);
  if (stop !== 'max_tokens' || !last) return undefined;
  return invalid.has(last.id) || Object.keys(last.input).length === 0 ? last.id : undefined;
}

/** Every call the model asked for is shown at once (pending), before any of them runs. */
function announceToolCalls(core: EngineCore, turnId: string, calls: ToolCallRequest[], invalid: Map<string, string>, cutId: string | undefined): void {
  core.descriptions.clear();
  for (const call of calls) {
    let description;
    try {
      const raw = invalid.get(call.id);
      if (call.id === cutId) {
        const got = raw === undefined ? 'no arguments had arrived' : `what had arrived: ${headOf(raw, 200)}`;
        throw new TroupeError('invalid_params', `not run: the reply reached the output token limit (max_tokens) while this call was being written, so its arguments are incomplete (${got}). Send it again smaller: split large content across several calls.`);
      }
      if (raw !== undefined) throw new TroupeError('invalid_params', `the arguments are not a JSON object: ${headOf(raw, 500)}`);
      description = core.deps.tools.describe(call);
      core.descriptions.set(call.id, description);
    } catch (err) {
      core.descriptions.set(call.id, err instanceof Error ? err : new Error(String(err)));
    }
    core.emitToolCall({
      type: 'tool_call_started',
      sessionId: core.sessionId,
      turnId,
      toolCallId: call.id,
      name: call.name,
      kind: description?.kind ?? 'other',
      // Without a description (an unknown tool, input that does not fit), the name is the model's
      // text: one printable line, as a title is (core/one-line.ts).
      title: description?.title ?? oneLineClipped(call.name, 61),
      status: 'pending',
      input: call.input,
      locations: description?.locations ?? [],
    });
  }
}
