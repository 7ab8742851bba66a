// The Gemini adapter through @google/genai (streamGenerateContent?alt=sse) against the replay server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isProviderError } from '../../../src/core/provider.js';
import { GoogleProvider } from '../../../src/providers/google/google.provider.js';
import { fixture, startReplayServer } from '../../support/replay-server.js';
import { GEMINI_DAILY_QUOTA, GEMINI_KEY_INVALID, GEMINI_QUOTA_WORDS } from '../../support/vendor-answers.js';
import { collect, providerContract, request } from './provider-contract.js';

const quota = (retryDelay: string) => ({
  error: {
    code: 429,
    message: 'You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.',
    status: 'RESOURCE_EXHAUSTED',
    details: [
      {
        '@type': 'type.googleapis.com/google.rpc.QuotaFailure',
        violations: [{ quotaMetric: 'generativelanguage.googleapis.com/generate_content_free_tier_requests', quotaId: 'GenerateRequestsPerMinutePerProjectPerModel-FreeTier', quotaValue: '5' }],
      },
      { '@type': 'type.googleapis.com/google.rpc.Help', links: [{ description: 'Learn more about Gemini API quotas', url: 'https://ai.google.dev/gemini-api/docs/rate-limits' }] },
      { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay },
    ],
  },
});

providerContract({
  name: 'google',
  model: 'gemini-2.5-pro',
  makeAdapter: (baseURL, { maxRetries }) => new GoogleProvider({ apiKey: 'AIza-test', baseURL, maxRetries }),
  fixtures: { text: 'google-text.sse', thinking: 'google-thinking.sse', tools: 'google-tools.sse' },
  textUsage: { inputTokens: 200, outputTokens: 12, cacheReadTokens: 1000 },
  // 200×1.25 + 12×10 + 1000×0.125 = 250 + 120 + 125 micro-dollars
  textCost: 0.000495,
  // Gemini sends each function call whole, in one part.
  splitsToolArguments: false,
  errors: {
    rateLimited: { status: 429, json: quota('7s') },
    rateLimitedBriefly: { status: 429, json: quota('0.005s') },
    overloaded: { status: 503, json: { error: { code: 503, message: 'The model is overloaded. Please try again later.', status: 'UNAVAILABLE' } }, vendorText: 'The model is overloaded.' },
    contextOverflow: {
      status: 400,
      json: { error: { code: 400, message: 'The input token count (1250000) exceeds the maximum number of tokens allowed (1048576).', status: 'INVALID_ARGUMENT' } },
      vendorText: 'The input token count (1250000) exceeds the maximum number of tokens allowed (1048576).',
    },
    auth: GEMINI_KEY_INVALID,
    quotaExceeded: { ...GEMINI_DAILY_QUOTA, vendorText: GEMINI_QUOTA_WORDS },
  },
});

test('google: a 429 whose RetryInfo asks for more than a minute (a spent daily quota) ends the request at once, rate_limited with that delay; it is not waited out', async (t) => {
  const server = await startReplayServer();
  t.after(() => server.close());
  const provider = new GoogleProvider({ apiKey: 'AIza-test', baseURL: server.url, maxRetries: 2 });
  server.enqueue({ status: 429, json: quota('3600s') }, { sse: fixture('google-text.sse') });
  const err = await collect(provider, request('gemini-2.5-pro')).then(() => undefined, (e: unknown) => e);
  assert.ok(isProviderError(err, 'rate_limited'), String(err));
  assert.equal(err.retryAfterMs, 3_600_000);
  assert.equal(server.requests.length, 1, 'no retry was sent (waited out, the test would not end)');
});
