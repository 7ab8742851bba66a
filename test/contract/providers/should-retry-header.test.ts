// The `x-should-retry` header on an error answer (OpenAI's and Anthropic's), through the real SDKs
// against the replay server: the server's word on whether the same request may succeed, which the SDK obeyed before its
// own retries were turned off (6fa4021) and troupe's retry layer now obeys as it did (client.js
// shouldRetry: exactly `true` or `false`, over the status). `false`: never sent again, whatever the
// status; `true`: sent again even when the status alone would not be; absent: the status decides.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { isProviderError, type ModelProvider, type ProviderEvent } from '../../../src/core/provider.js';
import { AnthropicProvider } from '../../../src/providers/anthropic/anthropic.provider.js';
import { OpenAIChatProvider } from '../../../src/providers/openai/openai-chat.provider.js';
import { OpenAIResponsesProvider } from '../../../src/providers/openai/openai-responses.provider.js';
import { fixture, startReplayServer, type ReplayServer, type ReplayStep } from '../../support/replay-server.js';
import { OPENAI_INSUFFICIENT_QUOTA } from '../../support/vendor-answers.js';
import { failure, request } from './provider-contract.js';

/** A replay server of the test's own: an answer one case left queued never reaches the next. */
async function serve(t: TestContext): Promise<ReplayServer> {
  const server = await startReplayServer();
  t.after(() => server.close());
  return server;
}

const OVERLOADED = 'The server is overloaded, please try again later.';
const BAD = 'Invalid value for the request.';
type ErrorAnswer = (status: number, message: string, shouldRetry?: string) => ReplayStep;
const withHeader = (shouldRetry: string | undefined) => (shouldRetry === undefined ? {} : { headers: { 'x-should-retry': shouldRetry } });
const openaiError: ErrorAnswer = (status, message, shouldRetry) => ({
  status,
  ...withHeader(shouldRetry),
  json: { error: { message, type: status >= 500 ? 'server_error' : 'invalid_request_error', param: null, code: null } },
});
const anthropicError: ErrorAnswer = (status, message, shouldRetry) => ({
  status,
  ...withHeader(shouldRetry),
  json: { type: 'error', error: { type: status >= 500 ? 'api_error' : 'invalid_request_error', message } },
});

const adapters: [string, (server: ReplayServer, maxRetries: number) => ModelProvider, string, string, ErrorAnswer][] = [
  ['openai', (server, maxRetries) => new OpenAIResponsesProvider({ apiKey: 'k', baseURL: `${server.url}/v1`, maxRetries }), 'gpt-5', 'openai-responses-text.sse', openaiError],
  ['openai-compatible', (server, maxRetries) => new OpenAIChatProvider({ baseURL: `${server.url}/v1`, maxRetries }), 'qwen3', 'openai-chat-text.sse', openaiError],
  ['anthropic', (server, maxRetries) => new AnthropicProvider({ apiKey: 'k', baseURL: server.url, maxRetries }), 'claude-sonnet-4-6', 'anthropic-text.sse', anthropicError],
];

for (const [name, make, model, text, error] of adapters) {
  test(`${name}: a 503 with x-should-retry: false is not sent again (overloaded, one request, no retry announced)`, async (t) => {
    const server = await serve(t);
    const before = server.requests.length;
    server.enqueue(error(503, OVERLOADED, 'false'));
    const seen: ProviderEvent[] = [];
    const err = await failure(make(server, 2), request(model), seen);
    assert.ok(isProviderError(err, 'overloaded') && err.status === 503 && err.vendorMessage === OVERLOADED, String(err));
    assert.deepEqual(seen.filter((e) => e.type === 'retry'), [], 'no retry announced');
    assert.equal(server.requests.length - before, 1, 'requested exactly once');
  });

  test(`${name}: a 400 with x-should-retry: true is sent again, announced, and its reply streams`, async (t) => {
    const server = await serve(t);
    const before = server.requests.length;
    server.enqueue(error(400, BAD, 'true'), { sse: fixture(text) });
    const events: ProviderEvent[] = [];
    for await (const e of make(server, 1).stream(request(model), new AbortController().signal)) events.push(e);
    const retry = events[0] as Extract<ProviderEvent, { type: 'retry' }>;
    assert.deepEqual([retry.type, retry.kind, retry.status, retry.vendorMessage, retry.attempt, retry.attempts], ['retry', 'invalid_request', 400, BAD, 2, 2]);
    assert.equal(events.at(-1)?.type, 'stop');
    assert.equal(server.requests.length - before, 2, 'requested twice');
  });

  test(`${name}: without x-should-retry (or with another value) the status decides: a 400 once, a 503 again`, async (t) => {
    const server = await serve(t);
    for (const shouldRetry of [undefined, 'TRUE', '1']) {
      const before = server.requests.length;
      server.enqueue(error(400, BAD, shouldRetry));
      const err = await failure(make(server, 2), request(model));
      assert.ok(isProviderError(err, 'invalid_request'), String(err));
      assert.equal(server.requests.length - before, 1, `x-should-retry ${shouldRetry}: requested once`);
    }
    const before = server.requests.length;
    server.enqueue(error(503, OVERLOADED, 'False'), { sse: fixture(text) });
    const events: ProviderEvent[] = [];
    for await (const e of make(server, 1).stream(request(model), new AbortController().signal)) events.push(e);
    assert.deepEqual([events[0]?.type, events.at(-1)?.type], ['retry', 'stop']);
    assert.equal(server.requests.length - before, 2);
  });
}

test('openai: x-should-retry: true does not make a spent quota or an overflowing prompt worth sending again (each once)', async (t) => {
  const server = await serve(t);
  const provider = new OpenAIResponsesProvider({ apiKey: 'k', baseURL: `${server.url}/v1`, maxRetries: 2 });
  const overflow: ReplayStep = { status: 400, json: { error: { message: 'Your input exceeds the context window of this model.', type: 'invalid_request_error', param: 'input', code: 'context_length_exceeded' } } };
  for (const [kind, step] of [['quota_exceeded', OPENAI_INSUFFICIENT_QUOTA], ['context_overflow', overflow]] as const) {
    const before = server.requests.length;
    server.enqueue({ ...step, headers: { ...step.headers, 'x-should-retry': 'true' } });
    const seen: ProviderEvent[] = [];
    const err = await failure(provider, request('gpt-5'), seen);
    assert.ok(isProviderError(err, kind), String(err));
    assert.deepEqual(seen.filter((e) => e.type === 'retry'), [], `${kind}: no retry announced`);
    assert.equal(server.requests.length - before, 1, `${kind}: requested once`);
  }
});

test('openai-compatible: an error inside a stream that started with a 200 carrying x-should-retry: true goes by its kind (not sent again)', async (t) => {
  // The SDK read the header only on an HTTP error answer, never on an error inside a 200's stream.
  const server = await serve(t);
  const before = server.requests.length;
  const bad = { error: { message: BAD, type: 'invalid_request_error', param: null, code: null } };
  server.enqueue({ headers: { 'x-should-retry': 'true' }, sse: `data: ${JSON.stringify(bad)}\n\n` });
  const seen: ProviderEvent[] = [];
  const err = await failure(new OpenAIChatProvider({ baseURL: `${server.url}/v1`, maxRetries: 2 }), request('qwen3'), seen);
  assert.ok(isProviderError(err, 'invalid_request'), String(err));
  assert.deepEqual(seen.filter((e) => e.type === 'retry'), []);
  assert.equal(server.requests.length - before, 1);
});
