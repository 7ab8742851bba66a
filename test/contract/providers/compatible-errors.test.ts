// What OpenAI-compatible servers answer when a request does not fit their context or the model
// fails, in the shapes llama.cpp's server and text-generation-inference (TGI) really send, through
// the openai SDK against the replay server: the kind each becomes, and whether the request is sent
// again (by the SDK before the stream starts, by troupe before anything reached the caller).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { isProviderError, type ProviderEvent } from '../../../src/core/provider.js';
import { OpenAIChatProvider } from '../../../src/providers/openai/openai-chat.provider.js';
import { fixture, sseEvents, startReplayServer, type ReplayServer } from '../../support/replay-server.js';
import { collect, failure, request } from './provider-contract.js';

let server: ReplayServer;
before(async () => {
  server = await startReplayServer();
});
after(() => server.close());

const chat = (maxRetries: number) => new OpenAIChatProvider({ baseURL: `${server.url}/v1`, maxRetries });

// llama.cpp's server when its context fills as it reads the prompt or writes the reply (a decode
// that finds no free cell of the KV cache; tools/server/server-context.cpp): its error object of a
// failure of the server, `format_error_response(err, ERROR_TYPE_SERVER)`, as an HTTP 500 when it
// fails before the reply starts, or as an SSE `data:` event after the 200 once it has streamed.
const FULL = 'Context size has been exceeded.';
const LLAMA_FULL = { error: { code: 500, message: FULL, type: 'server_error' } };

test('openai-compatible: llama.cpp\'s "Context size has been exceeded." as an HTTP 500 is a context overflow, and is not sent again', async () => {
  const before = server.requests.length;
  server.enqueue({ status: 500, json: LLAMA_FULL });
  // The SDK retries every 5xx by itself (a request sent again would meet the replay server's 599).
  const error = await failure(chat(2), request('qwen3'));
  assert.ok(isProviderError(error, 'context_overflow') && error.status === 500 && error.vendorMessage === FULL, String(error));
  assert.equal(server.requests.length - before, 1, 'one request: the session compacts, nothing sends it again as it is');
});

test('openai-compatible: llama.cpp\'s "Context size has been exceeded." inside the stream is a context overflow, before any text or after some; the text stays, nothing is retried', async () => {
  const [role, hello] = sseEvents(fixture('openai-chat-text.sse'));
  const event = `data: ${JSON.stringify(LLAMA_FULL)}\n\n`;
  for (const [label, sse, said] of [
    ['before any text', `${role}${event}`, ''],
    ['after some text', `${role}${hello}${event}`, 'Hello! '],
  ] as const) {
    const before = server.requests.length;
    server.enqueue({ sse });
    const seen: ProviderEvent[] = [];
    const error = await failure(chat(1), request('qwen3'), seen);
    assert.ok(isProviderError(error, 'context_overflow') && error.vendorMessage === FULL, `${label}: ${String(error)}`);
    assert.equal(seen.flatMap((e) => (e.type === 'text_delta' ? [e.text] : [])).join(''), said, label);
    assert.equal(server.requests.length - before, 1, `${label}: not retried`);
  }
});

// TGI's answer to a request whose generation failed in its model shard (router/src/server.rs, `impl
// From<InferError> for (StatusCode, Json<ErrorResponse>)`: GenerationError is 424 FAILED_DEPENDENCY,
// its body an ErrorResponse), as it answers a request it does not stream, and as gateways in front
// of a model server say their model failed.
const GENERATION = 'Request failed during generation: Server error: CUDA out of memory. Tried to allocate 2.00 GiB';
const TGI_424 = { status: 424, json: { error: GENERATION, error_type: 'generation' } };

test('openai-compatible: TGI\'s 424 (a failed generation) is a failure of the server, not a refused request, and is retried', async () => {
  server.enqueue(TGI_424);
  const error = await failure(chat(0), request('tgi'));
  assert.ok(isProviderError(error, 'overloaded') && error.status === 424 && error.vendorMessage === GENERATION, String(error));
  const before = server.requests.length;
  server.enqueue(TGI_424, { sse: fixture('openai-chat-text.sse') });
  const events = await collect(chat(1), request('tgi'));
  assert.deepEqual(events.at(-1), { type: 'stop', reason: 'end_turn' });
  assert.equal(server.requests.length - before, 2, 'one retry');
});

test('openai-compatible: a 500 that does not say the context is full is still retried by the SDK', async () => {
  const before = server.requests.length;
  server.enqueue({ status: 500, json: { error: { code: 500, message: 'Compute error.', type: 'server_error' } } }, { sse: fixture('openai-chat-text.sse') });
  const events = await collect(chat(1), request('qwen3'));
  assert.deepEqual(events.at(-1), { type: 'stop', reason: 'end_turn' });
  assert.equal(server.requests.length - before, 2, 'one retry');
});
