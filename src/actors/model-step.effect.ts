/**
 * One model call of a turn: stream the provider, emit chunks as they arrive, record usage, and
 * announce the tool calls the model asked for. Nothing is emitted once `signal` has aborted, so a
 * cancelled turn keeps exactly the events emitted before the cancel.
 */
import { costOf, type ProviderStopReason } from '../core/provider.js';
import { newLocalId } from '../core/ids.js';
import { TroupeError } from '../core/errors.js';
import type { ToolCallRequest } from '../core/ports.js';
import type { StepOutcome } from '../machines/turn.machine.js';
import type { EngineCore } from './engine-core.js';
import { classify, StepError } from './step-error.js';

export async function modelStep(core: EngineCore, turnId: string, signal: AbortSignal): Promise<StepOutcome> {
  const resolved = core.model();
  const request = core.request(resolved);
  const sessionId = core.sessionId;
  const messageId = newLocalId('msg');
  const thoughtId = newLocalId('thought');
  const calls: ToolCallRequest[] = [];
  // Names arrive on tool_call_start and are needed at tool_call_end.
  const names = new Map<string, string>();
  // Calls whose arguments were not a JSON object: they fail with the raw text for the model to see.
  const invalid = new Map<string, string>();
  let stop: ProviderStopReason = 'end_turn';
  let usage: { inputTokens: number; outputTokens: number; cacheReadTokens?: number; cacheWriteTokens?: number } | undefined;

  try {
    for await (const ev of resolved.provider.stream(request, signal)) {
      if (signal.aborted) break;
      switch (ev.type) {
        case 'text_delta':
          if (ev.text) core.emit({ type: 'agent_message_chunk', sessionId, turnId, messageId, text: ev.text });
          break;
        case 'thinking_delta':
          if (ev.text) core.emit({ type: 'agent_thought_chunk', sessionId, turnId, messageId: thoughtId, text: ev.text });
          break;
        case 'tool_call_end':
          calls.push({ id: ev.id, name: names.get(ev.id) ?? 'unknown', input: ev.input });
          if (ev.invalidArgs !== undefined) invalid.set(ev.id, ev.invalidArgs);
          break;
        case 'reasoning_part':
          core.emit({ type: 'reasoning_part', sessionId, turnId, part: ev.part });
          break;
        case 'tool_call_start':
          names.set(ev.id, ev.name);
          break;
        case 'usage':
          usage = ev;
          break;
        case 'stop':
          stop = ev.reason;
          break;
        default:
          break;
      }
    }
  } catch (err) {
    if (signal.aborted) throw new StepError('request_cancelled', 'the turn was cancelled');
    throw classify(err);
  }
  if (signal.aborted) throw new StepError('request_cancelled', 'the turn was cancelled');

  if (usage) {
    const cost = costOf(usage, resolved.capabilities.pricing);
    core.emit({
      type: 'usage',
      sessionId,
      turnId,
      used: usage.inputTokens + usage.outputTokens + (usage.cacheReadTokens ?? 0) + (usage.cacheWriteTokens ?? 0),
      size: resolved.capabilities.contextWindow,
      inputTokens: usage.inputTokens,
      outputTokens: usage.outputTokens,
      ...(usage.cacheReadTokens !== undefined ? { cacheReadTokens: usage.cacheReadTokens } : {}),
      ...(usage.cacheWriteTokens !== undefined ? { cacheWriteTokens: usage.cacheWriteTokens } : {}),
      ...(cost ? { cost } : {}),
    });
  }
  announceToolCalls(core, turnId, calls, invalid);
  return { stop, toolCalls: calls };
}

/** Every call the model asked for is shown at once (pending), before any of them runs. */
function announceToolCalls(core: EngineCore, turnId: string, calls: ToolCallRequest[], invalid: Map<string, string>): void {
  core.descriptions.clear();
  for (const call of calls) {
    let description;
    try {
      const raw = invalid.get(call.id);
      if (raw !== undefined) throw new TroupeError('invalid_params', `the arguments are not a JSON object: ${raw.slice(0, 500)}`);
      description = core.deps.tools.describe(call);
      core.descriptions.set(call.id, description);
    } catch (err) {
      core.descriptions.set(call.id, err instanceof Error ? err : new Error(String(err)));
    }
    core.emit({
      type: 'tool_call_started',
      sessionId: core.sessionId,
      turnId,
      toolCallId: call.id,
      name: call.name,
      kind: description?.kind ?? 'other',
      title: description?.title ?? call.name,
      status: 'pending',
      input: call.input,
      locations: description?.locations ?? [],
    });
  }
}
