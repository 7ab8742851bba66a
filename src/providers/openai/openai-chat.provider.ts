/**
 * The adapter for `openai-compatible/<model>`: Chat Completions, streamed, through the `openai` SDK,
 * against the configured base URL (a local Ollama, vLLM, llama.cpp or LM Studio server, or any
 * OpenAI-compatible gateway). Model capabilities come from the troupe config, else a conservative default.
 *
 * Retries: the SDK is the only layer that retries (429, 408, 409, 5xx, connection errors, honouring
 * `retry-after`), up to `maxRetries` times. Nothing above it retries.
 */
import OpenAI from 'openai';
import { ProviderError, type ModelCapabilities, type ModelProvider, type ModelRequest, type ProviderEvent } from '../../core/provider.js';
import { toChatBody } from './chat.request.js';
import { mapChatStream } from './chat.stream.js';
import { COMPATIBLE_FALLBACK } from './models.js';
import { toOpenAIProviderError } from './openai.errors.js';

export interface OpenAIChatProviderOptions {
  /** The server's base URL, including its `/v1` (e.g. http://127.0.0.1:11434/v1 for Ollama). */
  baseURL?: string;
  /** Most local servers ignore the key; the SDK still needs one, so a placeholder is sent. */
  apiKey?: string;
  maxRetries?: number;
  timeoutMs?: number;
  /** Capabilities per model name, from the config; unknown names get COMPATIBLE_FALLBACK. */
  models?: Record<string, Partial<ModelCapabilities>>;
  /** The provider id (model id prefix). Default `openai-compatible`. */
  id?: string;
}

export class OpenAIChatProvider implements ModelProvider {
  readonly id: string;
  readonly #client: OpenAI | undefined;
  readonly #models: Record<string, Partial<ModelCapabilities>>;

  constructor(options: OpenAIChatProviderOptions) {
    this.id = options.id ?? 'openai-compatible';
    this.#models = options.models ?? {};
    this.#client = options.baseURL
      ? new OpenAI({
          apiKey: options.apiKey || 'not-needed',
          baseURL: options.baseURL,
          maxRetries: options.maxRetries ?? 2,
          organization: null,
          project: null,
          ...(options.timeoutMs ? { timeout: options.timeoutMs } : {}),
        })
      : undefined;
  }

  capabilities(model: string): ModelCapabilities {
    return { ...COMPATIBLE_FALLBACK, ...this.#models[model] };
  }

  async *stream(request: ModelRequest, signal: AbortSignal): AsyncGenerator<ProviderEvent> {
    if (signal.aborted) throw new ProviderError('aborted', 'the request was cancelled');
    if (!this.#client) {
      throw new ProviderError('invalid_request', 'no OpenAI-compatible server configured: set OPENAI_BASE_URL or providers["openai-compatible"].baseUrl in the troupe config');
    }
    const body = toChatBody(request, this.capabilities(request.model));
    try {
      const chunks = await this.#client.chat.completions.create(body, { signal });
      yield* mapChatStream(chunks, signal);
    } catch (err) {
      throw toOpenAIProviderError(err, signal);
    }
  }
}
