// The other shapes of a spent quota or credit, through the vendors' SDKs against the replay server:
// each ends the call at once as `quota_exceeded` (requested once, nothing announced as a retry),
// while a rate limit of the minute stays `rate_limited`. The shape every vendor shares is in the
// provider contract (provider-contract.ts).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { isProviderError, type ModelProvider, type ProviderEvent } from '../../../src/core/provider.js';
import { AnthropicProvider } from '../../../src/providers/anthropic/anthropic.provider.js';
import { GoogleProvider } from '../../../src/providers/google/google.provider.js';
import { OpenAIResponsesProvider } from '../../../src/providers/openai/openai-responses.provider.js';
import { fixture, sseEvents, startReplayServer, type ReplayServer, type ReplayStep } from '../../support/replay-server.js';
import { GEMINI_DAILY_QUOTA, OPENAI_QUOTA_WORDS } from '../../support/vendor-answers.js';
import { failure, request } from './provider-contract.js';

let server: ReplayServer;
before(async () => {
  server = await startReplayServer();
});
after(() => server.close());

/** Streams once with retries allowed; the failure, after exactly one request and no retry announced. */
async function failsAtOnce(provider: ModelProvider, model: string, step: ReplayStep): Promise<unknown> {
  const before = server.requests.length;
  server.enqueue(step);
  const seen: ProviderEvent[] = [];
  const err = await failure(provider, request(model), seen);
  assert.deepEqual(seen.filter((e) => e.type === 'retry'), [], 'no retry announced');
  assert.equal(server.requests.length - before, 1, 'requested exactly once');
  return err;
}

test('openai: a response that fails insufficient_quota mid-stream (response.failed) is quota_exceeded, not retried', async () => {
  const head = sseEvents(fixture('openai-responses-text.sse')).slice(0, 2).join('');
  const failed = {
    type: 'response.failed',
    sequence_number: 2,
    response: { id: 'resp_1', object: 'response', status: 'failed', error: { code: 'insufficient_quota', message: OPENAI_QUOTA_WORDS }, output: [], usage: null },
  };
  const provider = new OpenAIResponsesProvider({ apiKey: 'k', baseURL: `${server.url}/v1`, maxRetries: 2 });
  const err = await failsAtOnce(provider, 'gpt-5', { sse: `${head}event: response.failed\ndata: ${JSON.stringify(failed)}\n\n` });
  assert.ok(isProviderError(err, 'quota_exceeded') && err.vendorMessage === OPENAI_QUOTA_WORDS && /insufficient_quota/.test(err.explanation ?? ''), String(err));
});

test("anthropic: a 402 billing_error is quota_exceeded, in troupe's words", async () => {
  const words = 'Your organization has reached its monthly spend limit.';
  const provider = new AnthropicProvider({ apiKey: 'k', baseURL: server.url, maxRetries: 2 });
  const err = await failsAtOnce(provider, 'claude-sonnet-4-6', { status: 402, json: { type: 'error', error: { type: 'billing_error', message: words } } });
  assert.ok(isProviderError(err, 'quota_exceeded') && err.status === 402 && err.vendorMessage === words && /Plans & Billing/.test(err.explanation ?? ''), String(err));
});

test('google: a model with no quota on the key\'s tier ("limit: 0") is quota_exceeded, though Gemini says when to retry', async () => {
  // Gemini's words for gemini-2.5-pro on the free tier (continuedev/continue#10062), with its RetryInfo.
  const words =
    'You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits. To monitor your current usage, head to: https://ai.dev/rate-limit. \n' +
    '* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_input_token_count, limit: 0, model: gemini-2.5-pro\n' +
    '* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 0, model: gemini-2.5-pro\n' +
    'Please retry in 20.04466179s.';
  const body = {
    error: {
      code: 429,
      message: words,
      status: 'RESOURCE_EXHAUSTED',
      details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '0.005s' }],
    },
  };
  const provider = new GoogleProvider({ apiKey: 'k', baseURL: server.url, maxRetries: 2 });
  const err = await failsAtOnce(provider, 'gemini-2.5-pro', { status: 429, json: body });
  assert.ok(isProviderError(err, 'quota_exceeded') && err.vendorMessage === words, String(err));
});

test('google: a 429 whose QuotaFailure names only per-minute quotas stays rate_limited and is retried', async () => {
  const perMinute = structuredClone(GEMINI_DAILY_QUOTA.json) as { error: { details: { violations?: { quotaId: string }[] }[] } };
  const failureDetail = perMinute.error.details[0]!;
  failureDetail.violations = failureDetail.violations!.filter((v) => !v.quotaId.includes('PerDay'));
  const before = server.requests.length;
  server.enqueue({ status: 429, json: perMinute }, { sse: fixture('google-text.sse') });
  const provider = new GoogleProvider({ apiKey: 'k', baseURL: server.url, maxRetries: 1 });
  const events: ProviderEvent[] = [];
  for await (const e of provider.stream(request('gemini-2.5-pro'), new AbortController().signal)) events.push(e);
  assert.deepEqual(events[0], { type: 'retry', kind: 'rate_limited', status: 429, vendorMessage: (GEMINI_DAILY_QUOTA.json as { error: { message: string } }).error.message, attempt: 2, attempts: 2, delayMs: 5 });
  assert.deepEqual(events.at(-1), { type: 'stop', reason: 'end_turn' });
  assert.equal(server.requests.length - before, 2);
});
