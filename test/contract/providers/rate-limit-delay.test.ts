// A 429 that names its wait only in its message (no retry-after header), through the openai SDK.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { isProviderError } from '../../../src/core/provider.js';
import { delayInMessage } from '../../../src/providers/openai/openai.errors.js';
import { OpenAIChatProvider } from '../../../src/providers/openai/openai-chat.provider.js';
import { OpenAIResponsesProvider } from '../../../src/providers/openai/openai-responses.provider.js';
import { AnthropicProvider } from '../../../src/providers/anthropic/anthropic.provider.js';
import { fixture, sseEvents, startReplayServer, type ReplayServer } from '../../support/replay-server.js';
import { collect, request } from './provider-contract.js';

let server: ReplayServer;
before(async () => {
  server = await startReplayServer();
});
after(() => server.close());

const tpm =
  'Rate limit reached for gpt-5 in organization org-abc on tokens per min (TPM): Limit 30000, Used 29000, Requested 2000. Please try again in 2.5s. Visit https://platform.openai.com/account/rate-limits to learn more.';

test('openai: a 429 whose message says "Please try again in 2.5s" carries retryAfterMs 2500', async () => {
  server.enqueue({ status: 429, json: { error: { message: tpm, type: 'tokens', param: null, code: 'rate_limit_exceeded' } } });
  const provider = new OpenAIResponsesProvider({ apiKey: 'k', baseURL: `${server.url}/v1`, maxRetries: 0 });
  await assert.rejects(collect(provider, request('gpt-5')), (err) => isProviderError(err, 'rate_limited') && err.retryAfterMs === 2500);
});

test('openai-compatible: Groq words it "Please try again in 7m54.336s"', async () => {
  const groq = 'Rate limit reached for model `llama-3.3-70b-versatile` on tokens per day (TPD): Limit 100000, Used 99500. Please try again in 7m54.336s.';
  server.enqueue({ status: 429, json: { error: { message: groq, type: 'tokens', code: 'rate_limit_exceeded' } } });
  const provider = new OpenAIChatProvider({ baseURL: `${server.url}/openai/v1`, maxRetries: 0 });
  await assert.rejects(collect(provider, request('llama-3.3-70b-versatile')), (err) => isProviderError(err, 'rate_limited') && err.retryAfterMs === 474_336);
});

test('openai: a response that fails rate_limit_exceeded mid-stream (response.failed) carries the wait its message names', async () => {
  const head = sseEvents(fixture('openai-responses-text.sse')).slice(0, 2).join('');
  const failed = {
    type: 'response.failed',
    sequence_number: 2,
    response: { id: 'resp_1', object: 'response', status: 'failed', error: { code: 'rate_limit_exceeded', message: tpm }, output: [], usage: null },
  };
  server.enqueue({ sse: `${head}event: response.failed\ndata: ${JSON.stringify(failed)}\n\n` });
  const provider = new OpenAIResponsesProvider({ apiKey: 'k', baseURL: `${server.url}/v1`, maxRetries: 0 });
  await assert.rejects(collect(provider, request('gpt-5')), (err) => isProviderError(err, 'rate_limited') && err.retryAfterMs === 2500);
});

test('a retry-after header wins over the message', async () => {
  server.enqueue({ status: 429, headers: { 'retry-after': '9' }, json: { error: { message: tpm, type: 'tokens', code: 'rate_limit_exceeded' } } });
  const provider = new OpenAIResponsesProvider({ apiKey: 'k', baseURL: `${server.url}/v1`, maxRetries: 0 });
  await assert.rejects(collect(provider, request('gpt-5')), (err) => isProviderError(err, 'rate_limited') && err.retryAfterMs === 9000);
});

test('anthropic: a 429 that asks for an hour ends the call rate_limited with that delay, after one request, with retries allowed', async () => {
  // The SDK (1.x) waited out any retry-after: the turn sat silent until the stall watchdog cut it
  // (here after 1 s, by default 5 minutes, once per retry) and ended as a stalled stream.
  const quota = { type: 'error', error: { type: 'rate_limit_error', message: 'You have reached your daily token limit.' } };
  const before = server.requests.length;
  server.enqueue({ status: 429, headers: { 'retry-after': '3600' }, json: quota });
  const provider = new AnthropicProvider({ apiKey: 'k', baseURL: server.url, maxRetries: 2, streamIdleTimeoutMs: 1000 });
  await assert.rejects(collect(provider, request('claude-sonnet-4-6')), (err) => isProviderError(err, 'rate_limited') && err.retryAfterMs === 3_600_000);
  assert.equal(server.requests.length - before, 1);
});

test('anthropic: a 408 and a 409 are retried, as the SDK retried them, then the stream is read', async () => {
  const before = server.requests.length;
  const timedOut = { type: 'error', error: { type: 'request_timeout_error', message: 'Request timed out' } };
  const conflict = { type: 'error', error: { type: 'conflict_error', message: 'lock timeout' } };
  server.enqueue({ status: 408, json: timedOut }, { status: 409, json: conflict }, { sse: fixture('anthropic-text.sse') });
  const provider = new AnthropicProvider({ apiKey: 'k', baseURL: server.url, maxRetries: 2 });
  const events = await collect(provider, request('claude-sonnet-4-6'));
  assert.equal(events.at(-1)?.type, 'stop');
  assert.equal(server.requests.length - before, 3);
});

test('openai: a 408 and a 409 are retried by troupe, as the SDK retried them before its retries were turned off, each announced', async () => {
  const before = server.requests.length;
  server.enqueue(
    { status: 408, json: { error: { message: 'Request timed out.', type: 'timeout', param: null, code: null } } },
    { status: 409, json: { error: { message: 'There was a conflict.', type: 'conflict', param: null, code: null } } },
    { sse: fixture('openai-responses-text.sse') },
  );
  const provider = new OpenAIResponsesProvider({ apiKey: 'k', baseURL: `${server.url}/v1`, maxRetries: 2 });
  const events = await collect(provider, request('gpt-5'));
  assert.deepEqual(
    events.flatMap((e) => (e.type === 'retry' ? [[e.kind, e.status, e.attempt]] : [])),
    [
      ['network', 408, 2],
      ['overloaded', 409, 3],
    ],
  );
  assert.equal(events.at(-1)?.type, 'stop');
  assert.equal(server.requests.length - before, 3);
});

test('the wordings a rate limit uses', () => {
  assert.equal(delayInMessage('Please try again in 345ms.'), 345);
  assert.equal(delayInMessage('Please try again in 1m30s.'), 90_000);
  assert.equal(delayInMessage('Please try again in 6m0s.'), 360_000);
  assert.equal(delayInMessage('Please try again in 1h2m3s.'), 3_723_000);
  assert.equal(delayInMessage('Requests to the ChatCompletions_Create Operation have exceeded the rate limit. Please retry after 20 seconds.'), 20_000);
  assert.equal(delayInMessage('You exceeded your current quota, please check your plan and billing details.'), undefined);
});
