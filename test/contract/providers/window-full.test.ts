// A reply stopped because it filled the context window, through each vendor's SDK against the replay
// server: Anthropic's stop reason `model_context_window_exceeded` (recent Claude models end such a
// reply with it, a 200 stream, where older ones refused the request with a 400) and Mistral's
// finish_reason `model_length` (openai-compatible). Each is a context overflow found late, not the
// output limit nor an ordinary end: until 2026-12-07 the first was read as `max_tokens` and the second
// as `end_turn`, and no compaction followed. And the one signal OpenAI gives for both limits: the
// Responses API's incomplete_details.reason `max_output_tokens` and a compatible server's
// finish_reason `length`, read by the counts the response reports against what troupe asked for
// and the model's window (src/providers/openai/window-full.ts): a context_overflow only when the
// reply wrote less than the output limit asked for and reached the window with its input; anything
// else, counts missing included, stays `max_tokens` as before 2026-12-07.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { isProviderError, type ProviderEvent } from '../../../src/core/provider.js';
import { AnthropicProvider } from '../../../src/providers/anthropic/anthropic.provider.js';
import { OpenAIChatProvider } from '../../../src/providers/openai/openai-chat.provider.js';
import { OpenAIResponsesProvider } from '../../../src/providers/openai/openai-responses.provider.js';
import { fixture, startReplayServer, type ReplayServer } from '../../support/replay-server.js';
import { collect, failure, request } from './provider-contract.js';

let server: ReplayServer;
before(async () => {
  server = await startReplayServer();
});
after(() => server.close());

test('anthropic: a reply stopped by model_context_window_exceeded is a context_overflow after its text and usage, and is not retried', async () => {
  // Retries allowed: an overflow is not a failure a retry can help, and the text had reached the caller.
  const provider = new AnthropicProvider({ apiKey: 'k', baseURL: server.url, maxRetries: 2 });
  const before = server.requests.length;
  server.enqueue({ sse: fixture('e2e-anthropic-window-full.sse') });
  const seen: ProviderEvent[] = [];
  const err = await failure(provider, request('claude-sonnet-5-5'), seen);
  assert.ok(isProviderError(err, 'context_overflow'), `a context_overflow, not a max_tokens stop: ${String(err)}`);
  assert.match(err.vendorMessage, /model_context_window_exceeded/);
  assert.deepEqual(seen, [
    { type: 'text_delta', text: 'Here is the report. Part one: ' },
    { type: 'text_delta', text: 'the launch code is ' },
    // Billed all the same: the engine records it.
    { type: 'usage', inputTokens: 996_500, outputTokens: 3_500, cacheReadTokens: 0, cacheWriteTokens: 0 },
  ]);
  assert.equal(server.requests.length - before, 1, 'one request, not retried');
});

test('anthropic: max_tokens is still the output limit (a stop, not an overflow)', async () => {
  const provider = new AnthropicProvider({ apiKey: 'k', baseURL: server.url, maxRetries: 0 });
  server.enqueue({ sse: fixture('e2e-anthropic-window-full.sse').replace('"model_context_window_exceeded"', '"max_tokens"') });
  const events = await collect(provider, request('claude-sonnet-5-5'));
  assert.deepEqual(events.at(-1), { type: 'stop', reason: 'max_tokens' });
});

test('openai-compatible: a Mistral reply finished model_length is a context_overflow after its text and usage, and is not retried', async () => {
  const provider = new OpenAIChatProvider({ baseURL: `${server.url}/v1`, maxRetries: 2 });
  const before = server.requests.length;
  server.enqueue({ sse: fixture('e2e-mistral-window-full.sse') });
  const seen: ProviderEvent[] = [];
  const err = await failure(provider, request('mistral-small-latest'), seen);
  assert.ok(isProviderError(err, 'context_overflow'), `a context_overflow, not an end_turn stop: ${String(err)}`);
  assert.match(err.vendorMessage, /model_length/);
  assert.deepEqual(seen, [
    { type: 'text_delta', text: 'Here is the report. Part one: ' },
    { type: 'text_delta', text: 'the launch code is ' },
    { type: 'usage', inputTokens: 31_500, outputTokens: 500, cacheReadTokens: 0 },
  ]);
  assert.equal(server.requests.length - before, 1, 'one request, not retried');
  // Its `length` is still the output limit.
  server.enqueue({ sse: fixture('e2e-mistral-window-full.sse').replace('"model_length"', '"length"') });
  assert.deepEqual((await collect(provider, request('mistral-small-latest'))).at(-1), { type: 'stop', reason: 'max_tokens' });
});

// gpt-5: a window of 400,000 tokens, an output limit of 128,000 (what troupe asks for unless told less).
const RESPONSES_FULL = fixture('e2e-openai-responses-window-full.sse');
/** The fixture with other counts: `[input, cached, output]`, or none at all. */
const responsesWith = (counts: [number, number, number] | null): string =>
  RESPONSES_FULL.replace(
    /"usage":\{"input_tokens":396500,.*?"total_tokens":400000\}/,
    counts === null ? '"usage":null' : `"usage":{"input_tokens":${counts[0]},"input_tokens_details":{"cached_tokens":${counts[1]}},"output_tokens":${counts[2]},"output_tokens_details":{"reasoning_tokens":0},"total_tokens":${counts[0] + counts[2]}}`,
  );

test('openai: incomplete max_output_tokens with fewer tokens than asked for and the window reached is a context_overflow after its text and usage, not retried', async () => {
  const provider = new OpenAIResponsesProvider({ apiKey: 'k', baseURL: `${server.url}/v1`, maxRetries: 2 });
  const before = server.requests.length;
  // 396,500 in (390,000 of them cached) and 3,500 out: the 400,000 of the window, far under the 128,000 asked for.
  server.enqueue({ sse: responsesWith([396_500, 390_000, 3_500]) });
  const seen: ProviderEvent[] = [];
  const err = await failure(provider, request('gpt-5'), seen);
  assert.ok(isProviderError(err, 'context_overflow'), `a context_overflow, not a max_tokens stop: ${String(err)}`);
  assert.equal(err.vendorMessage, "the reply filled the model's context window (incomplete_details.reason max_output_tokens: 3500 output tokens, under the 128000 asked for, and 400000 with the input, the window being 400000)");
  assert.deepEqual(seen, [
    { type: 'text_delta', text: 'Here is the report. Part one: ' },
    { type: 'text_delta', text: 'the launch code is ' },
    { type: 'usage', inputTokens: 6_500, outputTokens: 3_500, cacheReadTokens: 390_000 },
  ]);
  assert.equal(server.requests.at(-1)!.body.max_output_tokens, 128_000, 'the limit it was read against is the one asked for');
  assert.equal(server.requests.length - before, 1, 'one request, not retried');
});

test('openai: incomplete max_output_tokens stays max_tokens when the output limit was reached, the window was not, or the counts are missing', async () => {
  const provider = new OpenAIResponsesProvider({ apiKey: 'k', baseURL: `${server.url}/v1`, maxRetries: 0 });
  const stop = async (sse: string, maxOutputTokens?: number) => {
    server.enqueue({ sse });
    return (await collect(provider, request('gpt-5', maxOutputTokens === undefined ? {} : { maxOutputTokens }))).at(-1);
  };
  const maxTokens = { type: 'stop', reason: 'max_tokens' };
  // Every token asked for was written: the output limit.
  assert.deepEqual(await stop(responsesWith([2_000, 0, 128_000])), maxTokens);
  // Fewer than asked for, but the window nowhere near (a server that caps the output lower).
  assert.deepEqual(await stop(responsesWith([1_000, 0, 3_500])), maxTokens);
  // Both reached at once (a request that asked for 3,500): which one stopped it cannot be told.
  assert.deepEqual(await stop(RESPONSES_FULL, 3_500), maxTokens);
  // No usage, nothing to tell it by.
  assert.deepEqual(await stop(responsesWith(null)), maxTokens);
});

// qwen3 on an OpenAI-compatible server, unknown to the config: the fallback's window of 32,768 and output limit of 4,096.
const VLLM_FULL = fixture('e2e-vllm-window-full.sse');
const vllmWith = (prompt: number, completion: number, cached = 0): string =>
  VLLM_FULL.replace(
    '"usage":{"prompt_tokens":32000,"total_tokens":32768,"completion_tokens":768}',
    `"usage":{"prompt_tokens":${prompt},"total_tokens":${prompt + completion},"completion_tokens":${completion},"prompt_tokens_details":{"cached_tokens":${cached}}}`,
  );

test('openai-compatible: finish_reason length with fewer tokens than asked for and the window reached (vLLM) is a context_overflow after its text and usage, not retried', async () => {
  const provider = new OpenAIChatProvider({ baseURL: `${server.url}/v1`, maxRetries: 2 });
  const before = server.requests.length;
  server.enqueue({ sse: vllmWith(32_000, 768, 30_000) });
  const seen: ProviderEvent[] = [];
  const err = await failure(provider, request('qwen3'), seen);
  assert.ok(isProviderError(err, 'context_overflow'), `a context_overflow, not a max_tokens stop: ${String(err)}`);
  assert.equal(err.vendorMessage, "the reply filled the model's context window (finish_reason length: 768 output tokens, under the 4096 asked for, and 32768 with the input, the window being 32768)");
  assert.deepEqual(seen, [
    { type: 'text_delta', text: 'Here is the report. Part one: ' },
    { type: 'text_delta', text: 'the launch code is ' },
    { type: 'usage', inputTokens: 2_000, outputTokens: 768, cacheReadTokens: 30_000 },
  ]);
  assert.equal(server.requests.at(-1)!.body.max_tokens, 4_096);
  assert.equal(server.requests.length - before, 1, 'one request, not retried');
});

test('openai-compatible: finish_reason length stays max_tokens when the output limit was reached, the window was not (by the config\'s window too), or there is no usage', async () => {
  const stop = async (sse: string, models: Record<string, { contextWindow: number }> = {}) => {
    server.enqueue({ sse });
    return (await collect(new OpenAIChatProvider({ baseURL: `${server.url}/v1`, maxRetries: 0, models }), request('qwen3'))).at(-1);
  };
  const maxTokens = { type: 'stop', reason: 'max_tokens' };
  assert.deepEqual(await stop(vllmWith(28_672, 4_096)), maxTokens, 'every token asked for, the window reached with it');
  assert.deepEqual(await stop(vllmWith(1_000, 768)), maxTokens, 'a server that capped the output lower');
  assert.deepEqual(await stop(VLLM_FULL, { qwen3: { contextWindow: 131_072 } }), maxTokens, 'the configured window is far from full');
  assert.deepEqual(await stop(VLLM_FULL.replace(/data: \{[^\n]*"usage"[^\n]*\n\n/, '')), maxTokens, 'no usage chunk');
});

test("openai-compatible: vLLM's refusal of a max_tokens the window has no room for is a context_overflow, not sent again (it does not cut the request to fit and stop with length)", async () => {
  const provider = new OpenAIChatProvider({ baseURL: `${server.url}/v1`, maxRetries: 2 });
  const before = server.requests.length;
  const message = "'max_tokens' or 'max_completion_tokens' is too large: 4096. This model's maximum context length is 32768 tokens and your request has 30000 input tokens (4096 > 32768 - 30000). None";
  server.enqueue({ status: 400, json: { error: { message, type: 'BadRequestError', param: null, code: 400 } } });
  const err = await failure(provider, request('qwen3'));
  assert.ok(isProviderError(err, 'context_overflow'), String(err));
  assert.equal(err.vendorMessage, message);
  assert.equal(server.requests.length - before, 1, 'one request, not retried');
});
