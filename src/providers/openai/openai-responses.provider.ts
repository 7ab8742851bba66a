/**
 * The OpenAI adapter for `openai/<model>`: the Responses API, streamed, through the `openai` SDK.
 *
 * Retries: streamWithWatchdog (src/core/model-stream.ts) and nothing else, up to `maxRetries`
 * times: the request until its stream starts (429, 408, 409, 5xx and connection errors, honouring
 * `retry-after-ms` / `retry-after` up to a minute), then a stream that stalls or fails before any
 * event reached the caller, each retry announced (a `retry` event). The SDK's own retries are off
 * (until 2026-12-07 they did the first part): they were silent, a turn waiting out a rate limit
 * looked hung, and they sent a 429 `insufficient_quota` (a spent quota, which no wait cures) again
 * `maxRetries` times.
 */
import OpenAI from 'openai';
import { countTimeoutMs, DEFAULT_STREAM_IDLE_TIMEOUT_MS, idleSetting, streamWithWatchdog, withTimeLimit } from '../../core/model-stream.js';
import { ProviderError, type ModelCapabilities, type ModelProvider, type ModelRequest, type ProviderEvent } from '../../core/provider.js';
import { openaiCapabilities } from './models.js';
import { refuseWholeBody } from '../../core/whole-body.js';
import { openAIErrorBody, toOpenAIProviderError } from './openai.errors.js';
import { toResponsesBody } from './responses.request.js';
import { mapResponsesStream } from './responses.stream.js';

export interface OpenAIProviderOptions {
  /** OPENAI_API_KEY. */
  apiKey?: string;
  /** OPENAI_BASE_URL; the SDK default (https://api.openai.com/v1) when absent. */
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

export class OpenAIResponsesProvider implements ModelProvider {
  readonly id = 'openai';
  readonly #client: OpenAI | undefined;
  readonly #models: Record<string, Partial<ModelCapabilities>>;
  readonly #maxRetries: number;
  readonly #idleMs: number;

  constructor(options: OpenAIProviderOptions) {
    this.#models = options.models ?? {};
    this.#maxRetries = options.maxRetries ?? 2;
    this.#idleMs = options.streamIdleTimeoutMs ?? DEFAULT_STREAM_IDLE_TIMEOUT_MS;
    this.#client = options.apiKey
      ? new OpenAI({
          apiKey: options.apiKey,
          baseURL: options.baseURL ?? null,
          // One retry layer, troupe's (see the top of this file).
          maxRetries: 0,
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
    const capabilities = this.capabilities(request.model);
    const body = toResponsesBody(request, capabilities);
    // What a reply stopped for its length is read against (src/providers/openai/window-full.ts).
    const limits = { maxOutputTokens: body.max_output_tokens, contextWindow: capabilities.contextWindow };
    yield* streamWithWatchdog(
      {
        open: async (vendorSignal) => {
          const { data, response } = await client.responses.create({ ...body, stream: true }, { signal: vendorSignal }).withResponse();
          await refuseWholeBody(response, openAIErrorBody);
          return data;
        },
        map: (events, streamSignal) => mapResponsesStream(events, streamSignal, limits),
        classify: toOpenAIProviderError,
      },
      { idleMs: this.#idleMs, setting: idleSetting(this.id), maxRetries: this.#maxRetries },
      signal,
    );
  }

  /**
   * OpenAI's input-token count for a Responses request (`POST /v1/responses/input_tokens`). One
   * attempt within countTimeoutMs: the engine falls back to its estimate when it fails.
   */
  async countTokens(request: ModelRequest, signal: AbortSignal): Promise<number> {
    const client = this.#requireClient(signal);
    const { model, instructions, input, tools, reasoning } = toResponsesBody(request, this.capabilities(request.model));
    try {
      const result = await withTimeLimit(countTimeoutMs(this.#idleMs), signal, 'the token count (responses/input_tokens)', (vendorSignal) =>
        client.responses.inputTokens.count({ model, instructions, input, tools, reasoning }, { signal: vendorSignal, maxRetries: 0 }),
      );
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
