/**
 * The Gemini adapter: `generateContentStream` through `@google/genai` (Gemini Developer API).
 *
 * Retries: this adapter is the only layer that retries. The SDK's own retry (p-retry) ignores the
 * RetryInfo delay Gemini sends with a 429, so it stays off (no `retryOptions`), and the adapter
 * retries rate limits, overloads and network failures itself, up to `maxRetries` times, waiting as
 * long as Gemini asks, and only while no event has reached the caller.
 */
import { GoogleGenAI } from '@google/genai';
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
  timeoutMs?: number;
  /** Capability overrides per model name (from the config), applied over the catalogue. */
  models?: Record<string, Partial<ModelCapabilities>>;
}

const RETRYABLE = new Set(['rate_limited', 'overloaded', 'network']);

export class GoogleProvider implements ModelProvider {
  readonly id = 'google';
  readonly #client: GoogleGenAI | undefined;
  readonly #models: Record<string, Partial<ModelCapabilities>>;
  readonly #maxRetries: number;

  constructor(options: GoogleProviderOptions) {
    this.#models = options.models ?? {};
    this.#maxRetries = options.maxRetries ?? 2;
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
    for (let attempt = 0; ; attempt++) {
      let delivered = false;
      try {
        const chunks = await client.models.generateContentStream({ ...params, config: { ...params.config, abortSignal: signal } });
        for await (const event of mapGoogleStream(chunks, signal)) {
          delivered = true;
          yield event;
        }
        return;
      } catch (err) {
        const failure = toGoogleProviderError(err, signal);
        if (delivered || attempt >= this.#maxRetries || !RETRYABLE.has(failure.kind)) throw failure;
        await pause(failure.retryAfterMs ?? backoffMs(attempt), signal);
      }
    }
  }

  /**
   * Gemini's count (`models.countTokens`). The Developer API counts contents only, so the system
   * prompt and tool declarations are counted as a leading user turn: close, not exact.
   */
  async countTokens(request: ModelRequest, signal: AbortSignal): Promise<number> {
    const client = this.#requireClient(signal);
    const { model, contents } = toGoogleParams(request, this.capabilities(request.model));
    const preamble = [request.system, ...request.tools.map((t) => JSON.stringify({ name: t.name, description: t.description, parameters: t.inputSchema }))]
      .filter(Boolean)
      .join('\n');
    const all = preamble ? [{ role: 'user', parts: [{ text: preamble }] }, ...contents] : contents;
    try {
      const result = await client.models.countTokens({ model, contents: all, config: { abortSignal: signal } });
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

/** Exponential backoff with jitter: ~0.5 s, 1 s, 2 s … capped at 8 s. */
function backoffMs(attempt: number): number {
  return Math.min(8_000, 500 * 2 ** attempt) * (0.75 + Math.random() * 0.25);
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(new ProviderError('aborted', 'the request was cancelled'));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
