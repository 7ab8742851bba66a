/**
 * Gemini stream chunks → ProviderEvents. Each chunk is a GenerateContentResponse
 * (https://ai.google.dev/api/generate-content#v1beta.GenerateContentResponse): parts carry text,
 * `thought: true` summaries, whole `functionCall`s and `thoughtSignature`s; the last chunk carries
 * `finishReason` and `usageMetadata`.
 */
import { randomUUID } from 'node:crypto';
import type { GenerateContentResponse } from '@google/genai';
import { argsDeltas, ProviderError, type ProviderEvent, type ProviderStopReason } from '../../core/provider.js';
import { SYNTHETIC_ID } from './google.request.js';

const FINISH: Record<string, ProviderStopReason> = {
  STOP: 'end_turn',
  MAX_TOKENS: 'max_tokens',
  SAFETY: 'refusal',
  RECITATION: 'refusal',
  BLOCKLIST: 'refusal',
  PROHIBITED_CONTENT: 'refusal',
  SPII: 'refusal',
  IMAGE_SAFETY: 'refusal',
};

/**
 * Finishes where the model's output cannot be used (a function call Gemini could not parse, a call
 * to a tool it was not given…): no stop reason says that, and an empty `end_turn` would hide it.
 */
const UNUSABLE: Record<string, string> = {
  MALFORMED_FUNCTION_CALL: 'the model generated a function call that could not be parsed',
  UNEXPECTED_TOOL_CALL: 'the model called a tool it was not given',
  TOO_MANY_TOOL_CALLS: 'the model made too many tool calls in a row',
  MALFORMED_RESPONSE: 'the model generated a response that could not be parsed',
  // The request, not the reply: the same history is refused again on every later turn.
  MISSING_THOUGHT_SIGNATURE: 'Gemini refused the conversation: a function call in it lacks the thought signature Gemini requires',
};

/**
 * Finishes that are no ordinary end (not STOP, MAX_TOKENS nor a refusal) and that Gemini sends with
 * an empty reply: said, rather than an `end_turn` with nothing in it, the turn ending in silence
 * (until 2026-12-07). With some of the reply streamed, they end it as `end_turn`, as before.
 */
const EMPTY_BECAUSE: Record<string, string> = {
  LANGUAGE: 'the prompt or the reply is in a language the model does not support',
  OTHER: 'Gemini gives no reason',
  FINISH_REASON_UNSPECIFIED: 'Gemini gives no reason',
};

export async function* mapGoogleStream(chunks: AsyncIterable<GenerateContentResponse>, signal: AbortSignal): AsyncGenerator<ProviderEvent> {
  let finish: ProviderStopReason | undefined;
  let usage: ProviderEvent | undefined;
  let sawCall = false;
  // Whether any of the reply (text, thought or call) came: an unusual finish with none is said.
  let said = false;
  // Thought text since the last signed thought part: a signature signs the run of thought it closes
  // (on the thought's own part, or on an empty thought part after it).
  let thoughtRun = '';
  for await (const chunk of chunks) {
    if (chunk.usageMetadata) {
      const u = chunk.usageMetadata;
      // promptTokenCount includes cached tokens; thoughts are billed as output.
      const cached = u.cachedContentTokenCount ?? 0;
      usage = {
        type: 'usage',
        inputTokens: Math.max(0, (u.promptTokenCount ?? 0) - cached),
        outputTokens: (u.candidatesTokenCount ?? 0) + (u.thoughtsTokenCount ?? 0),
        cacheReadTokens: cached,
      };
    }
    if (chunk.promptFeedback?.blockReason) finish = 'refusal';
    const candidate = chunk.candidates?.[0];
    for (const part of candidate?.content?.parts ?? []) {
      if (part.functionCall) {
        sawCall = true;
        said = true;
        const id = part.functionCall.id || `${SYNTHETIC_ID}${randomUUID()}`;
        const input = part.functionCall.args ?? {};
        yield { type: 'tool_call_start', id, name: part.functionCall.name ?? '' };
        // Arguments come whole, as an object: their JSON is given in pieces, never made whole.
        for (const argsDelta of argsDeltas(input)) yield { type: 'tool_call_delta', id, argsDelta };
        yield { type: 'tool_call_end', id, input };
        if (part.thoughtSignature) yield { type: 'reasoning_part', part: { provider: 'google', kind: 'thought_signature', id, data: part.thoughtSignature } };
        continue;
      }
      if (part.text) {
        said = true;
        yield part.thought ? { type: 'thinking_delta', text: part.text } : { type: 'text_delta', text: part.text };
      }
      if (part.thought) {
        thoughtRun += part.text ?? '';
        if (part.thoughtSignature) {
          yield { type: 'reasoning_part', part: { provider: 'google', kind: 'thought', text: thoughtRun, data: part.thoughtSignature } };
          thoughtRun = '';
        }
      } else if (part.thoughtSignature) {
        yield { type: 'reasoning_part', part: { provider: 'google', kind: 'text_signature', data: part.thoughtSignature } };
      }
    }
    const unusable = candidate?.finishReason ? UNUSABLE[candidate.finishReason] : undefined;
    // (The SDK drops the candidate's finishMessage, so the reason is all there is to say.)
    if (unusable) throw new ProviderError('invalid_request', `${unusable} (finishReason ${candidate?.finishReason})`);
    if (candidate?.finishReason) {
      finish = FINISH[candidate.finishReason];
      if (finish === undefined && !said) {
        const why = EMPTY_BECAUSE[candidate.finishReason] ?? 'a finish troupe does not know';
        throw new ProviderError('invalid_request', `the model ended its reply with nothing in it (finishReason ${candidate.finishReason}: ${why})`);
      }
      finish ??= 'end_turn';
    }
  }
  if (signal.aborted) throw new ProviderError('aborted', 'the request was cancelled');
  if (finish === undefined) throw new ProviderError('network', 'the response stream ended before a finishReason');
  if (usage) yield usage;
  yield { type: 'stop', reason: finish === 'end_turn' && sawCall ? 'tool_use' : finish };
}
