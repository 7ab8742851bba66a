// The adapter for `openai-compatible/<model>` (Chat Completions, as Ollama/vLLM/llama.cpp serve it)
// through the openai SDK against the replay server.
import { OpenAIChatProvider } from '../../../src/providers/openai/openai-chat.provider.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startReplayServer } from '../../support/replay-server.js';
import { OPENAI_INSUFFICIENT_QUOTA, OPENAI_QUOTA_WORDS } from '../../support/vendor-answers.js';
import { collect, providerContract, request } from './provider-contract.js';

const error = (message: string, type: string, code: string | null) => ({ error: { message, type, param: null, code } });

providerContract({
  name: 'openai-chat',
  model: 'qwen3-coder',
  makeAdapter: (baseURL, { maxRetries }) =>
    new OpenAIChatProvider({
      baseURL: `${baseURL}/v1`,
      maxRetries,
      // A gateway that bills per token: the config gives the price.
      models: { 'qwen3-coder': { contextWindow: 262_144, thinking: true, pricing: { input: 0.6, output: 2.4, cacheRead: 0.06 } } },
    }),
  fixtures: { text: 'openai-chat-text.sse', thinking: 'openai-chat-thinking.sse', tools: 'openai-chat-tools.sse' },
  textUsage: { inputTokens: 200, outputTokens: 12, cacheReadTokens: 1000 },
  // 200×0.6 + 12×2.4 + 1000×0.06 = 120 + 28.8 + 60 micro-dollars
  textCost: 0.0002088,
  splitsToolArguments: true,
  errors: {
    rateLimited: { status: 429, headers: { 'retry-after': '7' }, json: error('Too many requests, please retry later.', 'rate_limit_error', 'rate_limit_exceeded') },
    rateLimitedBriefly: { status: 429, headers: { 'retry-after-ms': '5' }, json: error('Too many requests.', 'rate_limit_error', null) },
    overloaded: { status: 503, json: { error: { code: 503, message: 'Loading model', type: 'unavailable_error' } }, vendorText: 'Loading model' },
    // llama.cpp's server wording (vLLM says "This model's maximum context length is … tokens").
    contextOverflow: {
      status: 400,
      json: { error: { code: 400, message: 'the request exceeds the available context size, try increasing it', type: 'exceed_context_size_error', n_prompt_tokens: 40960, n_ctx: 32768 } },
      vendorText: 'the request exceeds the available context size',
    },
    auth: { status: 401, json: error('Invalid API key', 'authentication_error', 'invalid_api_key') },
    // A gateway in front of OpenAI forwards its answer as it is.
    quotaExceeded: { ...OPENAI_INSUFFICIENT_QUOTA, vendorText: OPENAI_QUOTA_WORDS },
  },
});

test('openai-chat: parallel calls that all say index 0 (Ollama) stay separate calls, told apart by id', async () => {
  const server = await startReplayServer();
  try {
    const chunk = (delta: object, finish: string | null = null) =>
      `data: ${JSON.stringify({ id: 'chatcmpl-719', object: 'chat.completion.chunk', created: 1775700000, model: 'qwen3-coder', system_fingerprint: 'fp_ollama', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    const call = (id: string, path: string) => ({ id, index: 0, type: 'function', function: { name: 'read_file', arguments: JSON.stringify({ path }) } });
    // https://github.com/ollama/ollama/issues/15457: every call of a parallel batch arrives whole, with index 0.
    server.enqueue({
      sse: chunk({ role: 'assistant', content: '', tool_calls: [call('call_a1', 'a.ts')] }) + chunk({ role: 'assistant', content: '', tool_calls: [call('call_b2', 'b.ts')] }) + chunk({ role: 'assistant', content: '' }, 'tool_calls') + 'data: [DONE]\n\n',
    });
    const provider = new OpenAIChatProvider({ baseURL: `${server.url}/v1`, maxRetries: 0 });
    const events = await collect(provider, request('qwen3-coder'));
    assert.deepEqual(
      events.filter((e) => e.type === 'tool_call_start' || e.type === 'tool_call_end'),
      [
        { type: 'tool_call_start', id: 'call_a1', name: 'read_file' },
        { type: 'tool_call_start', id: 'call_b2', name: 'read_file' },
        { type: 'tool_call_end', id: 'call_a1', input: { path: 'a.ts' } },
        { type: 'tool_call_end', id: 'call_b2', input: { path: 'b.ts' } },
      ],
    );
    assert.deepEqual(events.at(-1), { type: 'stop', reason: 'tool_use' });
  } finally {
    await server.close();
  }
});
