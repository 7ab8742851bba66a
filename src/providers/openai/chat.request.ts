/**
 * ModelRequest → Chat Completions parameters, the dialect OpenAI-compatible servers (Ollama, vLLM,
 * llama.cpp, LM Studio) speak. https://platform.openai.com/docs/api-reference/chat/create
 */
import { createHash } from 'node:crypto';
import type OpenAI from 'openai';
import type { ModelCapabilities, ModelMessage, ModelRequest } from '../../core/provider.js';
import { COMPATIBLE_MEDIA, toolOutput, userPieces, type UserPiece } from './openai.content.js';

type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;

/**
 * `provider`: the adapter's id; only its own `reasoning_content` parts go back (see toChatMessages).
 * `baseURL`: the server's, which with the model tells whether tool call ids must be Mistral's.
 */
export function toChatBody(request: ModelRequest, caps: ModelCapabilities, provider = 'openai-compatible', baseURL?: string): OpenAI.Chat.Completions.ChatCompletionCreateParamsStreaming {
  const messages: ChatMessage[] = [];
  if (request.system) messages.push({ role: 'system', content: request.system });
  const ids = takesMistralIdsOnly(request.model, baseURL) ? mistralToolCallIds(request.messages) : undefined;
  messages.push(...toChatMessages(request.messages, caps.images, provider, ids));
  const body: OpenAI.Chat.Completions.ChatCompletionCreateParamsStreaming = {
    model: request.model,
    messages,
    stream: true,
    // Without this the server never reports usage on a stream.
    stream_options: { include_usage: true },
    // `max_tokens` rather than `max_completion_tokens`: it is the field local servers understand.
    max_tokens: request.maxOutputTokens ?? caps.maxOutputTokens,
  };
  if (request.tools.length > 0 && caps.tools) {
    body.tools = request.tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.inputSchema } }));
  }
  return body;
}

/**
 * `images`: whether the model reads images (see userPieces). A reply whose thoughts the server sent
 * as `reasoning_content` goes back with them in that field: DeepSeek's thinking mode refuses a
 * request whose assistant message with tool calls lacks it (400 "The `reasoning_content` in the
 * thinking mode must be passed back to the API", or "Missing `reasoning_content` field in the
 * assistant message at message index 2"), so until 2026-12-06 every turn in which it called a tool
 * failed at its second step. Only parts of this `provider` go back, and only to the field they came
 * in: a server that streams `reasoning` (Groq, Ollama) is sent nothing it did not send.
 */
export function toChatMessages(messages: ModelMessage[], images: boolean, provider = 'openai-compatible', toolCallId: (id: string) => string = (id) => id): ChatMessage[] {
  const out: ChatMessage[] = [];
  // The pieces of the last message of `out` while it is a user message, to merge the next one into.
  let lastUser: UserPiece[] | undefined;
  for (const message of messages) {
    if (message.role === 'user') {
      // Roles alternate where an empty reply was left out (below): some servers' chat templates reject two user turns in a row.
      const pieces = [...(lastUser ?? []), ...userPieces(message.content, COMPATIBLE_MEDIA, images)];
      if (lastUser) out.pop();
      out.push(userMessage(pieces));
      lastUser = pieces;
      continue;
    }
    if (message.role === 'assistant' && !message.text && message.toolCalls.length === 0) {
      // A reply that held only reasoning (which Chat Completions does not take back) or nothing:
      // `content` may be null only beside tool_calls, and an empty string is refused by some
      // gateways, so it is left out, as the other adapters leave out a turn with nothing to send.
      continue;
    }
    lastUser = undefined;
    if (message.role === 'tool') {
      for (const r of message.results) out.push({ role: 'tool', tool_call_id: toolCallId(r.toolCallId), content: toolOutput(r) });
    } else {
      const calls = message.toolCalls.map((c) => ({ id: toolCallId(c.id), type: 'function' as const, function: { name: c.name, arguments: JSON.stringify(c.input) } }));
      const reasoning = message.reasoning?.filter((p) => p.provider === provider && p.kind === 'reasoning_content');
      const thoughts = reasoning?.length ? { reasoning_content: reasoning.map((p) => p.text ?? '').join('') } : {};
      out.push({ role: 'assistant', content: message.text || null, ...(calls.length > 0 ? { tool_calls: calls } : {}), ...thoughts });
    }
  }
  return out;
}

/** Plain strings where possible: several local servers reject the array form for text. */
function userMessage(pieces: UserPiece[]): ChatMessage {
  if (pieces.every((p) => p.kind === 'text')) return { role: 'user', content: pieces.map((p) => (p as { text: string }).text).join('\n\n') };
  return {
    role: 'user',
    // COMPATIBLE_MEDIA takes images only: no `file` piece reaches here.
    content: pieces.map((p) => (p.kind === 'text' ? { type: 'text' as const, text: p.text } : { type: 'image_url' as const, image_url: { url: p.dataUrl } })),
  };
}

/** Mistral's tool call ids: "Tool call id was toolu_01… but must be a-z, A-Z, 0-9, with a length of 9." */
const MISTRAL_ID = /^[a-zA-Z0-9]{9}$/;

/** Mistral's model families, as its API, OpenRouter (`mistralai/…`) and local servers (`devstral:24b`) name them. */
const MISTRAL_FAMILY = /mistral|magistral|devstral|codestral|ministral|pixtral|mixtral|voxtral/i;

/**
 * Whether the server refuses tool call ids other than Mistral's: Mistral's API (api.mistral.ai),
 * or a Mistral model wherever it is served (OpenRouter passes Mistral's refusal on; the chat
 * templates of Mistral's open models, in llama.cpp or MLX, raise on such an id). Other servers take
 * any id, and get the ids as they came.
 */
export function takesMistralIdsOnly(model: string, baseURL?: string): boolean {
  if (MISTRAL_FAMILY.test(model)) return true;
  try {
    return baseURL !== undefined && /(^|\.)mistral\.ai$/.test(new URL(baseURL).hostname);
  } catch {
    return false;
  }
}

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * Tool call ids as Mistral takes them, for a request of `messages`: one of 9 letters and digits as
 * it is, any other (Anthropic's `toolu_…`, OpenAI's `call_…`, Gemini's, troupe's own) as 9 drawn
 * from its hash, so that a call and its result keep the same id, and each request the same ids as
 * the one before (the server's prompt cache reads the history alike). Until 2026-12-07 a session
 * switched to a Mistral model with tool calls in its history was refused (400) on every turn. A
 * mapped id that would meet another id of the request draws again.
 */
function mistralToolCallIds(messages: readonly ModelMessage[]): (id: string) => string {
  const ids: string[] = [];
  for (const m of messages) {
    if (m.role === 'assistant') ids.push(...m.toolCalls.map((c) => c.id));
    if (m.role === 'tool') ids.push(...m.results.map((r) => r.toolCallId));
  }
  const taken = new Set(ids.filter((id) => MISTRAL_ID.test(id)));
  const mapped = new Map<string, string>();
  for (const id of ids) {
    if (taken.has(id) || mapped.has(id)) continue;
    let next = '';
    for (let attempt = 0; next === '' || taken.has(next); attempt++) {
      const digest = createHash('sha256').update(attempt === 0 ? id : `${id}#${attempt}`).digest();
      next = Array.from(digest.subarray(0, 9), (byte) => ALPHANUMERIC[byte % ALPHANUMERIC.length]).join('');
    }
    taken.add(next);
    mapped.set(id, next);
  }
  return (id) => mapped.get(id) ?? id;
}
