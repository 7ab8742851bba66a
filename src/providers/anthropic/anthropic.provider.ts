/**
 * The Anthropic adapter: Messages API streaming through `@anthropic-ai/sdk`.
 *
 * Retries: streamWithWatchdog (src/core/model-stream.ts) and nothing else, up to `maxRetries`
 * times: the request until its stream starts (429, 408, 409, 5xx, 529 and connection errors), then
 * a stream that stalls or fails before any event reached the caller. The SDK's own retries are off:
 * since 1.x it waits out whatever `retry-after` a 429 names (a quota spent for the day says hours),
 * which held the turn in silence until the stall watchdog cut it (5 minutes, then again per retry)
 * and ended it as a stalled stream; here a wait over a minute ends the turn `rate_limited` (or
 * `overloaded`, a 529's) with the delay at once, as for the other vendors. Nothing above retries;
 * an error that reaches troupe is final for that call.
 */
import Anthropic from '@anthropic-ai/sdk';
import { countTimeoutMs, DEFAULT_STREAM_IDLE_TIMEOUT_MS, idleSetting, streamWithWatchdog, withTimeLimit } from '../../core/model-stream.js';
import { ProviderError, type ModelCapabilities, type ModelProvider, type ModelRequest, type ProviderEvent } from '../../core/provider.js';
import { refuseWholeBody } from '../../core/whole-body.js';
import { anthropicErrorBody, toAnthropicProviderError } from './anthropic.errors.js';
import { toAnthropicBody } from './anthropic.request.js';
import { mapAnthropicStream } from './anthropic.stream.js';
import { anthropicCapabilities, findAnthropicModel } from './models.js';

export interface AnthropicProviderOptions {
  /** `x-api-key` credential (ANTHROPIC_API_KEY). */
  apiKey?: string;
  /** Bearer credential (ANTHROPIC_AUTH_TOKEN), for gateways; used when no apiKey is given. */
  authToken?: string;
  /** ANTHROPIC_BASE_URL; the SDK default when absent. */
  baseURL?: string;
  /** Retries of a retryable failure (troupe's, not the SDK's). Default 2; tests use 0 to observe errors. */
  maxRetries?: number;
  /** Timeout until the response starts, per attempt, in milliseconds (the SDK default is 10 minutes). */
  timeoutMs?: number;
  /** How long the stream may stay silent before it counts as stalled; 0 disables. Default 5 minutes. */
  streamIdleTimeoutMs?: number;
  /** Capability overrides per model name (from the config), applied over the catalogue. */
  models?: Record<string, Partial<ModelCapabilities>>;
}

export class AnthropicProvider implements ModelProvider {
  readonly id = 'anthropic';
  readonly #client: Anthropic | undefined;
  readonly #models: Record<string, Partial<ModelCapabilities>>;
  readonly #maxRetries: number;
  readonly #idleMs: number;

  constructor(options: AnthropicProviderOptions) {
    this.#models = options.models ?? {};
    this.#maxRetries = options.maxRetries ?? 2;
    this.#idleMs = options.streamIdleTimeoutMs ?? DEFAULT_STREAM_IDLE_TIMEOUT_MS;
    const credential = options.apiKey ? { apiKey: options.apiKey } : options.authToken ? { authToken: options.authToken } : undefined;
    // Without a credential the SDK would search profile files on disk; troupe reports a missing key instead.
    this.#client = credential
      ? new Anthropic({
          ...credential,
          baseURL: options.baseURL ?? null,
          // One retry layer, troupe's (see the top of this file).
          maxRetries: 0,
          ...(options.timeoutMs ? { timeout: options.timeoutMs } : {}),
        })
      : undefined;
  }

  capabilities(model: string): ModelCapabilities {
    return { ...anthropicCapabilities(model), ...this.#models[model] };
  }

  async *stream(request: ModelRequest, signal: AbortSignal): AsyncGenerator<ProviderEvent> {
    const client = this.#requireClient(signal);
    const body = this.#body(request);
    yield* streamWithWatchdog(
      {
        open: async (vendorSignal) => {
          const { data, response } = await client.messages.create({ ...body, stream: true }, { signal: vendorSignal }).withResponse();
          await refuseWholeBody(response, anthropicErrorBody);
          return data;
        },
        map: mapAnthropicStream,
        classify: toAnthropicProviderError,
      },
      { idleMs: this.#idleMs, setting: idleSetting(this.id), maxRetries: this.#maxRetries },
      signal,
    );
  }

  /**
   * Anthropic's own count (`POST /v1/messages/count_tokens`), with the same body a turn would send.
   * One attempt within countTimeoutMs: the engine falls back to its estimate when it fails, so SDK
   * retries and the SDK's ten-minute timeout would only hold the turn.
   */
  async countTokens(request: ModelRequest, signal: AbortSignal): Promise<number> {
    const client = this.#requireClient(signal);
    const { max_tokens: _max, ...body } = this.#body(request);
    try {
      const result = await withTimeLimit(countTimeoutMs(this.#idleMs), signal, 'the token count (messages/count_tokens)', (vendorSignal) =>
        client.messages.countTokens(body, { signal: vendorSignal, maxRetries: 0 }),
      );
      return result.input_tokens;
    } catch (err) {
      throw toAnthropicProviderError(err, signal);
    }
  }

  #body(request: ModelRequest) {
    return toAnthropicBody(request, this.capabilities(request.model), findAnthropicModel(request.model)?.thinkingStyle);
  }

  #requireClient(signal: AbortSignal): Anthropic {
    if (signal.aborted) throw new ProviderError('aborted', 'the request was cancelled');
    if (!this.#client) throw new ProviderError('auth', 'no Anthropic credential: set ANTHROPIC_API_KEY or providers.anthropic.apiKey in the troupe config');
    return this.#client;
  }
}
