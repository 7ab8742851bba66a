// The delay a vendor asks for on a failure troupe sends again, whatever the failure, through each
// vendor's SDK against the replay server: OpenAI's `retry-after-ms` / `retry-after` on a 503 or on a
// 400 it marks `x-should-retry: true`, Anthropic's on a 529 overloaded_error, Gemini's RetryInfo on a
// 503 UNAVAILABLE. The retry waits that delay (the `retry` event's delayMs, which the session logs as
// model_retry's), not troupe's backoff (0.5 s and more, never 0 ms or 30 ms); a delay over the minute
// troupe waits at most ends the call at once with it, as a rate limit's does. Until 2026-12-07 only a
// rate limit's delay was read, and every other retry went by troupe's backoff.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { isProviderError, type ModelProvider, type ProviderEvent } from '../../../src/core/provider.js';
import { AnthropicProvider } from '../../../src/providers/anthropic/anthropic.provider.js';
import { GoogleProvider } from '../../../src/providers/google/google.provider.js';
import { OpenAIChatProvider } from '../../../src/providers/openai/openai-chat.provider.js';
import { OpenAIResponsesProvider } from '../../../src/providers/openai/openai-responses.provider.js';
import { fixture, startReplayServer, type ReplayServer, type ReplayStep } from '../../support/replay-server.js';
import { failure, request } from './provider-contract.js';

/** A replay server of the test's own: an answer one case left queued never reaches the next. */
async function serve(t: TestContext): Promise<ReplayServer> {
  const server = await startReplayServer();
  t.after(() => server.close());
  return server;
}

/** The stream's events, and each retry announced in it as [kind, status, attempt, delayMs]. */
async function retried(provider: ModelProvider, model: string): Promise<{ retries: [string, number | undefined, number, number][]; last: ProviderEvent | undefined }> {
  const events: ProviderEvent[] = [];
  for await (const e of provider.stream(request(model), new AbortController().signal)) events.push(e);
  return { retries: events.flatMap((e) => (e.type === 'retry' ? [[e.kind, e.status, e.attempt, e.delayMs] as [string, number | undefined, number, number]] : [])), last: events.at(-1) };
}

const openaiError = (status: number, headers: Record<string, string>): ReplayStep => ({
  status,
  headers,
  json: { error: { message: status >= 500 ? 'The server is overloaded, please try again later.' : 'Invalid value for the request.', type: status >= 500 ? 'server_error' : 'invalid_request_error', param: null, code: null } },
});

const openaiAdapters: [string, (server: ReplayServer) => ModelProvider, string, string][] = [
  ['openai', (server) => new OpenAIResponsesProvider({ apiKey: 'k', baseURL: `${server.url}/v1`, maxRetries: 2 }), 'gpt-5', 'openai-responses-text.sse'],
  ['openai-compatible', (server) => new OpenAIChatProvider({ baseURL: `${server.url}/v1`, maxRetries: 2 }), 'qwen3', 'openai-chat-text.sse'],
];

for (const [name, make, model, text] of openaiAdapters) {
  test(`${name}: a 503's retry-after-ms and a 400 with x-should-retry: true and retry-after: 0.02 are the retries' delays`, async (t) => {
    const server = await serve(t);
    server.enqueue(openaiError(503, { 'retry-after-ms': '30' }), openaiError(400, { 'x-should-retry': 'true', 'retry-after': '0.02' }), { sse: fixture(text) });
    const { retries, last } = await retried(make(server), model);
    assert.deepEqual(retries, [
      ['overloaded', 503, 2, 30],
      ['invalid_request', 400, 3, 20],
    ]);
    assert.equal(last?.type, 'stop');
    assert.equal(server.requests.length, 3);
  });

  test(`${name}: a 503 that asks for more than a minute ends the call at once, overloaded, with that delay`, async (t) => {
    const server = await serve(t);
    server.enqueue(openaiError(503, { 'retry-after': '120' }));
    const seen: ProviderEvent[] = [];
    const err = await failure(make(server), request(model), seen);
    assert.ok(isProviderError(err, 'overloaded') && err.retryAfterMs === 120_000, String(err));
    assert.deepEqual(seen, [], 'no retry announced');
    assert.equal(server.requests.length, 1);
  });
}

test('openai: a failure not sent again keeps no delay (a 400, and a 503 with x-should-retry: false), a rate limit keeps its own', async (t) => {
  const server = await serve(t);
  const provider = new OpenAIResponsesProvider({ apiKey: 'k', baseURL: `${server.url}/v1`, maxRetries: 2 });
  server.enqueue(openaiError(400, { 'retry-after-ms': '30' }));
  let err = await failure(provider, request('gpt-5'));
  assert.ok(isProviderError(err, 'invalid_request') && err.retryAfterMs === undefined, String(err));
  server.enqueue(openaiError(503, { 'retry-after-ms': '30', 'x-should-retry': 'false' }));
  err = await failure(provider, request('gpt-5'));
  assert.ok(isProviderError(err, 'overloaded') && err.retryAfterMs === undefined, String(err));
  server.enqueue({ status: 429, headers: { 'retry-after': '3600', 'x-should-retry': 'false' }, json: { error: { message: 'Rate limit reached.', type: 'requests', param: null, code: 'rate_limit_exceeded' } } });
  err = await failure(provider, request('gpt-5'));
  assert.ok(isProviderError(err, 'rate_limited') && err.retryAfterMs === 3_600_000, String(err));
  assert.equal(server.requests.length, 3, 'each once');
});

test("anthropic: a 529 overloaded_error's retry-after-ms and a 500's retry-after are the retries' delays", async (t) => {
  const server = await serve(t);
  const error = (type: string, message: string) => ({ type: 'error', error: { type, message } });
  server.enqueue(
    { status: 529, headers: { 'retry-after-ms': '25' }, json: error('overloaded_error', 'Overloaded') },
    { status: 500, headers: { 'retry-after': '0.02' }, json: error('api_error', 'Internal server error') },
    { sse: fixture('anthropic-text.sse') },
  );
  const { retries, last } = await retried(new AnthropicProvider({ apiKey: 'k', baseURL: server.url, maxRetries: 2 }), 'claude-sonnet-4-6');
  assert.deepEqual(retries, [
    ['overloaded', 529, 2, 25],
    ['overloaded', 500, 3, 20],
  ]);
  assert.equal(last?.type, 'stop');
  assert.equal(server.requests.length, 3);
});

test('anthropic: a 529 that asks for more than a minute ends the call at once, overloaded, with that delay', async (t) => {
  const server = await serve(t);
  server.enqueue({ status: 529, headers: { 'retry-after': '90' }, json: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } });
  const seen: ProviderEvent[] = [];
  const err = await failure(new AnthropicProvider({ apiKey: 'k', baseURL: server.url, maxRetries: 2 }), request('claude-sonnet-4-6'), seen);
  assert.ok(isProviderError(err, 'overloaded') && err.retryAfterMs === 90_000, String(err));
  assert.deepEqual(seen, []);
  assert.equal(server.requests.length, 1);
});

test("google: a 503 UNAVAILABLE's RetryInfo is the retry's delay", async (t) => {
  const server = await serve(t);
  const unavailable = {
    code: 503,
    message: 'The model is overloaded. Please try again later.',
    status: 'UNAVAILABLE',
    details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '0.02s' }],
  };
  server.enqueue({ status: 503, json: { error: unavailable } }, { sse: fixture('google-text.sse') });
  const { retries, last } = await retried(new GoogleProvider({ apiKey: 'AIza-test', baseURL: server.url, maxRetries: 2 }), 'gemini-2.5-flash');
  assert.deepEqual(retries, [['overloaded', 503, 2, 20]]);
  assert.equal(last?.type, 'stop');
  assert.equal(server.requests.length, 2);
});

// A delay of zero or less, a date already past, or words that are no delay ask for nothing a retry can
// wait: the retry waits troupe's backoff (its first: 375 to 500 ms), as the Anthropic SDK does, and a
// failure keeps no delay of 0 for the client. Until 2026-12-07 each was a delay of 0 ms: every retry
// was made at once, a tight loop of `maxRetries` requests on a server that had said it was overloaded.
const FIRST_BACKOFF: [number, number] = [375, 500];
const noDelay: Record<string, string>[] = [
  { 'retry-after': '0' },
  { 'retry-after-ms': '0' },
  { 'retry-after': '-3' },
  { 'retry-after-ms': '-250', 'retry-after': ' 0 ' },
  { 'retry-after': 'Wed, 21 Oct 2015 07:28:00 GMT' },
  { 'retry-after': 'soon' },
];

/** One retry of `failing` (answered twice), its delay, and the failure the call then ends with. */
async function afterNoDelay(t: TestContext, make: (server: ReplayServer) => ModelProvider, model: string, failing: ReplayStep): Promise<{ delays: number[]; err: unknown }> {
  const server = await serve(t);
  server.enqueue(failing, failing);
  const seen: ProviderEvent[] = [];
  const err = await failure(make(server), request(model), seen);
  assert.equal(server.requests.length, 2);
  return { delays: seen.flatMap((e) => (e.type === 'retry' ? [e.delayMs] : [])), err };
}

function assertBackoff(delays: number[], what: string): void {
  assert.equal(delays.length, 1, what);
  assert.ok(delays[0]! >= FIRST_BACKOFF[0] && delays[0]! <= FIRST_BACKOFF[1], `${what}: waited ${delays[0]} ms, not troupe's first backoff`);
}

const openaiAnswer = (status: number, headers: Record<string, string>): ReplayStep =>
  status === 429 ? { status, headers, json: { error: { message: 'Rate limit reached.', type: 'requests', param: null, code: 'rate_limit_exceeded' } } } : openaiError(status, headers);
const anthropicAnswer = (status: number, headers: Record<string, string>): ReplayStep => ({
  status,
  headers,
  json: { type: 'error', error: status === 429 ? { type: 'rate_limit_error', message: 'Rate limited' } : { type: 'overloaded_error', message: 'Overloaded' } },
});
const oneRetryAdapters: [string, (server: ReplayServer) => ModelProvider, string, number, (status: number, headers: Record<string, string>) => ReplayStep][] = [
  ['openai', (server) => new OpenAIResponsesProvider({ apiKey: 'k', baseURL: `${server.url}/v1`, maxRetries: 1 }), 'gpt-5', 503, openaiAnswer],
  ['openai-compatible', (server) => new OpenAIChatProvider({ baseURL: `${server.url}/v1`, maxRetries: 1 }), 'qwen3', 503, openaiAnswer],
  ['anthropic', (server) => new AnthropicProvider({ apiKey: 'k', baseURL: server.url, maxRetries: 1 }), 'claude-sonnet-4-6', 529, anthropicAnswer],
];

for (const [name, make, model, overloaded, answer] of oneRetryAdapters) {
  test(`${name}: a retry-after of 0, less, a past date or no number is no delay: the retry waits troupe's backoff, and the failure keeps none`, async (t) => {
    await Promise.all(
      noDelay.flatMap((headers) =>
        [overloaded, 429].map(async (status) => {
          const what = `${status} ${JSON.stringify(headers)}`;
          const { delays, err } = await afterNoDelay(t, make, model, answer(status, headers));
          assertBackoff(delays, what);
          assert.ok(isProviderError(err, status === 429 ? 'rate_limited' : 'overloaded') && err.retryAfterMs === undefined, `${what}: ${String(err)} keeps ${(err as { retryAfterMs?: number }).retryAfterMs}`);
        }),
      ),
    );
  });
}

test('openai: a retry-after-ms of 0 falls to the answer\'s retry-after', async (t) => {
  const server = await serve(t);
  server.enqueue(openaiError(503, { 'retry-after-ms': '0', 'retry-after': '0.03' }), { sse: fixture('openai-responses-text.sse') });
  const { retries } = await retried(new OpenAIResponsesProvider({ apiKey: 'k', baseURL: `${server.url}/v1`, maxRetries: 1 }), 'gpt-5');
  assert.deepEqual(retries, [['overloaded', 503, 2, 30]]);
});

test("google: a RetryInfo of 0s is no delay: the retry waits troupe's backoff, and a rate limit keeps no delay", async (t) => {
  const body = (code: number, status: string) => ({
    status: code,
    json: { error: { code, message: 'Try again.', status, details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '0s' }] } },
  });
  const make = (server: ReplayServer) => new GoogleProvider({ apiKey: 'AIza-test', baseURL: server.url, maxRetries: 1 });
  await Promise.all(
    [body(503, 'UNAVAILABLE'), body(429, 'RESOURCE_EXHAUSTED')].map(async (step) => {
      const { delays, err } = await afterNoDelay(t, make, 'gemini-2.5-flash', step);
      assertBackoff(delays, String(step.status));
      assert.ok(isProviderError(err) && err.retryAfterMs === undefined, String(err));
    }),
  );
});

test('openai: a rate limit whose words say "try again in 0s" is no delay: troupe\'s backoff, none kept', async (t) => {
  const step: ReplayStep = { status: 429, json: { error: { message: 'Rate limit reached for gpt-5. Please try again in 0s.', type: 'tokens', param: null, code: 'rate_limit_exceeded' } } };
  const { delays, err } = await afterNoDelay(t, (server) => new OpenAIResponsesProvider({ apiKey: 'k', baseURL: `${server.url}/v1`, maxRetries: 1 }), 'gpt-5', step);
  assertBackoff(delays, '429 in 0s');
  assert.ok(isProviderError(err, 'rate_limited') && err.retryAfterMs === undefined, String(err));
});
