// Vendors' answers as recorded, for more than one test to replay (test/support/replay-server.ts).
import type { ReplayStep } from './replay-server.js';

/** Gemini's refusal of a key that is not one: a 400, not a 401, told by its reason API_KEY_INVALID. */
export const GEMINI_KEY_INVALID: ReplayStep = {
  status: 400,
  json: {
    error: {
      code: 400,
      message: 'API key not valid. Please pass a valid API key.',
      status: 'INVALID_ARGUMENT',
      details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com', metadata: { service: 'generativelanguage.googleapis.com' } }],
    },
  },
};

/**
 * OpenAI's answer to an account whose quota or credit is spent: a 429, like a rate limit, told apart
 * by its type and code `insufficient_quota` (recorded in langchain-ai/langchainjs#1929, among others).
 */
export const OPENAI_QUOTA_WORDS = 'You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.';
export const OPENAI_INSUFFICIENT_QUOTA: ReplayStep = {
  status: 429,
  headers: { 'x-request-id': 'req_5f1c0d0b2a1e4c8e9d3f7a6b5c4d3e2f' },
  json: { error: { message: OPENAI_QUOTA_WORDS, type: 'insufficient_quota', param: null, code: 'insufficient_quota' } },
};

/** Anthropic's answer to an organization out of credit: a 400 invalid_request_error, not a 402. */
export const ANTHROPIC_CREDIT_WORDS = 'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.';
export const ANTHROPIC_CREDIT_TOO_LOW: ReplayStep = {
  status: 400,
  json: { type: 'error', error: { type: 'invalid_request_error', message: ANTHROPIC_CREDIT_WORDS }, request_id: 'req_011CSHoEeqs5C35K2UUqR7Fy' },
};

/**
 * Gemini's 429 for a spent daily quota: the QuotaFailure names the per-day quota among the others,
 * and a RetryInfo of seconds comes with it all the same (google-gemini/gemini-cli#8437).
 */
export const GEMINI_QUOTA_WORDS = 'You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.';
export const GEMINI_DAILY_QUOTA: ReplayStep = {
  status: 429,
  json: {
    error: {
      code: 429,
      message: GEMINI_QUOTA_WORDS,
      status: 'RESOURCE_EXHAUSTED',
      details: [
        {
          '@type': 'type.googleapis.com/google.rpc.QuotaFailure',
          violations: [
            { quotaMetric: 'generativelanguage.googleapis.com/generate_content_free_tier_requests', quotaId: 'GenerateRequestsPerMinutePerProjectPerModel-FreeTier', quotaDimensions: { location: 'global', model: 'gemini-2.5-pro' } },
            { quotaMetric: 'generativelanguage.googleapis.com/generate_content_free_tier_requests', quotaId: 'GenerateRequestsPerDayPerProjectPerModel-FreeTier', quotaDimensions: { location: 'global', model: 'gemini-2.5-pro' } },
          ],
        },
        { '@type': 'type.googleapis.com/google.rpc.Help', links: [{ description: 'Learn more about Gemini API quotas', url: 'https://ai.google.dev/gemini-api/docs/rate-limits' }] },
        { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '0.005s' },
      ],
    },
  },
};
