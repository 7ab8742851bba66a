/**
 * The items a scripted reply is made of, and how they become a ProviderEvent stream. Shared by
 * `scripted/replay` (items read from a script file) and `scripted/demo` (items made by rules).
 * Format: spec/scripted-model.md.
 */
import { randomBytes } from 'node:crypto';
import { ProviderError, type ProviderErrorKind, type ProviderEvent, type ProviderStopReason } from '../../core/provider.js';
import { abortableDelay } from '../../core/model-stream.js';

export type ScriptItem =
  | { text: string }
  | { thought: string }
  | { tool_call: { name: string; input: Record<string, unknown>; id?: string } }
  | { usage: { input: number; output: number; cache_read?: number; cache_write?: number } }
  | { delay_ms: number }
  /** Never finishes on its own: only an abort ends it (for cancel tests). */
  | { hang: true }
  /** Allocates this many MiB of heap and keeps it for the life of the process (memory-budget tests). */
  | { hold_mb: number }
  | { context_overflow: string }
  | { error: { kind: ProviderErrorKind; message: string; retry_after_ms?: number } }
  | { stop: 'end_turn' | 'max_tokens' | 'refusal' };

// Memory a script asked to hold: never released, so that a heap budget is really exceeded.
const held: number[][] = [];

/** Splits text into word-sized chunks, so that demos stream like a real model. */
export function chunkWords(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [];
}

/**
 * Plays items as a stream. `chunkDelayMs` > 0 streams text word by word with that pause.
 * `estimate` supplies usage when the items carry none, so usage is always reported.
 */
export function playItems(
  items: ScriptItem[],
  signal: AbortSignal,
  opts: { chunkDelayMs?: number; estimate: () => { input: number; output: number } },
): AsyncGenerator<ProviderEvent> {
  // The generator reads a flag, never the signal itself (a plain function touches it, once): every
  // AbortSignal has a V8 map of its own, so an optimized loop that touched one would be thrown away
  // by the next request's signal. The listener goes away with the signal.
  const abort = { aborted: signal.aborted };
  signal.addEventListener('abort', () => void (abort.aborted = true), { once: true });
  return play(items, signal, abort, opts);
}

async function* play(
  items: ScriptItem[],
  signal: AbortSignal,
  abort: { aborted: boolean },
  opts: { chunkDelayMs?: number; estimate: () => { input: number; output: number } },
): AsyncGenerator<ProviderEvent> {
  let stop: ProviderStopReason | undefined;
  let sawTool = false;
  let sawUsage = false;
  for (const item of items) {
    if (abort.aborted) throw new ProviderError('aborted', 'the request was aborted');
    if ('text' in item || 'thought' in item) {
      const text = 'text' in item ? item.text : item.thought;
      const pieces = opts.chunkDelayMs ? chunkWords(text) : [text];
      for (const piece of pieces) {
        if (opts.chunkDelayMs) await abortableDelay(opts.chunkDelayMs, signal);
        yield 'text' in item ? { type: 'text_delta', text: piece } : { type: 'thinking_delta', text: piece };
      }
    } else if ('tool_call' in item) {
      sawTool = true;
      const id = item.tool_call.id ?? `call_${randomBytes(6).toString('hex')}`;
      const args = JSON.stringify(item.tool_call.input);
      yield { type: 'tool_call_start', id, name: item.tool_call.name };
      // Split the arguments in two, as vendors stream them in pieces.
      const half = Math.ceil(args.length / 2);
      yield { type: 'tool_call_delta', id, argsDelta: args.slice(0, half) };
      yield { type: 'tool_call_delta', id, argsDelta: args.slice(half) };
      yield { type: 'tool_call_end', id, input: item.tool_call.input };
    } else if ('usage' in item) {
      sawUsage = true;
      yield {
        type: 'usage',
        inputTokens: item.usage.input,
        outputTokens: item.usage.output,
        cacheReadTokens: item.usage.cache_read,
        cacheWriteTokens: item.usage.cache_write,
      };
    } else if ('delay_ms' in item) {
      await abortableDelay(item.delay_ms, signal);
    } else if ('hold_mb' in item) {
      // Arrays of numbers live on the V8 heap (a repeated string would be a cheap rope): ~1 MiB each.
      for (let i = 0; i < item.hold_mb; i++) held.push(new Array(128 * 1024).fill(i));
    } else if ('hang' in item) {
      await abortableDelay(2 ** 31 - 1, signal);
    } else if ('context_overflow' in item) {
      throw new ProviderError('context_overflow', item.context_overflow, { status: 400 });
    } else if ('error' in item) {
      throw new ProviderError(item.error.kind, item.error.message, { retryAfterMs: item.error.retry_after_ms });
    } else if ('stop' in item) {
      stop = item.stop;
    }
  }
  if (!sawUsage) {
    const u = opts.estimate();
    yield { type: 'usage', inputTokens: u.input, outputTokens: u.output };
  }
  yield { type: 'stop', reason: stop ?? (sawTool ? 'tool_use' : 'end_turn') };
}
