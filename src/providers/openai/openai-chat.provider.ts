/**
 * The adapter for `openai-compatible/<model>`: Chat Completions, streamed, through the `openai` SDK,
 * against the configured base URL (a local Ollama, vLLM, llama.cpp or LM Studio server, or any
 * OpenAI-compatible gateway). Model capabilities come from the troupe config, else a conservative default.
 *
 * Retries: streamWithWatchdog (src/core/model-stream.ts) and nothing else, up to `maxRetries`
 * times, by troupe's kinds: the request until its stream starts (429 but a spent quota, 408, 409,
 * 5xx but a full context, TGI's 424, connection errors), then a stream that stalls or fails before
 * any event reached the caller, each retry announced (a `retry` event). The SDK's own retries are
 * off, as in the Responses adapter: they were silent, and they went by the status alone.
 */
import OpenAI from 'openai';
import { DEFAULT_STREAM_IDLE_TIMEOUT_MS, idleSetting, streamWithWatchdog } from '../../core/model-stream.js';
import { ProviderError, type ModelCapabilities, type ModelProvider, type ModelRequest, type ProviderEvent } from '../../core/provider.js';
import { toChatBody } from './chat.request.js';
import { mapChatStream } from './chat.stream.js';
import { compatibleCapabilities } from './models.js';
import { refuseWholeBody } from '../../core/whole-body.js';
import { openAIErrorBody, toOpenAIProviderError } from './openai.errors.js';

export interface OpenAIChatProviderOptions {
  /** The server's base URL, including its `/v1` (e.g. http://127.0.0.1:11434/v1 for Ollama). */
  baseURL?: string;
  /** Most local servers ignore the key; the SDK still needs one, so a placeholder is sent. */
  apiKey?: string;
  maxRetries?: number;
  /** Timeout until the response starts, per attempt, in milliseconds (the SDK default is 10 minutes). */
  timeoutMs?: number;
  /** How long the stream may stay silent before it counts as stalled; 0 disables. Default 5 minutes. */
  streamIdleTimeoutMs?: number;
  /** Capabilities per model name, from the config; unknown names get COMPATIBLE_FALLBACK (compatibleCapabilities). */
  models?: Record<string, Partial<ModelCapabilities>>;
  /** The provider id (model id prefix). Default `openai-compatible`. */
  id?: string;
}

export class OpenAIChatProvider implements ModelProvider {
  readonly id: string;
  readonly #client: OpenAI | undefined;
  readonly #models: Record<string, Partial<ModelCapabilities>>;
  readonly #maxRetries: number;
  readonly #idleMs: number;
  readonly #baseURL: string | undefined;

  constructor(options: OpenAIChatProviderOptions) {
    this.id = options.id ?? 'openai-compatible';
    this.#models = options.models ?? {};
    this.#maxRetries = options.maxRetries ?? 2;
    this.#idleMs = options.streamIdleTimeoutMs ?? DEFAULT_STREAM_IDLE_TIMEOUT_MS;
    this.#baseURL = options.baseURL;
    this.#client = options.baseURL
      ? new OpenAI({
          apiKey: options.apiKey || 'not-needed',
          baseURL: options.baseURL,
          // One retry layer, troupe's (see the top of this file).
          maxRetries: 0,
          organization: null,
          project: null,
          ...(options.timeoutMs ? { timeout: options.timeoutMs } : {}),
        })
      : undefined;
  }

  capabilities(model: string): ModelCapabilities {
    return compatibleCapabilities(this.#models[model]);
  }

  async *stream(request: ModelRequest, signal: AbortSignal): AsyncGenerator<ProviderEvent> {
    if (signal.aborted) throw new ProviderError('aborted', 'the request was cancelled');
    if (!this.#client) {
      throw new ProviderError('invalid_request', 'no OpenAI-compatible server configured: set OPENAI_BASE_URL or providers["openai-compatible"].baseUrl in the troupe config');
    }
    const client = this.#client;
    const capabilities = this.capabilities(request.model);
    const body = toChatBody(request, capabilities, this.id, this.#baseURL);
    // What a reply stopped for its length is read against (src/providers/openai/window-full.ts).
    const limits = { maxOutputTokens: body.max_tokens ?? capabilities.maxOutputTokens, contextWindow: capabilities.contextWindow };
    yield* streamWithWatchdog(
      {
        open: async (vendorSignal) => {
          const { data, response } = await client.chat.completions.create(body, { signal: vendorSignal }).withResponse();
          await refuseWholeBody(response, openAIErrorBody);
          return data;
        },
        map: (chunks, streamSignal) => mapChatStream(chunks, streamSignal, this.id, limits),
        classify: toOpenAIProviderError,
      },
      { idleMs: this.#idleMs, setting: idleSetting(this.id), maxRetries: this.#maxRetries },
      signal,
    );
  }
}
