// A reply stopped because it filled the context window, through each vendor's SDK against the replay
// server: Anthropic's stop reason `model_context_window_exceeded` (recent Claude models end such a
// reply with it, a 200 stream, where older ones refused the request with a 400) and Mistral's
// finish_reason `model_length` (openai-compatible). Each is a context overflow found late, not the
// output limit nor an ordinary end: until 2026-12-07 the first was read as `max_tokens` and the second
// as `end_turn`, and no compaction followed.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { isProviderError, type ProviderEvent } from '../../../src/core/provider.js';
import { AnthropicProvider } from '../../../src/providers/anthropic/anthropic.provider.js';
import { OpenAIChatProvider } from '../../../src/providers/openai/openai-chat.provider.js';
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
