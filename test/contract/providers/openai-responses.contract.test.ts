// The OpenAI adapter in Responses mode (`openai/<model>`) through the openai SDK against the replay server.
import { OpenAIResponsesProvider } from '../../../src/providers/openai/openai-responses.provider.js';
import { OPENAI_INSUFFICIENT_QUOTA, OPENAI_QUOTA_WORDS } from '../../support/vendor-answers.js';
import { providerContract } from './provider-contract.js';

const error = (message: string, type: string, code: string | null, param: string | null = null) => ({ error: { message, type, param, code } });

providerContract({
  name: 'openai-responses',
  model: 'gpt-5',
  makeAdapter: (baseURL, { maxRetries }) => new OpenAIResponsesProvider({ apiKey: 'sk-test', baseURL: `${baseURL}/v1`, maxRetries }),
  fixtures: { text: 'openai-responses-text.sse', thinking: 'openai-responses-thinking.sse', tools: 'openai-responses-tools.sse' },
  textUsage: { inputTokens: 200, outputTokens: 12, cacheReadTokens: 1000 },
  // 200×1.25 + 12×10 + 1000×0.125 = 250 + 120 + 125 micro-dollars
  textCost: 0.000495,
  splitsToolArguments: true,
  errors: {
    rateLimited: {
      status: 429,
      headers: { 'retry-after': '7' },
      json: error('Rate limit reached for gpt-5 in organization org-abc on tokens per min (TPM): Limit 30000, Used 29000, Requested 1500. Please try again in 7s.', 'tokens', 'rate_limit_exceeded'),
    },
    rateLimitedBriefly: { status: 429, headers: { 'retry-after-ms': '5' }, json: error('Rate limit reached for gpt-5.', 'requests', 'rate_limit_exceeded') },
    overloaded: {
      status: 503,
      json: error('The server is overloaded or not ready yet.', 'server_error', null),
      vendorText: 'The server is overloaded or not ready yet.',
    },
    contextOverflow: {
      status: 400,
      json: error('Your input exceeds the context window of this model. Please adjust your input and try again.', 'invalid_request_error', 'context_length_exceeded', 'input'),
      vendorText: 'Your input exceeds the context window of this model.',
    },
    auth: { status: 401, json: error('Incorrect API key provided: sk-test. You can find your API key at https://platform.openai.com/account/api-keys.', 'invalid_request_error', 'invalid_api_key') },
    quotaExceeded: { ...OPENAI_INSUFFICIENT_QUOTA, vendorText: OPENAI_QUOTA_WORDS },
  },
});
