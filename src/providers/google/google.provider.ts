/**
 * The Gemini adapter: `generateContentStream` through `@google/genai` (Gemini Developer API).
 *
 * Retries: this adapter is the only layer that retries. The SDK's own retry (p-retry) ignores the
 * RetryInfo delay Gemini sends with a 429, so it stays off (no `retryOptions`), and
 * streamWithWatchdog (src/core/model-stream.ts) retries rate limits, overloads, network failures and
 * stalls, up to `maxRetries` times, waiting as long as Gemini asks (its RetryInfo, on a 429 or a
 * 503), and only while no event has reached the caller.
 */
import { GoogleGenAI } from '@google/genai';
import { countTimeoutMs, DEFAULT_STREAM_IDLE_TIMEOUT_MS, idleSetting, streamWithWatchdog, withTimeLimit } from '../../core/model-stream.js';
import { ProviderError, type ModelCapabilities, type ModelProvider, type ModelRequest, type ProviderEvent } from '../../core/provider.js';
import { toGoogleProviderError } from './google.errors.js';
import { toGoogleParams } from './google.request.js';
import { mapGoogleStream } from './google.stream.js';
import { googleCapabilities } from './models.js';

export interface GoogleProviderOptions {
  /** GEMINI_API_KEY (or GOOGLE_API_KEY). */
  apiKey?: string;
  /** GOOGLE_GEMINI_BASE_URL; the SDK default when absent. */
  baseURL?: string;
  /** Retries on 429, 5xx and network failures. Default 2; tests use 0 to observe errors. */
  maxRetries?: number;
  /** Bounds the whole request, the streamed reply included (the SDK's `httpOptions.timeout`). */
  timeoutMs?: number;
  /** How long the stream may stay silent before it counts as stalled; 0 disables. Default 5 minutes. */
  streamIdleTimeoutMs?: number;
  /** Capability overrides per model name (from the config), applied over the catalogue. */
  models?: Record<string, Partial<ModelCapabilities>>;
}

export class GoogleProvider implements ModelProvider {
  readonly id = 'google';
  readonly #client: GoogleGenAI | undefined;
  readonly #models: Record<string, Partial<ModelCapabilities>>;
  readonly #maxRetries: number;
  readonly #idleMs: number;

  constructor(options: GoogleProviderOptions) {
    this.#models = options.models ?? {};
    this.#maxRetries = options.maxRetries ?? 2;
    this.#idleMs = options.streamIdleTimeoutMs ?? DEFAULT_STREAM_IDLE_TIMEOUT_MS;
    this.#client = options.apiKey
      ? new GoogleGenAI({
          apiKey: options.apiKey,
          // Explicit, so GOOGLE_GENAI_USE_VERTEXAI in the environment cannot switch backends underneath.
          vertexai: false,
          httpOptions: { ...(options.baseURL ? { baseUrl: options.baseURL } : {}), ...(options.timeoutMs ? { timeout: options.timeoutMs } : {}) },
        })
      : undefined;
  }

  capabilities(model: string): ModelCapabilities {
    return { ...googleCapabilities(model), ...this.#models[model] };
  }

  async *stream(request: ModelRequest, signal: AbortSignal): AsyncGenerator<ProviderEvent> {
    const client = this.#requireClient(signal);
    const params = toGoogleParams(request, this.capabilities(request.model));
    yield* streamWithWatchdog(
      {
        open: (vendorSignal) => client.models.generateContentStream({ ...params, config: { ...params.config, abortSignal: vendorSignal } }),
        map: mapGoogleStream,
        classify: toGoogleProviderError,
      },
      { idleMs: this.#idleMs, setting: idleSetting(this.id), maxRetries: this.#maxRetries },
      signal,
    );
  }

  /**
   * Gemini's count (`models.countTokens`). The Developer API counts contents only, so the system
   * prompt and tool declarations are counted as a leading user turn: close, not exact. One attempt
   * (the SDK's retry is off) within countTimeoutMs: the SDK turns fetch's own limits off, so without
   * it a count that never answers would hold the turn until a cancel.
   */
  async countTokens(request: ModelRequest, signal: AbortSignal): Promise<number> {
    const client = this.#requireClient(signal);
    const { model, contents } = toGoogleParams(request, this.capabilities(request.model));
    const preamble = [request.system, ...request.tools.map((t) => JSON.stringify({ name: t.name, description: t.description, parameters: t.inputSchema }))]
      .filter(Boolean)
      .join('\n');
    const all = preamble ? [{ role: 'user', parts: [{ text: preamble }] }, ...contents] : contents;
    try {
      const result = await withTimeLimit(countTimeoutMs(this.#idleMs), signal, 'the token count (countTokens)', (vendorSignal) =>
        client.models.countTokens({ model, contents: all, config: { abortSignal: vendorSignal } }),
      );
      return result.totalTokens ?? 0;
    } catch (err) {
      throw toGoogleProviderError(err, signal);
    }
  }

  #requireClient(signal: AbortSignal): GoogleGenAI {
    if (signal.aborted) throw new ProviderError('aborted', 'the request was cancelled');
    if (!this.#client) throw new ProviderError('auth', 'no Gemini credential: set GEMINI_API_KEY or providers.google.apiKey in the troupe config');
    return this.#client;
  }
}
