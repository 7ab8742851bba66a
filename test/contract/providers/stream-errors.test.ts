// Errors that arrive inside an HTTP 200 stream, as each vendor sends them.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { isProviderError, type ProviderEvent } from '../../../src/core/provider.js';
import { AnthropicProvider } from '../../../src/providers/anthropic/anthropic.provider.js';
import { OpenAIResponsesProvider } from '../../../src/providers/openai/openai-responses.provider.js';
import { GoogleProvider } from '../../../src/providers/google/google.provider.js';
import { OpenAIChatProvider } from '../../../src/providers/openai/openai-chat.provider.js';
import { fixture, sseEvents, startReplayServer, type ReplayServer } from '../../support/replay-server.js';
import { collect, request } from './provider-contract.js';

let server: ReplayServer;
before(async () => {
  server = await startReplayServer();
});
after(() => server.close());

test('anthropic: an SSE error event (overloaded_error) mid-stream becomes overloaded', async () => {
  const head = sseEvents(fixture('anthropic-text.sse')).slice(0, 4).join('');
  const error = 'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}\n\n';
  server.enqueue({ sse: head + error });
  const provider = new AnthropicProvider({ apiKey: 'k', baseURL: server.url, maxRetries: 0 });
  await assert.rejects(collect(provider, request('claude-haiku-4-5')), (err) => isProviderError(err, 'overloaded') && err.vendorMessage === 'Overloaded');
});

test('openai: response.failed carries the vendor code and message', async () => {
  const head = sseEvents(fixture('openai-responses-text.sse')).slice(0, 2).join('');
  const failed = {
    type: 'response.failed',
    sequence_number: 2,
    response: { id: 'resp_1', object: 'response', status: 'failed', error: { code: 'server_error', message: 'The model failed to generate a response.' }, output: [], usage: null },
  };
  server.enqueue({ sse: `${head}event: response.failed\ndata: ${JSON.stringify(failed)}\n\n` });
  const provider = new OpenAIResponsesProvider({ apiKey: 'k', baseURL: `${server.url}/v1`, maxRetries: 0 });
  await assert.rejects(collect(provider, request('gpt-5')), (err) => isProviderError(err, 'overloaded') && err.vendorMessage === 'The model failed to generate a response.');
});

test('openai: a function call cut by max_output_tokens ends with its partial arguments and the max_tokens stop, as on the other vendors', async () => {
  // The first call is whole; the second is cut after its first argument delta: no
  // output_item.done for it, then response.incomplete (reason max_output_tokens).
  const head = sseEvents(fixture('openai-responses-tools.sse')).slice(0, 10).join('');
  const incomplete = {
    type: 'response.incomplete',
    sequence_number: 10,
    response: { id: 'resp_1', object: 'response', status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, output: [], usage: { input_tokens: 10, output_tokens: 64, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 74 } },
  };
  server.enqueue({ sse: `${head}event: response.incomplete\ndata: ${JSON.stringify(incomplete)}\n\n` });
  const provider = new OpenAIResponsesProvider({ apiKey: 'k', baseURL: `${server.url}/v1`, maxRetries: 0 });
  const events = await collect(provider, request('gpt-5'));
  assert.deepEqual(
    events.filter((e) => e.type === 'tool_call_end'),
    [
      { type: 'tool_call_end', id: 'call_Q3bVc0z3mYl8kJ2dT7rW1xPa', input: { path: 'src/index.ts' } },
      { type: 'tool_call_end', id: 'call_R4cWd1a4nZm9lK3eU8sX2yQb', input: {}, invalidArgs: '{"pattern":"TO' },
    ],
  );
  assert.deepEqual(events.at(-1), { type: 'stop', reason: 'max_tokens' });
});

test('openai: an error event mid-stream (rate_limit_exceeded) becomes rate_limited', async () => {
  const head = sseEvents(fixture('openai-responses-text.sse')).slice(0, 3).join('');
  const error = { type: 'error', sequence_number: 3, code: 'rate_limit_exceeded', message: 'Rate limit reached for gpt-5.', param: null };
  server.enqueue({ sse: `${head}event: error\ndata: ${JSON.stringify(error)}\n\n` });
  const provider = new OpenAIResponsesProvider({ apiKey: 'k', baseURL: `${server.url}/v1`, maxRetries: 0 });
  await assert.rejects(collect(provider, request('gpt-5')), (err) => isProviderError(err, 'rate_limited') && err.vendorMessage === 'Rate limit reached for gpt-5.');
});

test('google: an error chunk mid-stream becomes its kind', async () => {
  const head = sseEvents(fixture('google-text.sse')).slice(0, 1).join('');
  const error = { error: { code: 503, message: 'The model is overloaded. Please try again later.', status: 'UNAVAILABLE' } };
  server.enqueue({ sse: `${head}data: ${JSON.stringify(error)}\r\n\r\n` });
  const provider = new GoogleProvider({ apiKey: 'k', baseURL: server.url, maxRetries: 0 });
  await assert.rejects(collect(provider, request('gemini-2.5-pro')), (err) => isProviderError(err, 'overloaded') && err.vendorMessage.startsWith('The model is overloaded.'));
});

test('google: with retries, an error before any event is retried, one after an event is not', async () => {
  const provider = new GoogleProvider({ apiKey: 'k', baseURL: server.url, maxRetries: 2 });
  const before = server.requests.length;
  const overloaded = { status: 503, json: { error: { code: 503, message: 'The model is overloaded. Please try again later.', status: 'UNAVAILABLE' } } };
  // Two retries are allowed; the first is waited out with backoff, so keep the count small.
  server.enqueue(overloaded, { sse: fixture('google-text.sse') });
  const events = await collect(provider, request('gemini-2.5-pro'));
  assert.equal(events.at(-1)?.type, 'stop');
  assert.equal(server.requests.length - before, 2);
  const cut = sseEvents(fixture('google-text.sse'));
  server.enqueue({ sse: fixture('google-text.sse'), cutAfterEvents: cut.length - 1 });
  const mid = server.requests.length;
  await assert.rejects(collect(provider, request('gemini-2.5-pro')), (err) => isProviderError(err, 'network'));
  assert.equal(server.requests.length - mid, 1, 'text already reached the caller: no retry');
});

test('anthropic and openai: a stream cut before any event reached the caller is retried (the SDK retries nothing once the response started)', async () => {
  const cases: [string, () => AnthropicProvider | OpenAIResponsesProvider, string, string, number][] = [
    // message_start, content_block_start (empty text), ping; then the socket is destroyed.
    ['anthropic', () => new AnthropicProvider({ apiKey: 'k', baseURL: server.url, maxRetries: 1 }), 'claude-haiku-4-5', 'anthropic-text.sse', 3],
    // response.created, response.in_progress; then the socket is destroyed.
    ['openai', () => new OpenAIResponsesProvider({ apiKey: 'k', baseURL: `${server.url}/v1`, maxRetries: 1 }), 'gpt-5', 'openai-responses-text.sse', 2],
  ];
  for (const [name, make, model, sse, head] of cases) {
    const before = server.requests.length;
    server.enqueue({ sse: fixture(sse), cutAfterEvents: head }, { sse: fixture(sse) });
    const events = await collect(make(), request(model));
    assert.equal(events.at(-1)?.type, 'stop', name);
    assert.equal(events.filter((e) => e.type === 'text_delta').map((e) => (e as { text: string }).text).join(''), 'Hello! How can I help you today?', name);
    assert.equal(server.requests.length - before, 2, `${name}: one retry`);
  }
});

test('anthropic: "input length and `max_tokens` exceed context limit" is a context overflow', async () => {
  // Anthropic's wording when the prompt fits but the prompt plus max_tokens does not.
  const message = 'input length and `max_tokens` exceed context limit: 197682 + 32000 > 200000, decrease input length or `max_tokens` and try again';
  server.enqueue({ status: 400, json: { type: 'error', error: { type: 'invalid_request_error', message } } });
  const provider = new AnthropicProvider({ apiKey: 'k', baseURL: server.url, maxRetries: 0 });
  await assert.rejects(collect(provider, request('claude-haiku-4-5')), (err) => isProviderError(err, 'context_overflow') && err.vendorMessage === message);
});

test('openai-compatible: a refusal streamed as refusal deltas ends with the refusal stop reason', async () => {
  const chunk = (delta: object, finish: string | null) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`;
  // OpenAI streams a refusal in `delta.refusal` and finishes it with finish_reason "stop".
  const sse = chunk({ role: 'assistant', content: null, refusal: '' }, null) + chunk({ refusal: "I'm sorry, " }, null) + chunk({ refusal: "I can't help with that." }, null) + chunk({}, 'stop') + 'data: [DONE]\n\n';
  server.enqueue({ sse });
  const provider = new OpenAIChatProvider({ baseURL: `${server.url}/v1`, maxRetries: 0 });
  const events = await collect(provider, request('gpt-4o'));
  assert.equal(events.flatMap((e) => (e.type === 'text_delta' ? [e.text] : [])).join(''), "I'm sorry, I can't help with that.");
  assert.deepEqual(events.at(-1), { type: 'stop', reason: 'refusal' });
});

test('google: MALFORMED_FUNCTION_CALL is a failure the person can read, not a silent empty end_turn', async () => {
  const chunk = { candidates: [{ content: { parts: [], role: 'model' }, finishReason: 'MALFORMED_FUNCTION_CALL', finishMessage: 'Malformed function call: print(default_api.read_file(path=))', index: 0 }], usageMetadata: { promptTokenCount: 1200, totalTokenCount: 1200 }, modelVersion: 'gemini-2.5-pro' };
  server.enqueue({ sse: `data: ${JSON.stringify(chunk)}\r\n\r\n` });
  const provider = new GoogleProvider({ apiKey: 'k', baseURL: server.url, maxRetries: 0 });
  await assert.rejects(collect(provider, request('gemini-2.5-pro')), (err) => isProviderError(err, 'invalid_request') && err.vendorMessage === 'the model generated a function call that could not be parsed (finishReason MALFORMED_FUNCTION_CALL)');
});

test('google: an unusual finish with nothing in the reply (LANGUAGE, OTHER, one not known yet) is said, not a silent empty end_turn; with some reply it ends it as before', async () => {
  const provider = new GoogleProvider({ apiKey: 'k', baseURL: server.url, maxRetries: 0 });
  const finish = (finishReason: string, parts: unknown[]) =>
    `data: ${JSON.stringify({ candidates: [{ content: { parts, role: 'model' }, finishReason, index: 0 }], usageMetadata: { promptTokenCount: 1200, totalTokenCount: 1200 }, modelVersion: 'gemini-2.5-pro' })}\r\n\r\n`;
  const said = {
    LANGUAGE: 'the model ended its reply with nothing in it (finishReason LANGUAGE: the prompt or the reply is in a language the model does not support)',
    OTHER: 'the model ended its reply with nothing in it (finishReason OTHER: Gemini gives no reason)',
    SOMETHING_NEW: 'the model ended its reply with nothing in it (finishReason SOMETHING_NEW: a finish troupe does not know)',
    // A request Gemini refuses: the history, not the reply, is at fault.
    MISSING_THOUGHT_SIGNATURE: 'Gemini refused the conversation: a function call in it lacks the thought signature Gemini requires (finishReason MISSING_THOUGHT_SIGNATURE)',
  };
  for (const [reason, message] of Object.entries(said)) {
    server.enqueue({ sse: finish(reason, []) });
    await assert.rejects(collect(provider, request('gemini-2.5-pro')), (err) => isProviderError(err, 'invalid_request') && err.vendorMessage === message, reason);
  }
  server.enqueue({ sse: finish('OTHER', [{ text: 'Half an answer' }]) });
  const events = await collect(provider, request('gemini-2.5-pro'));
  assert.deepEqual(events.filter((e) => e.type === 'text_delta' || e.type === 'stop'), [
    { type: 'text_delta', text: 'Half an answer' },
    { type: 'stop', reason: 'end_turn' },
  ]);
});

test('google: a stream that outlives timeoutMs is a network failure, retried, not a cancel', { timeout: 10_000 }, async () => {
  // The SDK enforces httpOptions.timeout by aborting its own fetch; the caller's signal stays live.
  const provider = new GoogleProvider({ apiKey: 'k', baseURL: server.url, maxRetries: 1, timeoutMs: 200 });
  const before = server.requests.length;
  server.enqueue({ sse: fixture('google-text.sse'), holdAfterEvents: 0 }, { sse: fixture('google-text.sse'), holdAfterEvents: 0 });
  await assert.rejects(collect(provider, request('gemini-2.5-pro')), (err) => isProviderError(err, 'network') && /timed out/.test(err.vendorMessage));
  assert.equal(server.requests.length - before, 2, 'nothing had reached the caller: the timeout is retried once');
});

test('openai-compatible: an error chunk that gives the HTTP status as its code (vLLM: 500) is overloaded, and retried before anything streamed', async () => {
  const vllm = 'data: {"error":{"object":"error","message":"The engine died unexpectedly","type":"InternalServerError","param":null,"code":500}}\n\n';
  server.enqueue({ sse: vllm });
  await assert.rejects(
    collect(new OpenAIChatProvider({ baseURL: `${server.url}/v1`, maxRetries: 0 }), request('qwen3-coder')),
    (err) => isProviderError(err, 'overloaded') && err.status === 500 && err.vendorMessage === 'The engine died unexpectedly',
  );
  const before = server.requests.length;
  server.enqueue({ sse: vllm }, { sse: fixture('openai-chat-text.sse') });
  const events = await collect(new OpenAIChatProvider({ baseURL: `${server.url}/v1`, maxRetries: 1 }), request('qwen3-coder'));
  assert.deepEqual(events.at(-1), { type: 'stop', reason: 'end_turn' });
  assert.equal(server.requests.length - before, 2, 'one retry');
});

// What Ollama's OpenAI layer sends for a failure of the model (ollama/ollama middleware/openai.go and
// server/routes.go streamResponse, the same since its Chat Completions support in 2024): before any
// output, the failure's HTTP status (500 unless it names another) with an OpenAI error body of type
// "api_error"; after some, the 200 is sent, and its ChatWriter reads the `{"error": "…"}` line meant
// for its own API as an empty response: one chunk of empty content (`model` ""), then the body ends,
// with no finish_reason, no [DONE] and no message. It never sends an error chunk in a 200 stream.
const OLLAMA_FAILURE = 'an error was encountered while running the model: unexpected EOF';

/** Streams until the call fails: what reached the caller first, and the failure. */
async function untilFailure(provider: OpenAIChatProvider, model: string): Promise<{ seen: string; error: unknown }> {
  const seen: ProviderEvent[] = [];
  try {
    for await (const event of provider.stream(request(model), new AbortController().signal)) seen.push(event);
  } catch (error) {
    return { seen: seen.map((e) => (e.type === 'text_delta' ? e.text : `<${e.type}>`)).join(''), error };
  }
  assert.fail('the stream ended without a failure');
}

test('openai-compatible: Ollama\'s failure after some text (an empty chunk, then the end of the body) is a broken stream, not a refused request; the text stays, nothing is retried', async () => {
  const before = server.requests.length;
  server.enqueue({ sse: fixture('ollama-chat-error-after-text.sse') });
  const { seen, error } = await untilFailure(new OpenAIChatProvider({ baseURL: `${server.url}/v1`, maxRetries: 1 }), 'qwen3-coder');
  assert.ok(isProviderError(error, 'network') && error.vendorMessage === 'the completion stream ended before a finish_reason', String(error));
  assert.equal(seen, 'The launch code is');
  assert.equal(server.requests.length - before, 1, 'the text reached the caller: no retry');
});

test('openai-compatible: Ollama\'s failure before any text (HTTP 500, type "api_error") is overloaded, and retried', async () => {
  const failed = { status: 500, json: { error: { message: OLLAMA_FAILURE, type: 'api_error', param: null, code: null } } };
  server.enqueue(failed);
  await assert.rejects(
    collect(new OpenAIChatProvider({ baseURL: `${server.url}/v1`, maxRetries: 0 }), request('qwen3-coder')),
    (err) => isProviderError(err, 'overloaded') && err.status === 500 && err.vendorMessage === OLLAMA_FAILURE,
  );
  const before = server.requests.length;
  server.enqueue(failed, { sse: fixture('openai-chat-text.sse') });
  const events = await collect(new OpenAIChatProvider({ baseURL: `${server.url}/v1`, maxRetries: 1 }), request('qwen3-coder'));
  assert.deepEqual(events.at(-1), { type: 'stop', reason: 'end_turn' });
  assert.equal(server.requests.length - before, 2, 'one retry');
});

// What OpenAI's Chat Completions sends when its server fails during a streamed reply: the 200 and
// some chunks, then an error chunk of type "server_error" whose code is null (no HTTP status in it),
// then [DONE] (seen by go-openai, sashabaranov/go-openai#396, and in coder/aibridge's recorded
// fixtures/openai/chatcompletions/stream_error.txtar). The SDK throws it as an APIError without a
// status. Until 2026-12-07 it was a refused request (provider_invalid_request), never retried.
const OPENAI_SERVER_ERROR = 'The server had an error while processing your request. Sorry about that!';

test('openai-compatible: OpenAI\'s server_error chunk after some text is overloaded, not a refused request; the text stays, nothing is retried', async () => {
  const before = server.requests.length;
  server.enqueue({ sse: fixture('openai-chat-server-error.sse') });
  const { seen, error } = await untilFailure(new OpenAIChatProvider({ baseURL: `${server.url}/v1`, maxRetries: 1 }), 'gpt-4.1');
  assert.ok(isProviderError(error, 'overloaded') && error.vendorMessage === OPENAI_SERVER_ERROR && error.status === undefined, String(error));
  assert.equal(seen, 'The launch code is');
  assert.equal(server.requests.length - before, 1, 'the text reached the caller: no retry');
});

test('openai-compatible: OpenAI\'s server_error chunk before any text is overloaded, and retried', async () => {
  // The role chunk (empty content, nothing for the caller), the error chunk, [DONE].
  const [role, , , failure, done] = sseEvents(fixture('openai-chat-server-error.sse'));
  const sse = `${role}${failure}${done}`;
  server.enqueue({ sse });
  await assert.rejects(collect(new OpenAIChatProvider({ baseURL: `${server.url}/v1`, maxRetries: 0 }), request('gpt-4.1')), (err) => isProviderError(err, 'overloaded') && err.vendorMessage === OPENAI_SERVER_ERROR);
  const before = server.requests.length;
  server.enqueue({ sse }, { sse: fixture('openai-chat-text.sse') });
  const events = await collect(new OpenAIChatProvider({ baseURL: `${server.url}/v1`, maxRetries: 1 }), request('gpt-4.1'));
  assert.deepEqual(events.at(-1), { type: 'stop', reason: 'end_turn' });
  assert.equal(server.requests.length - before, 2, 'one retry');
  // The same chunk typed "api_error", the type Ollama's OpenAI layer gives its failures of the model.
  server.enqueue({ sse: sse.replace('"type":"server_error"', '"type":"api_error"') });
  await assert.rejects(collect(new OpenAIChatProvider({ baseURL: `${server.url}/v1`, maxRetries: 0 }), request('gpt-4.1')), (err) => isProviderError(err, 'overloaded') && err.vendorMessage === OPENAI_SERVER_ERROR);
});

// Mistral's API finishes a generation that failed on its side with finish_reason "error" (its
// FinishReason: stop, length, model_length, error, tool_calls), usage in the same chunk, then [DONE].
// A server failure inside a 200 stream, as OpenAI's server_error chunk above. Until 2026-12-07 it
// was a reason troupe did not know, read as end_turn: the turn ended as if the model had finished.
test('openai-compatible: Mistral\'s finish_reason "error" after some text is overloaded, not an end_turn; the text stays, nothing is retried', async () => {
  const before = server.requests.length;
  server.enqueue({ sse: fixture('mistral-chat-generation-error.sse') });
  const { seen, error } = await untilFailure(new OpenAIChatProvider({ baseURL: `${server.url}/v1`, maxRetries: 1 }), 'mistral-small-latest');
  assert.ok(isProviderError(error, 'overloaded') && /finish_reason error/.test(error.vendorMessage), String(error));
  assert.equal(seen, 'The launch code is', 'the text, then the failure: no usage, no stop');
  assert.equal(server.requests.length - before, 1, 'the text reached the caller: no retry');
});

test('openai-compatible: Mistral\'s finish_reason "error" before any text is overloaded, and retried', async () => {
  // The role chunk (empty content), the finish chunk with no text, [DONE].
  const [role, , last, done] = sseEvents(fixture('mistral-chat-generation-error.sse'));
  const sse = `${role}${last!.replace('" code is"', '""')}${done}`;
  server.enqueue({ sse });
  await assert.rejects(collect(new OpenAIChatProvider({ baseURL: `${server.url}/v1`, maxRetries: 0 }), request('mistral-small-latest')), (err) => isProviderError(err, 'overloaded'));
  const before = server.requests.length;
  server.enqueue({ sse }, { sse: fixture('openai-chat-text.sse') });
  const events = await collect(new OpenAIChatProvider({ baseURL: `${server.url}/v1`, maxRetries: 1 }), request('mistral-small-latest'));
  assert.deepEqual(events.filter((e) => e.type === 'retry').map((e) => e.type === 'retry' && e.kind), ['overloaded']);
  assert.deepEqual(events.at(-1), { type: 'stop', reason: 'end_turn' });
  assert.equal(server.requests.length - before, 2, 'one retry');
});

test('openai-compatible: an error chunk of type invalid_request_error (code null) stays a refused request, not retried', async () => {
  // OpenAI's shape for a request it refuses after the 200 (community.openai.com thread 373705).
  const refused = 'data: {"error":{"message":"3 is greater than the maximum of 2 - \'temperature\'","type":"invalid_request_error","param":null,"code":null}}\n\ndata: [DONE]\n\n';
  const before = server.requests.length;
  server.enqueue({ sse: refused });
  await assert.rejects(
    collect(new OpenAIChatProvider({ baseURL: `${server.url}/v1`, maxRetries: 1 }), request('gpt-4.1')),
    (err) => isProviderError(err, 'invalid_request') && err.vendorMessage === "3 is greater than the maximum of 2 - 'temperature'",
  );
  assert.equal(server.requests.length - before, 1, 'a refused request is not retried');
});

// What text-generation-inference (TGI) sends when a streamed chat completion fails (since v2.4.1,
// huggingface/text-generation-inference router/src/server.rs chat_completions and
// InferError::into_openai_event): after the 200, `{"error": {"message": <the InferError's words>,
// "http_status_code": 422}}` and [DONE]. Every failure says 422, a server's failure as a refused
// request, and there is no type or code: the words are all that tell them apart.
function tgiError(message: string): string {
  return `data: ${JSON.stringify({ error: { message, http_status_code: 422 } })}\n\ndata: [DONE]\n\n`;
}

test('openai-compatible: TGI\'s generation failure after some text is overloaded, not a refused request; the text stays, nothing is retried', async () => {
  const before = server.requests.length;
  server.enqueue({ sse: fixture('tgi-chat-error-after-text.sse') });
  const { seen, error } = await untilFailure(new OpenAIChatProvider({ baseURL: `${server.url}/v1`, maxRetries: 1 }), 'tgi');
  assert.ok(isProviderError(error, 'overloaded') && error.vendorMessage === 'Request failed during generation: Server error: CUDA out of memory. Tried to allocate 2.00 GiB', String(error));
  assert.equal(seen, 'The launch code is');
  assert.equal(server.requests.length - before, 1, 'the text reached the caller: no retry');
});

test('openai-compatible: TGI\'s "Model is overloaded" before any text is overloaded, and retried', async () => {
  // Its concurrency limit (max_concurrent_requests) full: the request fails before any token.
  const sse = tgiError('Model is overloaded');
  server.enqueue({ sse });
  await assert.rejects(collect(new OpenAIChatProvider({ baseURL: `${server.url}/v1`, maxRetries: 0 }), request('tgi')), (err) => isProviderError(err, 'overloaded') && err.vendorMessage === 'Model is overloaded');
  const before = server.requests.length;
  server.enqueue({ sse }, { sse: fixture('openai-chat-text.sse') });
  const events = await collect(new OpenAIChatProvider({ baseURL: `${server.url}/v1`, maxRetries: 1 }), request('tgi'));
  assert.deepEqual(events.at(-1), { type: 'stop', reason: 'end_turn' });
  assert.equal(server.requests.length - before, 2, 'one retry');
});

test('openai-compatible: TGI\'s refusals stay what they are: a prompt over its token limits is a context overflow, another validation error a refused request; neither is retried', async () => {
  // TGI validates the request's length after the 200 (router/src/validation.rs ValidationError).
  const cases: [string, string][] = [
    ['Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. Given: 4000 `inputs` tokens and 200 `max_new_tokens`', 'context_overflow'],
    ['Input validation error: `inputs` must have less than 4095 tokens. Given: 5120', 'context_overflow'],
    ['Input validation error: `temperature` must be strictly positive', 'invalid_request'],
  ];
  for (const [message, kind] of cases) {
    const before = server.requests.length;
    server.enqueue({ sse: tgiError(message) });
    await assert.rejects(collect(new OpenAIChatProvider({ baseURL: `${server.url}/v1`, maxRetries: 1 }), request('tgi')), (err) => isProviderError(err, kind as 'invalid_request') && err.vendorMessage === message);
    assert.equal(server.requests.length - before, 1, `${kind}: not retried`);
  }
});

test('openai-compatible: TGI\'s own error body, a string `error` with `error_type`, gives its words as they are, and its kind by them', async () => {
  // TGI's ErrorResponse: the body of its failed HTTP responses, and the stream event of its own
  // /generate_stream (and of its /v1/completions before v2.4.1). The SDK keeps only `error`, a
  // string; until 2026-12-07 the message was that string quoted as JSON, and the failure a refused request.
  const generation = 'Request failed during generation: Server error: CUDA out of memory. Tried to allocate 2.00 GiB';
  server.enqueue({ sse: `data: ${JSON.stringify({ error: generation, error_type: 'generation' })}\n\n` });
  await assert.rejects(collect(new OpenAIChatProvider({ baseURL: `${server.url}/v1`, maxRetries: 0 }), request('tgi')), (err) => isProviderError(err, 'overloaded') && err.vendorMessage === generation);
  // The same validation, answered before any stream (a request not streamed, or through a proxy that
  // buffers): a 422 with TGI's body; a prompt over its limits is still a context overflow.
  const tooLong = 'Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. Given: 4000 `inputs` tokens and 200 `max_new_tokens`';
  server.enqueue({ status: 422, json: { error: tooLong, error_type: 'validation' } });
  await assert.rejects(collect(new OpenAIChatProvider({ baseURL: `${server.url}/v1`, maxRetries: 0 }), request('tgi')), (err) => isProviderError(err, 'context_overflow') && err.status === 422 && err.vendorMessage === tooLong);
  const template = 'Template error: unknown filter: filter tojson is unknown (in <string>:1)';
  server.enqueue({ status: 422, json: { error: template, error_type: 'template_error' } });
  await assert.rejects(collect(new OpenAIChatProvider({ baseURL: `${server.url}/v1`, maxRetries: 0 }), request('tgi')), (err) => isProviderError(err, 'invalid_request') && err.status === 422 && err.vendorMessage === template);
});
