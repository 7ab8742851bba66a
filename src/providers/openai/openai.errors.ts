/**
 * OpenAI SDK errors → ProviderError, for both the Responses API and Chat Completions servers.
 * OpenAI bodies are `{error:{message, type, param, code}}` (https://platform.openai.com/docs/guides/error-codes);
 * compatible servers vary, so context overflow is also recognised by the wording vLLM, llama.cpp,
 * Ollama, LM Studio and TGI use, and a failure of the server by TGI's.
 */
import OpenAI from 'openai';
import { askedDelay } from '../../core/model-stream.js';
import { describeError, ProviderError, retryAfterMs, sdkRetriedStatusKind, vendorShouldRetry, vendorText, type ProviderErrorKind } from '../../core/provider.js';

// How compatible servers word an unknown model in a 404: Ollama "model \"x\" not found", vLLM "The model `x` does not exist".
const MODEL_MISSING = /\bmodel\b.*\b(not found|does not exist)/i;
// TGI's two: "`inputs` tokens + `max_new_tokens` must be <= 4096. Given: …" and "`inputs` must have less than 4095 tokens. Given: …".
const CONTEXT_OVERFLOW = /context[_ ](length|window|size)|maximum context|exceeds? the (available )?context|too many tokens|prompt is too long|`inputs` tokens \+ `max_new_tokens` must be <=|`inputs` must have less than \d+ tokens/i;
/**
 * llama.cpp's words for a request that does not fit its context, which mean nothing else whatever
 * status they come with (tools/server/server-context.cpp). "Context size has been exceeded." is
 * what it sends when the context fills as it reads the prompt or writes the reply (a decode finds no
 * free cell of its KV cache), typed as a failure of the server: `{"error": {"code": 500, "message":
 * "Context size has been exceeded.", "type": "server_error"}}`, as an HTTP 500, or as an SSE `data:`
 * event after the 200; LM Studio, which runs llama.cpp, forwards it. Its refusal of a prompt longer
 * than the context ("request (N tokens) exceeds the available context size (M tokens), try
 * increasing it") is a 400, typed `exceed_context_size_error` since mid 2025. Until 2026-12-07 the
 * 500 was `overloaded`: sent again as it was (by the SDK, each time a whole prompt read again), then
 * the turn ended as a server failure, and the session never compacted.
 */
const LLAMA_CPP_OVERFLOW = /context size has been exceeded|exceeds the available context size/i;
/**
 * Error types that name a failure of the server, not of the request. OpenAI's Chat Completions sends
 * one inside a 200 stream as `{"error": {"message": "The server had an error while processing your
 * request. Sorry about that!", "type": "server_error", "param": null, "code": null}}`: no status, no
 * code. Until 2026-12-07 that was `invalid_request`, a refused request, never retried. Only an error
 * without a status is judged by its type; with one, the status decides (Ollama answers an unknown
 * model with a 404 of type `api_error`).
 */
const SERVER_TYPES: ReadonlySet<string> = new Set(['server_error', 'api_error']);
/**
 * The words of text-generation-inference's (TGI) failures of the server (its InferError): its stream
 * errors have neither type nor code, `{"error": {"message", "http_status_code": 422}}` whatever failed
 * (router/src/infer/mod.rs), and its older `{"error": "…", "error_type": "generation"}` loses its
 * type in the SDK, which keeps only `error`. Its validation errors ("Input validation error: …") are not these.
 */
const SERVER_FAILURE = /^(Request failed during generation: |Model is overloaded$|Incomplete generation( stream)?$)/;
/**
 * TGI's status for a generation that failed in its model shard (a CUDA out of memory, a shard that
 * died): InferError::GenerationError is `424 {"error": "Request failed during generation: Server
 * error: …", "error_type": "generation"}` (router/src/server.rs). TGI answers so a request it does
 * not stream (its streams carry the failure as an event, above); hosted endpoints in front of a
 * model server answer 424 when the model behind them failed (Azure ML's "424 Model Error"). Until
 * 2026-12-07 it was `invalid_request`, a refused request, never retried.
 */
const FAILED_DEPENDENCY = 424;
const UNPROCESSABLE = 422;

/**
 * troupe's account of `insufficient_quota` (the vendor's words stay as `vendorMessage`): what it
 * means and that a retry will not help. The same words serve a gateway that forwards OpenAI's answer.
 */
const QUOTA_EXPLANATION =
  "The model provider refused the call because the account's quota is used up (insufficient_quota: no credit left, or a spending limit reached). " +
  'Retrying does not help: add credit or raise the limit in the account\'s billing settings (for OpenAI, https://platform.openai.com/settings/organization/billing), or switch to another model.';

/** A classified failure, with troupe's account of a spent quota. */
export function openAIFailure(kind: ProviderErrorKind, message: string, opts: { status?: number; retryAfterMs?: number; shouldRetry?: boolean } = {}): ProviderError {
  return new ProviderError(kind, message, kind === 'quota_exceeded' ? { status: opts.status, explanation: QUOTA_EXPLANATION, shouldRetry: opts.shouldRetry } : opts);
}

/** Classifies anything the SDK (or the stream) threw. An aborted `signal` always wins. */
export function toOpenAIProviderError(err: unknown, signal: AbortSignal): ProviderError {
  if (err instanceof ProviderError) return err;
  if (signal.aborted || err instanceof OpenAI.APIUserAbortError) return new ProviderError('aborted', 'the request was cancelled');
  if (err instanceof OpenAI.APIConnectionError) return new ProviderError('network', describeError(err));
  if (err instanceof OpenAI.APIError) {
    const body = (err.error ?? {}) as { message?: unknown; type?: unknown };
    // A body that is not JSON (a proxy's HTML page) has no message: see vendorText. A string `error`
    // (TGI's `{"error": "…", "error_type": "…"}`) is the message itself; the SDK's own quotes it as JSON.
    const message = typeof body.message === 'string' ? body.message : typeof err.error === 'string' ? vendorText(err.error) : vendorText(err.message);
    const status = err.status ?? bodyStatus(err.code);
    const code = typeof err.code === 'string' ? err.code : undefined;
    const kind = classify(status, code, typeof body.type === 'string' ? body.type : undefined, message);
    const shouldRetry = vendorShouldRetry(err.status, err.headers, kind);
    // The header's delay goes with every failure troupe sends again (askedDelay); only a rate limit's words are read for one.
    const asked = retryAfterMs(err.headers) ?? (kind === 'rate_limited' ? delayInMessage(message) : undefined);
    return openAIFailure(kind, message, { status, retryAfterMs: askedDelay(kind, shouldRetry, asked), ...(shouldRetry === undefined ? {} : { shouldRetry }) });
  }
  return new ProviderError('network', describeError(err));
}

/**
 * A JSON body in OpenAI's error shape (`{"error": …}`) that came with a 2xx, classified as the same
 * error inside a stream is (no status of its own); undefined for any other JSON. See core/whole-body.ts.
 */
export function openAIErrorBody(json: unknown, response: Response): ProviderError | undefined {
  if (typeof json !== 'object' || json === null || !(json as { error?: unknown }).error) return undefined;
  return toOpenAIProviderError(new OpenAI.APIError(undefined, (json as { error: object }).error, undefined, response.headers), new AbortController().signal);
}

/**
 * The HTTP status an error inside a stream gives as its `code`: vLLM's error chunk is
 * `{"error": {"type": "InternalServerError", "code": 500, …}}` (a stream has no status of its own).
 * Until 2026-12-06 such a 500 was `invalid_request`, told as a refused request and never retried.
 */
function bodyStatus(code: unknown): number | undefined {
  const n = typeof code === 'number' ? code : typeof code === 'string' && /^\d{3}$/.test(code) ? Number(code) : Number.NaN;
  return n >= 400 && n <= 599 ? n : undefined;
}

/**
 * The wait a 429's message names, for a server that sends no retry-after header. Until 2026-12-06
 * only the headers were read, and a rate limit that said when to come back only in its words
 * (OpenAI "Please try again in 20s", "in 1m30s", "in 345ms"; Groq "in 7m54.336s"; Azure "Please
 * retry after 20 seconds") ended the turn without `retryAfterMs` for the client.
 */
export function delayInMessage(message: string): number | undefined {
  const words = /\bretry after (\d+(?:\.\d+)?) seconds?\b/i.exec(message);
  // "after 0 seconds", "in 0s": no delay a retry can wait, none asked (core/provider.ts retryAfterMs).
  if (words) return Number.parseFloat(words[1]!) > 0 ? Number.parseFloat(words[1]!) * 1000 : undefined;
  const spelled = /\btry again in ((?:\d+(?:\.\d+)?(?:ms|h|m|s))+)/i.exec(message)?.[1];
  if (!spelled) return undefined;
  const unit: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 };
  let ms = 0;
  for (const [, n, u] of spelled.matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/gi)) ms += Number.parseFloat(n!) * unit[u!.toLowerCase()]!;
  return ms > 0 ? Math.round(ms) : undefined;
}

/** Classifies a failure by HTTP status (absent for in-stream errors), error code, type and message. */
export function classify(status: number | undefined, code: string | undefined, type: string | undefined, message: string): ProviderErrorKind {
  if (code === 'context_length_exceeded' || type === 'exceed_context_size_error' || LLAMA_CPP_OVERFLOW.test(message)) return 'context_overflow';
  // A spent quota or credit arrives as a 429 but waiting does not help: the account needs attention.
  // Until 2026-12-07 it was `invalid_request` for troupe, and a rate limit for the SDK, which sent
  // the request again `maxRetries` times, with its backoff, before the turn ended.
  if (code === 'insufficient_quota' || type === 'insufficient_quota') return 'quota_exceeded';
  if (status === 429 || code === 'rate_limit_exceeded') return 'rate_limited';
  if (status === 401 || status === 403 || code === 'invalid_api_key') return 'auth';
  // 422: TGI's status for a request that fails its validation (a prompt over its token limits among
  // them) when it answers before streaming, as it does a request that is not streamed or through a proxy.
  if (status === 413 || ((status === 400 || status === UNPROCESSABLE || status === undefined) && CONTEXT_OVERFLOW.test(message))) return 'context_overflow';
  if ((status !== undefined && status >= 500) || status === FAILED_DEPENDENCY || code === 'server_error' || code === 'overloaded' || (status === undefined && ((type !== undefined && SERVER_TYPES.has(type)) || SERVER_FAILURE.test(message)))) return 'overloaded';
  if (code === 'model_not_found' || (status === 404 && MODEL_MISSING.test(message))) return 'model_not_found';
  return sdkRetriedStatusKind(status) ?? 'invalid_request';
}
