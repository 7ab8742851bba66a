/**
 * The Anthropic adapter: Messages API streaming through `@anthropic-ai/sdk`.
 *
 * Retries: the SDK is the only layer that retries (429, 408, 409, 5xx, 529 and connection errors,
 * honouring `retry-after-ms` / `retry-after`), up to `maxRetries` times. Nothing above it retries the
 * same call again; an error that reaches troupe is final for that call.
 */
import Anthropic from '@anthropic-ai/sdk';
import { ProviderError, type ModelCapabilities, type ModelProvider, type ModelRequest, type ProviderEvent } from '../../core/provider.js';
import { toAnthropicProviderError } from './anthropic.errors.js';
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
  /** Retries the SDK makes on retryable failures. Default 2; tests use 0 to observe errors. */
  maxRetries?: number;
  /** Per-request timeout in milliseconds (the SDK default is 10 minutes). */
  timeoutMs?: number;
  /** Capability overrides per model name (from the config), applied over the catalogue. */
  models?: Record<string, Partial<ModelCapabilities>>;
}

export class AnthropicProvider implements ModelProvider {
  readonly id = 'anthropic';
  readonly #client: Anthropic | undefined;
  readonly #models: Record<string, Partial<ModelCapabilities>>;

  constructor(options: AnthropicProviderOptions) {
    this.#models = options.models ?? {};
    const credential = options.apiKey ? { apiKey: options.apiKey } : options.authToken ? { authToken: options.authToken } : undefined;
    // Without a credential the SDK would search profile files on disk; troupe reports a missing key instead.
    this.#client = credential
      ? new Anthropic({
          ...credential,
          baseURL: options.baseURL ?? null,
          maxRetries: options.maxRetries ?? 2,
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
    try {
      const events = await client.messages.create({ ...body, stream: true }, { signal });
      yield* mapAnthropicStream(events, signal);
    } catch (err) {
      throw toAnthropicProviderError(err, signal);
    }
  }

  /** Anthropic's own count (`POST /v1/messages/count_tokens`), with the same body a turn would send. */
  async countTokens(request: ModelRequest, signal: AbortSignal): Promise<number> {
    const client = this.#requireClient(signal);
    const { max_tokens: _max, ...body } = this.#body(request);
    try {
      const result = await client.messages.countTokens(body, { signal });
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
