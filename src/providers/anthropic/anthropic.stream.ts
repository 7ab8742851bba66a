/**
 * Anthropic raw stream events → ProviderEvents.
 * Event sequence: https://docs.claude.com/en/docs/build-with-claude/streaming
 *   message_start, (content_block_start, content_block_delta*, content_block_stop)*, message_delta, message_stop
 */
import type Anthropic from '@anthropic-ai/sdk';
import { argsDeltas, parseToolArgs, ProviderError, type ProviderEvent, type ProviderStopReason } from '../../core/provider.js';

type RawEvent = Anthropic.Messages.RawMessageStreamEvent;

type OpenBlock =
  | { kind: 'text' }
  | { kind: 'thinking'; text: string; signature: string }
  | { kind: 'redacted'; data: string }
  /** `input`: the block's own, which Anthropic sends empty; a gateway may send it whole, with no deltas. */
  | { kind: 'tool'; id: string; json: string; input: unknown }
  | { kind: 'other' };

const STOP_REASONS: Record<string, ProviderStopReason> = {
  end_turn: 'end_turn',
  stop_sequence: 'end_turn',
  pause_turn: 'end_turn',
  tool_use: 'tool_use',
  max_tokens: 'max_tokens',
  refusal: 'refusal',
};

/**
 * The stop reason of a reply that filled the model's context window: recent Claude models accept a
 * request whose prompt plus max_tokens is over the window and stop when it fills, where older ones
 * refused it with a 400 ("input length and `max_tokens` exceed context limit"). It is that overflow,
 * found later: until 2026-12-07 it was read as `max_tokens`, and the turn ended as if the output
 * limit had been reached, with no compaction and nothing said of the window.
 */
const WINDOW_FULL = 'model_context_window_exceeded';

/**
 * Maps one response stream. Throws a `network` ProviderError if the stream ends before `message_stop`,
 * and a `context_overflow` one at `message_stop` (after the usage) if the reply filled the window.
 */
export async function* mapAnthropicStream(events: AsyncIterable<RawEvent>, signal: AbortSignal): AsyncGenerator<ProviderEvent> {
  const blocks = new Map<number, OpenBlock>();
  const usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
  let stop: ProviderStopReason = 'end_turn';
  let sawToolUse = false;
  let windowFull = false;
  for await (const event of events) {
    switch (event.type) {
      case 'message_start': {
        // Until 2026-12-06 usage was read as Anthropic always sends it, and a stream from an
        // Anthropic-compatible server (ANTHROPIC_BASE_URL: MiniMax, GLM and Kimi gateways) that
        // leaves it out of message_start or message_delta ended the turn `provider_network` with a
        // TypeError after its text had streamed. Missing counts are 0 (message_start) or unchanged.
        const u: Partial<Anthropic.Messages.Usage> = event.message?.usage ?? {};
        usage.inputTokens = u.input_tokens ?? 0;
        usage.outputTokens = u.output_tokens ?? 0;
        usage.cacheReadTokens = u.cache_read_input_tokens ?? 0;
        usage.cacheWriteTokens = u.cache_creation_input_tokens ?? 0;
        break;
      }
      case 'content_block_start': {
        const block = event.content_block;
        if (block.type === 'text') {
          blocks.set(event.index, { kind: 'text' });
          if (block.text) yield { type: 'text_delta', text: block.text };
        } else if (block.type === 'thinking') {
          blocks.set(event.index, { kind: 'thinking', text: block.thinking ?? '', signature: block.signature ?? '' });
          if (block.thinking) yield { type: 'thinking_delta', text: block.thinking };
        } else if (block.type === 'redacted_thinking') {
          blocks.set(event.index, { kind: 'redacted', data: block.data });
        } else if (block.type === 'tool_use') {
          sawToolUse = true;
          blocks.set(event.index, { kind: 'tool', id: block.id, json: '', input: block.input });
          yield { type: 'tool_call_start', id: block.id, name: block.name };
        } else {
          // Server tools (web search, code execution) run at Anthropic; troupe does not ask for them.
          blocks.set(event.index, { kind: 'other' });
        }
        break;
      }
      case 'content_block_delta': {
        const block = blocks.get(event.index);
        const delta = event.delta;
        if (delta.type === 'text_delta') yield { type: 'text_delta', text: delta.text };
        else if (delta.type === 'thinking_delta' && block?.kind === 'thinking') {
          block.text += delta.thinking;
          yield { type: 'thinking_delta', text: delta.thinking };
        } else if (delta.type === 'signature_delta' && block?.kind === 'thinking') block.signature += delta.signature;
        else if (delta.type === 'input_json_delta' && block?.kind === 'tool' && delta.partial_json) {
          block.json += delta.partial_json;
          yield { type: 'tool_call_delta', id: block.id, argsDelta: delta.partial_json };
        }
        break;
      }
      case 'content_block_stop': {
        const block = blocks.get(event.index);
        blocks.delete(event.index);
        if (block?.kind === 'thinking') {
          yield { type: 'reasoning_part', part: { provider: 'anthropic', kind: 'thinking', text: block.text, data: block.signature } };
        } else if (block?.kind === 'redacted') {
          yield { type: 'reasoning_part', part: { provider: 'anthropic', kind: 'redacted_thinking', data: block.data } };
        } else if (block?.kind === 'tool') {
          // Arguments given whole in content_block_start, as the SDK's own MessageStream reads them
          // too: until 2026-12-06 such a call ran with {}. Their JSON is given in pieces, never made
          // whole (until 2026-12-07 it was, and parsed again).
          if (block.json === '' && isFilledObject(block.input)) {
            for (const argsDelta of argsDeltas(block.input)) yield { type: 'tool_call_delta', id: block.id, argsDelta };
            yield { type: 'tool_call_end', id: block.id, input: block.input as Record<string, unknown> };
          } else yield { type: 'tool_call_end', id: block.id, ...parseToolArgs(block.json) };
        }
        break;
      }
      case 'message_delta': {
        const u: Partial<Anthropic.Messages.MessageDeltaUsage> = event.usage ?? {};
        usage.outputTokens = u.output_tokens ?? usage.outputTokens;
        // The delta's counts are cumulative and, when present, more accurate than message_start's.
        if (u.input_tokens != null) usage.inputTokens = u.input_tokens;
        if (u.cache_read_input_tokens != null) usage.cacheReadTokens = u.cache_read_input_tokens;
        if (u.cache_creation_input_tokens != null) usage.cacheWriteTokens = u.cache_creation_input_tokens;
        if (event.delta?.stop_reason) {
          windowFull = event.delta.stop_reason === WINDOW_FULL;
          stop = STOP_REASONS[event.delta.stop_reason] ?? 'end_turn';
        }
        break;
      }
      case 'message_stop':
        // The tokens were spent (and billed) whether or not the reply is of any use.
        yield { type: 'usage', ...usage };
        if (windowFull) throw new ProviderError('context_overflow', `the reply filled the model's context window (stop_reason ${WINDOW_FULL})`);
        yield { type: 'stop', reason: stop === 'end_turn' && sawToolUse ? 'tool_use' : stop };
        return;
    }
  }
  // The SDK ends iteration quietly when its request is aborted; anything else is a truncated stream.
  if (signal.aborted) throw new ProviderError('aborted', 'the request was cancelled');
  throw new ProviderError('network', 'the response stream ended before message_stop');
}

const isFilledObject = (v: unknown): boolean => typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length > 0;
