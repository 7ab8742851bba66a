/**
 * OpenAI Responses streaming events → ProviderEvents.
 * https://platform.openai.com/docs/api-reference/responses-streaming
 */
import type OpenAI from 'openai';
import { parseToolArgs, ProviderError, type ProviderEvent, type ProviderStopReason } from '../../core/provider.js';
import { classify, delayInMessage, openAIFailure } from './openai.errors.js';
import { windowFullError, type LengthLimits } from './window-full.js';

type StreamEvent = OpenAI.Responses.ResponseStreamEvent;

/**
 * Maps one response stream. Throws a `network` ProviderError if it ends without a terminal event,
 * and a `context_overflow` one at its end (after the usage) if the reply filled the window: an
 * `incomplete_details.reason` of `max_output_tokens` that `limits` (what the request asked for and
 * the model's window) show was the window's, not the output limit's (windowFullError). Without
 * `limits` it is always the output limit.
 */
export async function* mapResponsesStream(events: AsyncIterable<StreamEvent>, signal: AbortSignal, limits?: LengthLimits): AsyncGenerator<ProviderEvent> {
  // Argument deltas name the output item; troupe names calls by call_id, which results refer to.
  const callIds = new Map<string, string>();
  // Arguments so far of each call that has started and not yet ended, by call_id, in start order.
  const args = new Map<string, string>();
  let sawCall = false;
  // How much of the reply has been said so far: where a reasoning item goes back (ReasoningPart.at).
  let textChars = 0;
  let callsEnded = 0;
  let refused = false;
  for await (const event of events) {
    switch (event.type) {
      case 'response.output_item.added':
        if (event.item.type === 'function_call') {
          sawCall = true;
          callIds.set(event.item.id ?? event.item.call_id, event.item.call_id);
          args.set(event.item.call_id, '');
          yield { type: 'tool_call_start', id: event.item.call_id, name: event.item.name };
        }
        break;
      case 'response.function_call_arguments.delta': {
        const id = callIds.get(event.item_id);
        if (id !== undefined && event.delta) {
          args.set(id, (args.get(id) ?? '') + event.delta);
          yield { type: 'tool_call_delta', id, argsDelta: event.delta };
        }
        break;
      }
      case 'response.output_item.done': {
        const item = event.item;
        if (item.type === 'function_call') {
          yield { type: 'tool_call_end', id: item.call_id, ...parseToolArgs(item.arguments || (args.get(item.call_id) ?? '')) };
          args.delete(item.call_id);
          callsEnded++;
        } else if (item.type === 'reasoning' && item.encrypted_content) {
          const text = item.summary.map((s) => s.text).join('\n\n');
          const at = { text: textChars, toolCalls: callsEnded };
          yield { type: 'reasoning_part', part: { provider: 'openai', kind: 'reasoning', id: item.id, data: item.encrypted_content, ...(text ? { text } : {}), at } };
        }
        break;
      }
      case 'response.reasoning_summary_part.added':
        // Separate summary paragraphs the way the final item joins them.
        if (event.summary_index > 0) yield { type: 'thinking_delta', text: '\n\n' };
        break;
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        if (event.delta) yield { type: 'thinking_delta', text: event.delta };
        break;
      case 'response.output_text.delta':
      case 'response.refusal.delta':
        if (event.type === 'response.refusal.delta') refused = true;
        if (event.delta) {
          textChars += event.delta.length;
          yield { type: 'text_delta', text: event.delta };
        }
        break;
      case 'response.completed':
      case 'response.incomplete': {
        const response = event.response;
        // A call cut by max_output_tokens gets no output_item.done. It ends here with what arrived
        // of its arguments, as the Anthropic and Chat Completions adapters end theirs, rather than
        // vanishing: the caller sees the call and that its arguments were cut.
        for (const [id, partial] of args) yield { type: 'tool_call_end', id, ...parseToolArgs(partial) };
        args.clear();
        if (response.usage) yield usageOf(response.usage);
        let reason: ProviderStopReason = refused ? 'refusal' : sawCall ? 'tool_use' : 'end_turn';
        const why = response.incomplete_details?.reason;
        const used: Partial<OpenAI.Responses.ResponseUsage> = response.usage ?? {};
        // The same overflow as Anthropic's model_context_window_exceeded, found at the reply's end:
        // what streamed and its usage stay (src/actors/model-step.effect.ts), and none of its calls runs.
        const overflow = why === 'max_output_tokens' ? windowFullError('incomplete_details.reason max_output_tokens', used.input_tokens, used.output_tokens, limits) : undefined;
        if (overflow) throw overflow;
        if (why === 'max_output_tokens') reason = 'max_tokens';
        else if (why === 'content_filter') reason = 'refusal';
        yield { type: 'stop', reason };
        return;
      }
      case 'response.failed': {
        const error = event.response.error;
        const message = error?.message ?? 'the response failed';
        const kind = classify(undefined, error?.code ?? undefined, undefined, message);
        // A stream has no retry-after header: the wait is in the words, as for a 429 without one.
        // Until 2026-12-06 it was not read here, and a rate limit that failed the response was
        // retried at once and told to the client without its delay.
        throw openAIFailure(kind, message, kind === 'rate_limited' ? { retryAfterMs: delayInMessage(message) } : {});
      }
      default:
        break;
    }
  }
  // The SDK ends iteration quietly when its request is aborted; anything else is a truncated stream.
  if (signal.aborted) throw new ProviderError('aborted', 'the request was cancelled');
  throw new ProviderError('network', 'the response stream ended before response.completed');
}

/** Missing counts (a Responses-compatible server that sends only some) are 0, not NaN as until 2026-12-06. */
function usageOf(usage: Partial<OpenAI.Responses.ResponseUsage>): ProviderEvent {
  // OpenAI counts cached tokens inside input_tokens; troupe reports them apart.
  const cached = usage.input_tokens_details?.cached_tokens ?? 0;
  const written = usage.input_tokens_details?.cache_write_tokens ?? 0;
  return {
    type: 'usage',
    inputTokens: Math.max(0, (usage.input_tokens ?? 0) - cached - written),
    outputTokens: usage.output_tokens ?? 0,
    cacheReadTokens: cached,
    ...(written > 0 ? { cacheWriteTokens: written } : {}),
  };
}
