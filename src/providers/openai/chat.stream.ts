/**
 * Chat Completions chunks → ProviderEvents. Tool calls arrive as deltas keyed by `index`; the id and
 * name come in the first delta of each call. The usage chunk (no choices) follows the finish_reason.
 * https://platform.openai.com/docs/api-reference/chat-streaming
 */
import type OpenAI from 'openai';
import { newLocalId } from '../../core/ids.js';
import { parseToolArgs, ProviderError, type ProviderEvent, type ProviderStopReason } from '../../core/provider.js';
import { windowFullError, type LengthLimits } from './window-full.js';

type Chunk = OpenAI.Chat.Completions.ChatCompletionChunk;
/** `named`: the id is the server's (false when the server sent none and troupe made one up). */
type OpenCall = { id: string; named: boolean; name: string; args: string; started: boolean; index: number; seq: number };

const FINISH: Record<string, ProviderStopReason> = { stop: 'end_turn', tool_calls: 'tool_use', function_call: 'tool_use', length: 'max_tokens', content_filter: 'refusal' };
/**
 * Mistral's finish_reason for a reply that filled the model's context window (its API's
 * FinishReason: stop, length, model_length, error, tool_calls), where `length` is its output limit.
 * A context overflow found at the reply's end, as Anthropic's `model_context_window_exceeded`:
 * until 2026-12-07 it was a reason troupe did not know, read as `end_turn`, and the cut reply ended
 * the turn as if the model had finished.
 */
const WINDOW_FULL = 'model_length';
/**
 * Mistral's finish_reason for a generation that failed on its side (the same FinishReason enum).
 * A server failure inside a 200 stream, so `overloaded` as the other in-stream server errors are
 * (docs/providers.md): raised at once, the usage of its chunk not counted, so that the adapter retries
 * it when nothing of the reply had reached the caller, and otherwise the turn ends with it, what
 * streamed kept as the cut reply. Until 2026-12-07 it was read as `end_turn`: a failed generation
 * ended the turn as if the model had finished, with nothing or half a reply.
 */
const GENERATION_FAILED = 'error';

/** Announces a call whose name is whole, with the arguments that arrived before it, in order. */
function* start(call: OpenCall): Generator<ProviderEvent> {
  call.started = true;
  yield { type: 'tool_call_start', id: call.id, name: call.name };
  if (call.args) yield { type: 'tool_call_delta', id: call.id, argsDelta: call.args };
}

/**
 * `content` as a list of typed parts, as Mistral streams its Magistral reasoning models:
 * `[{type: "thinking", thinking: [{type: "text", text}]}]`, then `[{type: "text", text}]`. Until
 * 2026-12-06 the list itself went on as the text of a delta, and the reply's text was not text.
 */
function* contentParts(parts: unknown[]): Generator<ProviderEvent> {
  for (const part of parts) {
    if (typeof part !== 'object' || part === null) continue;
    const p = part as { type?: unknown; text?: unknown; thinking?: unknown };
    if (p.type === 'text' && typeof p.text === 'string' && p.text) yield { type: 'text_delta', text: p.text };
    else if (p.type === 'thinking') {
      const inner = typeof p.thinking === 'string' ? [{ type: 'text', text: p.thinking }] : Array.isArray(p.thinking) ? p.thinking : [];
      for (const t of inner as { type?: unknown; text?: unknown }[]) if (t?.type === 'text' && typeof t.text === 'string' && t.text) yield { type: 'thinking_delta', text: t.text };
    }
  }
}

/**
 * Maps one completion stream. Throws a `network` ProviderError if it ends without a finish_reason,
 * a `context_overflow` one at its end (after the usage) if the reply filled the window, and an
 * `overloaded` one at a finish_reason that says the generation failed. A finish_reason `length`
 * that `limits` (what the request asked for and the model's window) show was the window's, not the
 * output limit's, is that overflow too (windowFullError); without `limits` it is the output limit.
 * `provider`: the adapter's id, which a `reasoning_content` part names (see chat.request.ts).
 */
export async function* mapChatStream(chunks: AsyncIterable<Chunk>, signal: AbortSignal, provider = 'openai-compatible', limits?: LengthLimits): AsyncGenerator<ProviderEvent> {
  // The open call at each index, and every call of the message in the order it began.
  const calls = new Map<number, OpenCall>();
  const opened: OpenCall[] = [];
  let finish: ProviderStopReason | undefined;
  let usage: ProviderEvent | undefined;
  // OpenAI finishes a refusal with finish_reason "stop"; the refusal deltas are what say it refused.
  let refused = false;
  // The thoughts of a server that streams them as `reasoning_content` (DeepSeek, llama.cpp, vLLM),
  // which it may want back; undefined when the field never came.
  let reasoningContent: string | undefined;
  let windowFull = false;
  // The counts as the server sent them (cached tokens inside the prompt's), for a `length` stop.
  let counted: Partial<OpenAI.CompletionUsage> = {};
  for await (const chunk of chunks) {
    if (chunk.usage) {
      // Missing counts are 0, as for a missing usage: until 2026-12-06 a usage without
      // `prompt_tokens` (a server that sends only some counts) made the input count NaN.
      const u: Partial<OpenAI.CompletionUsage> = chunk.usage;
      counted = u;
      const cached = u.prompt_tokens_details?.cached_tokens ?? 0;
      usage = { type: 'usage', inputTokens: Math.max(0, (u.prompt_tokens ?? 0) - cached), outputTokens: u.completion_tokens ?? 0, cacheReadTokens: cached };
    }
    // Until 2026-12-06 a chunk was read as OpenAI documents it, and a server that bends the shape
    // threw a TypeError, the turn ending `provider_network` after its text had streamed: Groq and
    // Fireworks send usage-only chunks without `choices`, MiniMax `choices: null`, Azure
    // content-filter chunks and some servers' finish chunks a choice without `delta`.
    const choice = chunk.choices?.[0];
    if (!choice) continue;
    const delta = (choice.delta ?? {}) as Chunk['choices'][number]['delta'] & { reasoning_content?: string | null; reasoning?: string | null };
    // Reasoning servers (vLLM, llama.cpp, Ollama, LM Studio, DeepSeek) stream thoughts in one of these non-standard fields.
    const thought = delta.reasoning_content ?? delta.reasoning;
    if (thought) yield { type: 'thinking_delta', text: thought };
    if (typeof delta.reasoning_content === 'string') reasoningContent = (reasoningContent ?? '') + delta.reasoning_content;
    if (typeof delta.content === 'string' && delta.content) yield { type: 'text_delta', text: delta.content };
    else if (Array.isArray(delta.content)) yield* contentParts(delta.content as unknown[]);
    if (delta.refusal) {
      refused = true;
      yield { type: 'text_delta', text: delta.refusal };
    }
    for (const tc of delta.tool_calls ?? []) {
      let call = calls.get(tc.index);
      // Some servers (Ollama, SGLang, some gateways) give every call of a parallel batch index 0;
      // a different id at an index already taken is a new call, not more of the old one.
      if (!call || (tc.id && call.named && call.id !== tc.id)) {
        // A made-up id is random: one made of the index would repeat in the session's next response.
        call = { id: tc.id || newLocalId('call'), named: Boolean(tc.id), name: '', args: '', started: false, index: tc.index, seq: opened.length };
        calls.set(tc.index, call);
        opened.push(call);
      }
      // A name may arrive in pieces ("read_", "file"), and some servers (MiniMax on NVIDIA NIM)
      // send the whole name again in every delta: a piece that repeats the name is not appended.
      const name = tc.function?.name;
      if (name && name !== call.name) call.name += name;
      const piece = tc.function?.arguments;
      if (piece) {
        // The name is whole once the arguments begin: the call starts then (or at the finish).
        if (!call.started && call.name) yield* start(call);
        call.args += piece;
        if (call.started) yield { type: 'tool_call_delta', id: call.id, argsDelta: piece };
      }
    }
    if (choice.finish_reason) {
      // Not in the SDK's type: Mistral's own. No call that began is ended: the reply failed, as when
      // an error chunk cuts it.
      if ((choice.finish_reason as string) === GENERATION_FAILED) throw new ProviderError('overloaded', `the model's generation failed on the server (finish_reason ${GENERATION_FAILED})`);
      finish = FINISH[choice.finish_reason] ?? 'end_turn';
      // Not in the SDK's type: Mistral's own.
      windowFull = (choice.finish_reason as string) === WINDOW_FULL;
      for (const call of opened.sort((a, b) => a.index - b.index || a.seq - b.seq)) {
        if (!call.started && call.name) yield* start(call);
        if (call.started) yield { type: 'tool_call_end', id: call.id, ...parseToolArgs(call.args) };
      }
      if (opened.length > 0 && finish === 'end_turn') finish = 'tool_use';
      else if (refused && finish === 'end_turn') finish = 'refusal';
      calls.clear();
      opened.length = 0;
    }
  }
  if (signal.aborted) throw new ProviderError('aborted', 'the request was cancelled');
  if (finish === undefined) throw new ProviderError('network', 'the completion stream ended before a finish_reason');
  if (reasoningContent !== undefined) yield { type: 'reasoning_part', part: { provider, kind: 'reasoning_content', text: reasoningContent } };
  if (usage) yield usage;
  if (windowFull) throw new ProviderError('context_overflow', `the reply filled the model's context window (finish_reason ${WINDOW_FULL})`);
  // A server that stops a reply at its window sends `length` for it too (src/providers/openai/window-full.ts).
  const overflow = finish === 'max_tokens' ? windowFullError('finish_reason length', counted.prompt_tokens, counted.completion_tokens, limits) : undefined;
  if (overflow) throw overflow;
  yield { type: 'stop', reason: finish };
}
