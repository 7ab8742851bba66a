// The Anthropic adapter (Messages API, SSE) through @anthropic-ai/sdk against the replay server.
import { AnthropicProvider } from '../../../src/providers/anthropic/anthropic.provider.js';
import { ANTHROPIC_CREDIT_TOO_LOW, ANTHROPIC_CREDIT_WORDS } from '../../support/vendor-answers.js';
import { providerContract } from './provider-contract.js';

const error = (type: string, message: string) => ({ type: 'error', error: { type, message }, request_id: 'req_011CSHoEeqs5C35K2UUqR7Fy' });

providerContract({
  name: 'anthropic',
  model: 'claude-sonnet-5-5',
  makeAdapter: (baseURL, { maxRetries }) => new AnthropicProvider({ apiKey: 'sk-ant-test', baseURL, maxRetries }),
  fixtures: { text: 'anthropic-text.sse', thinking: 'anthropic-thinking.sse', tools: 'anthropic-tools.sse' },
  textUsage: { inputTokens: 120, outputTokens: 12, cacheReadTokens: 10000, cacheWriteTokens: 2000 },
  // 120×2 + 12×10 + 10000×0.2 + 2000×2.5 = 240 + 120 + 2000 + 5000 micro-dollars
  textCost: 0.00736,
  splitsToolArguments: true,
  errors: {
    rateLimited: {
      status: 429,
      headers: { 'retry-after': '7' },
      json: error('rate_limit_error', 'This request would exceed the rate limit for your organization of 50 requests per minute.'),
    },
    rateLimitedBriefly: { status: 429, headers: { 'retry-after-ms': '5' }, json: error('rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit.') },
    overloaded: { status: 529, json: error('overloaded_error', 'Overloaded'), vendorText: 'Overloaded' },
    contextOverflow: {
      status: 400,
      json: error('invalid_request_error', 'prompt is too long: 208310 tokens > 200000 maximum'),
      vendorText: 'prompt is too long: 208310 tokens > 200000 maximum',
    },
    auth: { status: 401, json: error('authentication_error', 'invalid x-api-key') },
    quotaExceeded: { ...ANTHROPIC_CREDIT_TOO_LOW, vendorText: ANTHROPIC_CREDIT_WORDS },
  },
});
