// A 200 whose body is one whole document (JSON, an HTML page) where an event stream was asked for,
// through each SDK-based adapter and the replay server: the failure says what answered, at which
// URL, with the server's words, and is of its own kind; it is not a broken stream retried as one.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { isProviderError, type ModelProvider } from '../../../src/core/provider.js';
import { AnthropicProvider } from '../../../src/providers/anthropic/anthropic.provider.js';
import { OpenAIChatProvider } from '../../../src/providers/openai/openai-chat.provider.js';
import { OpenAIResponsesProvider } from '../../../src/providers/openai/openai-responses.provider.js';
import { fixture, startReplayServer, type ReplayServer } from '../../support/replay-server.js';
import { collect, request } from './provider-contract.js';

let server: ReplayServer;
before(async () => {
  server = await startReplayServer();
});
after(() => server.close());

// Retries allowed, as by default: a whole body must not be sent for again.
const adapters: { name: string; model: string; make(url: string): ModelProvider; path: string; answer: string }[] = [
  { name: 'anthropic', model: 'claude-haiku-4-5', make: (url) => new AnthropicProvider({ apiKey: 'k', baseURL: url, maxRetries: 2 }), path: '/v1/messages', answer: fixture('anthropic-text.sse') },
  { name: 'openai', model: 'gpt-5', make: (url) => new OpenAIResponsesProvider({ apiKey: 'k', baseURL: `${url}/v1`, maxRetries: 2 }), path: '/v1/responses', answer: fixture('openai-responses-text.sse') },
  { name: 'openai-compatible', model: 'qwen3-coder', make: (url) => new OpenAIChatProvider({ baseURL: `${url}/v1`, maxRetries: 2 }), path: '/v1/chat/completions', answer: fixture('openai-chat-text.sse') },
];

async function failureOf(provider: ModelProvider, model: string) {
  const sent = server.requests.length;
  const err = await collect(provider, request(model)).then(
    () => assert.fail('the call succeeded'),
    (e: unknown) => e,
  );
  return { err, requests: server.requests.length - sent };
}

for (const a of adapters) {
  test(`${a.name}: an HTML page with HTTP 200 is told as a page at its URL, once, not retried as a broken stream`, async () => {
    server.enqueue({ status: 200, contentType: 'text/html; charset=utf-8', text: '<!doctype html><html><head><title>Vite App</title></head><body><div id="app"></div></body></html>' }, { sse: a.answer });
    const { err, requests } = await failureOf(a.make(server.url), a.model);
    assert.ok(isProviderError(err, 'invalid_request'), String(err));
    assert.equal(requests, 1);
    assert.match(err.explanation ?? '', new RegExp(`^http://127\\.0\\.0\\.1:\\d+${a.path} answered with HTTP 200 and an HTML page \\("Vite App"\\), not the API's answer`));
    // A retry would have taken the stream queued after it, and succeeded: it is still there.
    await collect(a.make(server.url), request(a.model));
  });

  test(`${a.name}: the whole reply as JSON with HTTP 200 (a server that does not stream) is told so, once`, async () => {
    server.enqueue({ status: 200, json: { id: 'x', object: 'reply', text: 'Hi there' } }, { sse: a.answer });
    const { err, requests } = await failureOf(a.make(server.url), a.model);
    assert.ok(isProviderError(err, 'invalid_request'), String(err));
    assert.equal(requests, 1);
    assert.match(err.explanation ?? '', /answered with HTTP 200 and one JSON document, not the event stream asked for: the server does not stream.*It said: \{"id":"x"/);
    await collect(a.make(server.url), request(a.model));
  });
}

test('openai-compatible: LM Studio\'s answer to a base URL without /v1 (HTTP 200, {"error": "Unexpected endpoint or method. …"}) is its words at its URL, a refused request, once', async () => {
  // LM Studio answers every path it does not serve so (lmstudio-bug-tracker#618).
  server.enqueue({ status: 200, contentType: 'application/json; charset=utf-8', text: '{"error":"Unexpected endpoint or method. (POST /chat/completions)"}' });
  const { err, requests } = await failureOf(new OpenAIChatProvider({ baseURL: server.url, maxRetries: 2 }), 'qwen3-coder');
  assert.ok(isProviderError(err, 'invalid_request'), String(err));
  assert.equal(requests, 1);
  assert.equal(err.vendorMessage, 'Unexpected endpoint or method. (POST /chat/completions)');
  assert.match(err.explanation ?? '', /^http:\/\/127\.0\.0\.1:\d+\/chat\/completions answered with HTTP 200 and an error where an event stream was asked for: Unexpected endpoint or method\. \(POST \/chat\/completions\)$/);
});

test('anthropic: an error in Anthropic\'s shape with HTTP 200 keeps its kind (overloaded_error is overloaded)', async () => {
  server.enqueue({ status: 200, json: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } });
  const { err } = await failureOf(new AnthropicProvider({ apiKey: 'k', baseURL: server.url, maxRetries: 0 }), 'claude-haiku-4-5');
  assert.ok(isProviderError(err, 'overloaded'), String(err));
  assert.equal(err.vendorMessage, 'Overloaded');
});

test('a stream labelled text/plain (a server that mislabels its events) is still read as a stream', async () => {
  server.enqueue({ sse: fixture('openai-chat-text.sse'), headers: { 'content-type': 'text/plain' } });
  const events = await collect(new OpenAIChatProvider({ baseURL: `${server.url}/v1`, maxRetries: 0 }), request('qwen3-coder'));
  assert.deepEqual(events.at(-1), { type: 'stop', reason: 'end_turn' });
});

test('server-sent events labelled application/json (a server that mislabels its stream) are still read as the stream they are', async () => {
  server.enqueue({ sse: fixture('openai-chat-text.sse'), headers: { 'content-type': 'application/json' } });
  const events = await collect(new OpenAIChatProvider({ baseURL: `${server.url}/v1`, maxRetries: 0 }), request('qwen3-coder'));
  assert.equal(events.filter((e) => e.type === 'text_delta').map((e) => (e as { text: string }).text).join(''), 'Hello! How can I help you today?');
  assert.deepEqual(events.at(-1), { type: 'stop', reason: 'end_turn' });
});
