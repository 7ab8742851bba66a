// A model id the vendor does not know: each vendor answers 404 in its own words, and the turn should
// end with troupe's model_not_found (spec/errors.md), not the catch-all provider_invalid_request. A
// 404 that does not name a model (a wrong base URL) stays invalid_request.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { isProviderError } from '../../../src/core/provider.js';
import { AnthropicProvider } from '../../../src/providers/anthropic/anthropic.provider.js';
import { OpenAIResponsesProvider } from '../../../src/providers/openai/openai-responses.provider.js';
import { OpenAIChatProvider } from '../../../src/providers/openai/openai-chat.provider.js';
import { GoogleProvider } from '../../../src/providers/google/google.provider.js';
import { resolveModel } from '../../../src/providers/registry.js';
import { startReplayServer, type ReplayServer } from '../../support/replay-server.js';
import { collect, request } from './provider-contract.js';

let server: ReplayServer;
before(async () => {
  server = await startReplayServer();
});
after(() => server.close());

const kindOf = async (provider: { stream: OpenAIChatProvider['stream'] }, model: string) => {
  try {
    await collect(provider as OpenAIChatProvider, request(model));
  } catch (err) {
    assert.ok(isProviderError(err), String(err));
    return [err.kind, err.vendorMessage];
  }
  assert.fail('the call should have failed');
};

test('anthropic: 404 not_found_error "model: …" is model_not_found', async () => {
  const provider = new AnthropicProvider({ apiKey: 'k', baseURL: server.url, maxRetries: 0 });
  server.enqueue({ status: 404, json: { type: 'error', error: { type: 'not_found_error', message: 'model: claude-nope-9' }, request_id: 'req_1' } });
  assert.deepEqual(await kindOf(provider, 'claude-nope-9'), ['model_not_found', 'model: claude-nope-9']);
  server.enqueue({ status: 404, json: { type: 'error', error: { type: 'not_found_error', message: 'Not Found' } } });
  assert.deepEqual(await kindOf(provider, 'claude-haiku-4-5'), ['invalid_request', 'Not Found']);
});

test('anthropic: a turn on a model Anthropic retired (in the catalogue until 2026-12-06) ends model_not_found naming it', async () => {
  const resolved = resolveModel('anthropic/claude-sonnet-4-5', { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: server.url }, {});
  server.enqueue({ status: 404, json: { type: 'error', error: { type: 'not_found_error', message: 'model: claude-sonnet-4-5' }, request_id: 'req_2' } });
  assert.deepEqual(await kindOf(resolved.provider as OpenAIChatProvider, resolved.model), ['model_not_found', 'model: claude-sonnet-4-5']);
  assert.equal(server.requests.at(-1)!.body.model, 'claude-sonnet-4-5');
});

test('openai: 404 code model_not_found is model_not_found', async () => {
  const provider = new OpenAIResponsesProvider({ apiKey: 'k', baseURL: `${server.url}/v1`, maxRetries: 0 });
  const message = 'The model `gpt-nope` does not exist or you do not have access to it.';
  server.enqueue({ status: 404, json: { error: { message, type: 'invalid_request_error', param: null, code: 'model_not_found' } } });
  assert.deepEqual(await kindOf(provider, 'gpt-nope'), ['model_not_found', message]);
  server.enqueue({ status: 404, json: { error: { message: 'Invalid URL (POST /v1/v1/responses)', type: 'invalid_request_error', param: null, code: null } } });
  assert.deepEqual(await kindOf(provider, 'gpt-5'), ['invalid_request', 'Invalid URL (POST /v1/v1/responses)']);
});

test('openai-compatible: a 404 saying the model is not found (Ollama, vLLM) is model_not_found', async () => {
  const provider = new OpenAIChatProvider({ baseURL: `${server.url}/v1`, maxRetries: 0 });
  const ollama = 'model "qwen9" not found, try pulling it first';
  server.enqueue({ status: 404, json: { error: { message: ollama, type: 'api_error', param: null, code: null } } });
  assert.deepEqual(await kindOf(provider, 'qwen9'), ['model_not_found', ollama]);
  const vllm = 'The model `qwen9` does not exist.';
  server.enqueue({ status: 404, json: { error: { message: vllm, type: 'NotFoundError', param: null, code: 404 } } });
  assert.deepEqual(await kindOf(provider, 'qwen9'), ['model_not_found', vllm]);
});

test('google: 404 NOT_FOUND naming models/… is model_not_found', async () => {
  const provider = new GoogleProvider({ apiKey: 'k', baseURL: server.url, maxRetries: 0 });
  const message = 'models/gemini-nope is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.';
  server.enqueue({ status: 404, json: { error: { code: 404, message, status: 'NOT_FOUND' } } });
  assert.deepEqual(await kindOf(provider, 'gemini-nope'), ['model_not_found', message]);
});
