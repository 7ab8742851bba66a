/**
 * The model port: one vocabulary for every vendor. Adapters under src/providers/<vendor>/ map their
 * SDK's stream and errors onto these types and nothing else leaks out of them.
 */
import { sliceJson } from './content-parts.js';
import type { ContentBlock } from './events.js';
import { jsonLength } from './json-bytes.js';
import { canonicalMediaType, isTextType } from './media-type.js';
import { pdfPageCount } from './pdf-pages.js';
import { headOf, elided } from './text-cut.js';

/** What a model can do. Shared code branches on these, never on model names. */
export interface ModelCapabilities {
  contextWindow: number;
  maxOutputTokens: number;
  tools: boolean;
  thinking: boolean;
  images: boolean;
  /** USD per million tokens; absent when unknown (then usage carries no cost). */
  pricing?: { input: number; output: number; cacheRead?: number; cacheWrite?: number };
}

export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  inputSchema: Record<string, unknown>;
}

/**
 * Opaque reasoning state a vendor needs back verbatim in later requests: Anthropic thinking blocks
 * with their signature (or redacted thinking), OpenAI encrypted reasoning items, Gemini thought
 * signatures. The engine stores the parts it received (`reasoning_part` events) on the assistant
 * message, in order, and never looks inside; each adapter replays only parts whose `provider` is its
 * own id and drops the rest (a model switch mid-session loses them, which the vendors accept).
 */
export interface ReasoningPart {
  /** The `ModelProvider.id` that produced this part. */
  provider: string;
  /** Vendor-specific kind, e.g. `thinking`, `redacted_thinking`, `reasoning`, `thought_signature`. */
  kind: string;
  /** Readable reasoning text, when the vendor sent any. */
  text?: string;
  /** The opaque token: a signature, redacted data or encrypted content. */
  data?: string;
  /** Vendor item id, or the tool call id a signature belongs to. */
  id?: string;
  /**
   * Where in its reply the part came: after this many characters of the reply's text and this many
   * of its tool calls. For a vendor that wants reasoning back between the items it preceded
   * (OpenAI Responses); absent, the part came before everything.
   */
  at?: { text: number; toolCalls: number };
}

export type ModelMessage =
  | { role: 'user'; content: ContentBlock[] }
  | {
      role: 'assistant';
      text: string;
      thinking?: string;
      toolCalls: { id: string; name: string; input: Record<string, unknown> }[];
      /** Reasoning state to send back with this message (see ReasoningPart). */
      reasoning?: ReasoningPart[];
    }
  | { role: 'tool'; results: { toolCallId: string; name: string; output: string; isError: boolean }[] };

export interface ModelRequest {
  /** The model id without its provider prefix. */
  model: string;
  system: string;
  messages: ModelMessage[];
  tools: ToolSpec[];
  maxOutputTokens?: number;
  /** Token budget for extended thinking; 0 or absent disables it. */
  thinkingBudget?: number;
  /** `compaction` requests ask for a summary of the conversation; scripted models answer them without consuming a script step. */
  purpose: 'turn' | 'compaction';
}

/**
 * Most bytes of one `tool_call_delta` (as a JSON string, as the event log counts a part) that an
 * adapter makes of arguments its vendor sent whole, as an object (Gemini always, an
 * Anthropic-compatible gateway in content_block_start).
 */
export const ARGS_DELTA_BYTES = 64 * 1024;

/**
 * The `argsDelta`s of arguments sent whole: their JSON text in pieces of at most
 * {@link ARGS_DELTA_BYTES}, never made whole. Made again from the parsed object, the text may be
 * longer than the one that carried it (a number such as `9e20` is 21 characters written again), and
 * longer than a string can be: made whole, it threw a RangeError that failed the turn.
 */
export function argsDeltas(input: unknown): string[] {
  const deltas: string[] = [];
  sliceJson(input, ARGS_DELTA_BYTES, (delta) => deltas.push(delta));
  return deltas;
}

/**
 * A call's arguments from the JSON text its vendor streamed (whole, once the call ends): `{}` for
 * none (an empty text), else the object, else `{}` and the text as `invalidArgs` (not JSON, or not
 * an object), which the engine answers the model with.
 */
export function parseToolArgs(json: string): { input: Record<string, unknown>; invalidArgs?: string } {
  if (json.trim() === '') return { input: {} };
  try {
    const value: unknown = JSON.parse(json);
    if (value && typeof value === 'object' && !Array.isArray(value)) return { input: value as Record<string, unknown> };
  } catch {
    // fall through: the model sent text that is not JSON
  }
  return { input: {}, invalidArgs: json };
}

export type ProviderStopReason = 'end_turn' | 'tool_use' | 'max_tokens' | 'refusal';

export type ProviderEvent =
  | { type: 'text_delta'; text: string }
  | { type: 'thinking_delta'; text: string }
  | { type: 'tool_call_start'; id: string; name: string }
  | { type: 'tool_call_delta'; id: string; argsDelta: string }
  | {
      type: 'tool_call_end';
      id: string;
      input: Record<string, unknown>;
      /** Set when the model's arguments were not a JSON object: the raw text it sent (`input` is then `{}`). */
      invalidArgs?: string;
    }
  /**
   * Token counts for the whole call. `inputTokens` excludes cached tokens: the prompt size is
   * inputTokens + cacheReadTokens + cacheWriteTokens, whatever the vendor's own convention.
   */
  | { type: 'usage'; inputTokens: number; outputTokens: number; cacheReadTokens?: number; cacheWriteTokens?: number }
  /** Reasoning state to keep on the assistant message and send back later (see ReasoningPart). */
  | { type: 'reasoning_part'; part: ReasoningPart }
  | { type: 'stop'; reason: ProviderStopReason }
  /**
   * The call failed before anything reached the caller and is made again after `delayMs`: not part
   * of the reply, but a status for the person waiting (streamWithWatchdog yields it before the wait).
   * `attempt` is the attempt about to be made (2 for the first retry), of at most `attempts`.
   */
  | { type: 'retry'; kind: ProviderErrorKind; status?: number; vendorMessage: string; attempt: number; attempts: number; delayMs: number };

/**
 * `model_not_found`: the vendor answered that it has no such model (a 404 naming it).
 * `quota_exceeded`: the account cannot pay for the call (OpenAI's 429 `insufficient_quota`, a spent
 * daily quota, an empty credit balance): no retry helps, unlike `rate_limited`.
 */
export type ProviderErrorKind = 'auth' | 'rate_limited' | 'quota_exceeded' | 'overloaded' | 'context_overflow' | 'invalid_request' | 'model_not_found' | 'network' | 'aborted';

/** A failed model call, classified. `vendorMessage` keeps the vendor's own words for the human. */
export class ProviderError extends Error {
  readonly kind: ProviderErrorKind;
  readonly vendorMessage: string;
  /** When the vendor said to try again, in ms: kept on a rate limit and on any failure troupe retries (askedDelay, core/model-stream.ts). */
  readonly retryAfterMs?: number;
  readonly status?: number;
  /**
   * troupe's account of the failure, for people, where the vendor's words alone do not say what to
   * do (an auth failure: which key was refused and where it came from). The turn's message when set.
   */
  readonly explanation?: string;
  /**
   * The vendor's own word on whether the same call may succeed, over what its kind says (OpenAI's
   * `x-should-retry` header on an error answer); undefined when it said nothing, and the kind decides.
   */
  readonly shouldRetry?: boolean;
  constructor(kind: ProviderErrorKind, vendorMessage: string, opts: { retryAfterMs?: number; status?: number; explanation?: string; shouldRetry?: boolean } = {}) {
    super(`${kind}: ${vendorMessage}`);
    this.name = 'ProviderError';
    this.kind = kind;
    this.vendorMessage = vendorMessage;
    this.retryAfterMs = opts.retryAfterMs;
    this.status = opts.status;
    this.explanation = opts.explanation;
    this.shouldRetry = opts.shouldRetry;
  }
}

export function isProviderError(err: unknown, kind?: ProviderErrorKind): err is ProviderError {
  return err instanceof ProviderError && (kind === undefined || err.kind === kind);
}

/** One vendor (or the scripted model). Streams must end promptly when `signal` aborts. */
export interface ModelProvider {
  /** The provider prefix of model ids, e.g. `anthropic`, `scripted`. */
  readonly id: string;
  capabilities(model: string): ModelCapabilities;
  stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ProviderEvent>;
  /** The vendor's token count for a request, where the vendor has an endpoint for it. */
  countTokens?(request: ModelRequest, signal: AbortSignal): Promise<number>;
}

/** Characters per token of the offline estimate. */
export const CHARS_PER_TOKEN = 4;

/** `{"role":"user","content":` and `}`: a user message as JSON, less its content. */
const USER_MESSAGE_CHARS = 27;

/** The brackets and commas of a JSON array of `n` items. */
const arrayChars = (n: number) => 2 + Math.max(0, n - 1);

/**
 * The offline token estimate of a request, about four characters per token of it as JSON: what the
 * engine sizes a request by where the vendor has no count endpoint, and the usage the offline model
 * reports (so that, like a vendor's, it covers the system prompt and the tools too). Images count as
 * {@link IMAGE_TOKENS} each, not by their data. Its JSON is counted, never made: a conversation may
 * hold a tool input or a prompt whose JSON is longer than a string can be (90 million control
 * characters are 540 million of it), and making it threw a RangeError on every turn (until 2026-12-07).
 */
export function estimateTokens(request: Pick<ModelRequest, 'system' | 'messages' | 'tools'>): number {
  const { messages } = request;
  let chars = request.system.length + jsonLength(request.tools) + arrayChars(messages.length);
  for (const m of messages) chars += m.role === 'user' ? contentChars(m.content) + USER_MESSAGE_CHARS : jsonLength(m);
  return Math.ceil(chars / CHARS_PER_TOKEN);
}

/**
 * What an image counts for in the offline estimate, in tokens. Vendors bill an image by its pixels,
 * not its bytes: Anthropic about 1,600 tokens at most, once it has scaled the image down, OpenAI
 * and Gemini less. Counted by its base64 text instead, a pasted screenshot (megabytes) would look
 * like hundreds of thousands of tokens and be "compacted" out of a context it fits in. Embedded
 * binary resources count the same (those a vendor cannot take are sent as a one-line placeholder).
 */
export const IMAGE_TOKENS = 1_600;

/**
 * Characters of `blocks` as JSON for the offline estimate, each image or binary resource as
 * {@link IMAGE_TOKENS}: its data is not serialized at all (megabytes, on every estimate).
 */
export function contentChars(blocks: readonly ContentBlock[]): number {
  let chars = arrayChars(blocks.length);
  for (const b of blocks) {
    if (b.type === 'image') chars += jsonLength({ ...b, data: '' }) + IMAGE_TOKENS * CHARS_PER_TOKEN;
    // A text blob goes as its text (contentPlan): about three characters for every four of base64.
    else if (b.type === 'resource' && 'blob' in b.resource && isTextType(b.resource.mimeType)) chars += jsonLength({ ...b, resource: { ...b.resource, blob: '' } }) + Math.ceil((b.resource.blob.length * 3) / 4);
    // A PDF reaches the model page by page, each page an image and its text: a page counts as an image.
    else if (b.type === 'resource' && 'blob' in b.resource && canonicalMediaType(b.resource.mimeType ?? '') === 'application/pdf')
      chars += jsonLength({ ...b, resource: { ...b.resource, blob: '' } }) + (pdfPageCount(b.resource.blob, b) ?? 1) * IMAGE_TOKENS * CHARS_PER_TOKEN;
    else if (b.type === 'resource' && 'blob' in b.resource) chars += jsonLength({ ...b, resource: { ...b.resource, blob: '' } }) + IMAGE_TOKENS * CHARS_PER_TOKEN;
    else chars += jsonLength(b);
  }
  return chars;
}

/** The cost of one call in USD, from the model's per-million-token prices; undefined when unpriced. */
export function costOf(
  usage: { inputTokens: number; outputTokens: number; cacheReadTokens?: number; cacheWriteTokens?: number },
  pricing: ModelCapabilities['pricing'],
): { amount: number; currency: 'USD' } | undefined {
  if (!pricing) return undefined;
  const micro =
    usage.inputTokens * pricing.input +
    usage.outputTokens * pricing.output +
    (usage.cacheReadTokens ?? 0) * (pricing.cacheRead ?? pricing.input) +
    (usage.cacheWriteTokens ?? 0) * (pricing.cacheWrite ?? pricing.input);
  return { amount: micro / 1_000_000, currency: 'USD' };
}

/**
 * The delay a vendor asks for: `retry-after-ms` (milliseconds) or `retry-after` (seconds or an HTTP
 * date); undefined when it asks for none that can be waited: a value of zero or less, an HTTP date
 * now or past, or text that is neither. Such a value is no delay asked, and a retry waits troupe's
 * own backoff (core/model-stream.ts), as the Anthropic SDK does (it takes a delay only over 0, and
 * a `retry-after-ms` of 0 gives way to `retry-after`; the OpenAI SDK 7.x waits a 0 and backs off only
 * below it). Until 2026-12-07 `retry-after: 0` (or a past
 * date, or a negative number) was a delay of 0 ms: every retry of the call was made at once, a tight
 * loop on a server that said it was overloaded. A `retry-after-ms` of no use falls to `retry-after`.
 */
export function retryAfterMs(headers: Headers | undefined): number | undefined {
  const ms = Number.parseFloat(headers?.get('retry-after-ms') ?? '');
  if (Number.isFinite(ms) && ms > 0) return ms;
  const raw = headers?.get('retry-after')?.trim();
  if (!raw) return undefined;
  const seconds = Number.parseFloat(raw);
  if (Number.isFinite(seconds)) return seconds > 0 ? seconds * 1000 : undefined;
  const date = Date.parse(raw);
  return Number.isNaN(date) || date <= Date.now() ? undefined : date - Date.now();
}

/**
 * The server's `x-should-retry` on an HTTP error answer (not a standard header; OpenAI and Anthropic
 * send it), read as their SDKs read it before troupe turned their retries off (client.js
 * shouldRetry): exactly `true`, the request is sent again whatever its status; exactly `false`,
 * never; anything else, the status decides (undefined). Only an HTTP error answer's (`status`): the
 * SDKs never read it on an error inside a 200's stream. A `true` does not make a spent quota or an
 * overflowing prompt worth sending again as it is: troupe knows from the code or the words that no
 * retry helps (the SDK sent a 429 insufficient_quota again: docs/providers.md). Until 2026-12-07
 * troupe's retries went by the status alone, and a 503 the server said not to send again was sent
 * again, a 400 it said to send again was not (Anthropic's until later that day).
 */
export function vendorShouldRetry(status: number | undefined, headers: Headers | undefined, kind: ProviderErrorKind): boolean | undefined {
  if (status === undefined) return undefined;
  const header = headers?.get('x-should-retry');
  if (header === 'false') return false;
  return header === 'true' && kind !== 'quota_exceeded' && kind !== 'context_overflow' ? true : undefined;
}

/**
 * 408 (the request timed out) and 409 (a conflict, such as a lock timeout) as troupe's kinds: the
 * statuses the vendors' SDKs retried by themselves beside 429 and 5xx, retried by troupe's layer as
 * before since their retries are off (src/core/model-stream.ts); undefined for any other status.
 */
export function sdkRetriedStatusKind(status: number | undefined): ProviderErrorKind | undefined {
  return status === 408 ? 'network' : status === 409 ? 'overloaded' : undefined;
}

/** An error's message with its cause's (fetch failures keep the useful part in `cause`). */
export function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = (err as { cause?: unknown }).cause;
  return cause instanceof Error && cause.message && cause.message !== err.message ? `${err.message} (${cause.message})` : err.message;
}

/** The most of a vendor's error text a ProviderError keeps when the text is not the API's own message. */
const VENDOR_TEXT_MAX = 2_000;

/**
 * A failed response's body, as text for people. Until 2026-12-06 a body that was not the API's JSON
 * was kept whole: a proxy's or a gateway's HTML error page (an nginx 502, a Cloudflare 524, a
 * corporate proxy's block page, kilobytes of markup and CSS) became the turn's error message in the
 * client and the log. An HTML page is now its title (or first heading) and a hint; other text is
 * cut to VENDOR_TEXT_MAX characters.
 */
export function vendorText(text: string): string {
  const body = text.trim();
  if (/<html[\s>]|<!doctype html|<\/(html|head|body)>/i.test(body)) {
    const heading = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(body)?.[1] ?? /<h1[^>]*>([\s\S]*?)<\/h1>/i.exec(body)?.[1] ?? '';
    const said = headOf(heading.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').trim(), 200);
    const status = /^(\d{3})\s/.exec(body)?.[1];
    return `${status ? `HTTP ${status}: ` : ''}an HTML page${said ? ` ("${said}")` : ''}, not the API's answer: a proxy or gateway answered, or the base URL is wrong`;
  }
  return elided(body, VENDOR_TEXT_MAX);
}
