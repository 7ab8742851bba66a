/**
 * The OpenAI adapter for `openai/<model>`: the Responses API, streamed, through the `openai` SDK.
 *
 * Retries: the SDK is the only layer that retries (429, 408, 409, 5xx and connection errors,
 * honouring `retry-after-ms` / `retry-after`), up to `maxRetries` times. Nothing above it retries.
 */
import OpenAI from 'openai';
import { ProviderError, type ModelCapabilities, type ModelProvider, type ModelRequest, type ProviderEvent } from '../../core/provider.js';
import { openaiCapabilities } from './models.js';
import { toOpenAIProviderError } from './openai.errors.js';
import { toResponsesBody } from './responses.request.js';
import { mapResponsesStream } from './responses.stream.js';

export interface OpenAIProviderOptions {
  /** OPENAI_API_KEY. */
  apiKey?: string;
  /** OPENAI_BASE_URL; the SDK default (https://api.openai.com/v1) when absent. */
  baseURL?: string;
  /** Retries the SDK makes on retryable failures. Default 2; tests use 0 to observe errors. */
  maxRetries?: number;
  /** Per-request timeout in milliseconds (the SDK default is 10 minutes). */
  timeoutMs?: number;
  /** Capability overrides per model name (from the config), applied over the catalogue. */
  models?: Record<string, Partial<ModelCapabilities>>;
}

export class OpenAIResponsesProvider implements ModelProvider {
  readonly id = 'openai';
  readonly #client: OpenAI | undefined;
  readonly #models: Record<string, Partial<ModelCapabilities>>;

  constructor(options: OpenAIProviderOptions) {
    this.#models = options.models ?? {};
    this.#client = options.apiKey
      ? new OpenAI({
          apiKey: options.apiKey,
          baseURL: options.baseURL ?? null,
          maxRetries: options.maxRetries ?? 2,
          organization: null,
          project: null,
          ...(options.timeoutMs ? { timeout: options.timeoutMs } : {}),
        })
      : undefined;
  }

  capabilities(model: string): ModelCapabilities {
    return { ...openaiCapabilities(model), ...this.#models[model] };
  }

  async *stream(request: ModelRequest, signal: AbortSignal): AsyncGenerator<ProviderEvent> {
    const client = this.#requireClient(signal);
    const body = toResponsesBody(request, this.capabilities(request.model));
    try {
      const events = await client.responses.create({ ...body, stream: true }, { signal });
      yield* mapResponsesStream(events, signal);
    } catch (err) {
      throw toOpenAIProviderError(err, signal);
    }
  }

  /** OpenAI's input-token count for a Responses request (`POST /v1/responses/input_tokens`). */
  async countTokens(request: ModelRequest, signal: AbortSignal): Promise<number> {
    const client = this.#requireClient(signal);
    const { model, instructions, input, tools, reasoning } = toResponsesBody(request, this.capabilities(request.model));
    try {
      const result = await client.responses.inputTokens.count({ model, instructions, input, tools, reasoning }, { signal });
      return result.input_tokens;
    } catch (err) {
      throw toOpenAIProviderError(err, signal);
    }
  }

  #requireClient(signal: AbortSignal): OpenAI {
    if (signal.aborted) throw new ProviderError('aborted', 'the request was cancelled');
    if (!this.#client) throw new ProviderError('auth', 'no OpenAI credential: set OPENAI_API_KEY or providers.openai.apiKey in the troupe config');
    return this.#client;
  }
}
