// What the OpenAI adapters send: Responses input items and reasoning replay; Chat Completions messages.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ModelMessage } from '../../../src/core/provider.js';
import { takesMistralIdsOnly } from '../../../src/providers/openai/chat.request.js';
import { OpenAIChatProvider } from '../../../src/providers/openai/openai-chat.provider.js';
import { OpenAIResponsesProvider } from '../../../src/providers/openai/openai-responses.provider.js';
import { fixture, startReplayServer, type ReplayServer } from '../../support/replay-server.js';
import { collect, request } from './provider-contract.js';
import { conversation, MIXED_REASONING, PNG, reasoningOf, SYSTEM } from './conversation.js';

describe('openai adapters: the requests they send', { timeout: 20_000 }, () => {
  let server: ReplayServer;
  before(async () => {
    server = await startReplayServer();
  });
  after(() => server.close());

  test('Responses: stateless request with instructions, function tools and the conversation as items', async () => {
    const provider = new OpenAIResponsesProvider({ apiKey: 'sk-test', baseURL: `${server.url}/v1`, maxRetries: 0 });
    server.enqueue({ sse: fixture('openai-responses-text.sse') });
    await collect(provider, request('gpt-5', { messages: conversation(MIXED_REASONING), thinkingBudget: 8000 }));
    const sent = server.requests.at(-1)!;
    assert.equal(sent.url, '/v1/responses');
    assert.equal(sent.headers.authorization, 'Bearer sk-test');
    const body = sent.body;
    assert.equal(body.stream, true);
    assert.equal(body.store, false);
    assert.equal(body.instructions, SYSTEM);
    assert.deepEqual(body.reasoning, { effort: 'medium', summary: 'auto' });
    assert.deepEqual(body.include, ['reasoning.encrypted_content']);
    assert.deepEqual(body.tools[0], { type: 'function', name: 'read_file', description: 'Read a file', parameters: request('gpt-5').tools[0]!.inputSchema, strict: false });
    assert.deepEqual(body.input, [
      { role: 'user', content: [{ type: 'input_text', text: 'Read src/index.ts' }, { type: 'input_image', image_url: `data:image/png;base64,${PNG}`, detail: 'auto' }] },
      { type: 'reasoning', id: 'rs_1', encrypted_content: 'enc-openai', summary: [{ type: 'summary_text', text: 'I need the file.' }] },
      { role: 'assistant', content: 'Reading it.' },
      { type: 'function_call', call_id: 'call_1', name: 'read_file', arguments: '{"path":"src/index.ts"}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'export {}' },
      { role: 'user', content: [{ type: 'input_text', text: 'Now summarise.' }] },
    ]);
  });

  test('Responses: streamed encrypted reasoning goes back on the next request', async () => {
    const provider = new OpenAIResponsesProvider({ apiKey: 'sk-test', baseURL: `${server.url}/v1`, maxRetries: 0 });
    server.enqueue({ sse: fixture('openai-responses-thinking.sse') });
    const parts = reasoningOf(await collect(provider, request('gpt-5', { thinkingBudget: 2048 })));
    assert.equal(parts.length, 1);
    assert.equal(parts[0]!.id, 'rs_68af4031a2b08193b0e3f1c2d4e5f607');
    server.enqueue({ sse: fixture('openai-responses-text.sse') });
    await collect(provider, request('gpt-5', { messages: [{ role: 'assistant', text: 'Hi there!', toolCalls: [], reasoning: parts }] }));
    const item = server.requests.at(-1)!.body.input[0];
    assert.equal(item.type, 'reasoning');
    assert.equal(item.encrypted_content, 'gAAAAABor0A1ENCRYPTEDREASONINGFIXTURE0000000000==');
  });

  test('Responses: a reply that mixed reasoning, text and calls goes back in the order it came', async () => {
    // The API wants each reasoning item followed by the item it preceded ("Item 'rs_…' of type
    // 'reasoning' was provided without its required following item").
    const provider = new OpenAIResponsesProvider({ apiKey: 'sk-test', baseURL: `${server.url}/v1`, maxRetries: 0 });
    let n = 0;
    const ev = (type: string, fields: object) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: n++, ...fields })}\n\n`;
    const reasoning = (i: number, id: string) => ev('response.output_item.done', { output_index: i, item: { id, type: 'reasoning', summary: [], encrypted_content: `enc-${id}` } });
    const text = (i: number, delta: string) => ev('response.output_text.delta', { item_id: `msg_${i}`, output_index: i, content_index: 0, delta, logprobs: [] });
    const call = { id: 'fc_1', type: 'function_call', status: 'completed', arguments: '{"path":"a.ts"}', call_id: 'call_1', name: 'read_file' };
    const done = { id: 'resp_1', object: 'response', status: 'completed', incomplete_details: null, output: [], usage: null };
    server.enqueue({
      sse:
        reasoning(0, 'rs_1') +
        text(1, "I'll read ") +
        text(1, 'the file.') +
        reasoning(2, 'rs_2') +
        ev('response.output_item.added', { output_index: 3, item: { ...call, status: 'in_progress', arguments: '' } }) +
        ev('response.output_item.done', { output_index: 3, item: call }) +
        reasoning(4, 'rs_3') +
        text(5, 'Reading.') +
        reasoning(6, 'rs_4') +
        ev('response.completed', { response: done }),
    });
    const events = await collect(provider, request('gpt-5', { thinkingBudget: 2048 }));
    // The assistant message as the engine keeps it: the text joined, the calls, the parts in order.
    const reply = {
      role: 'assistant' as const,
      text: events.flatMap((e) => (e.type === 'text_delta' ? [e.text] : [])).join(''),
      toolCalls: events.flatMap((e) => (e.type === 'tool_call_end' ? [{ id: e.id, name: 'read_file', input: e.input }] : [])),
      reasoning: reasoningOf(events),
    };
    server.enqueue({ sse: fixture('openai-responses-text.sse') });
    await collect(provider, request('gpt-5', { messages: [{ role: 'user', content: [{ type: 'text', text: 'Go' }] }, reply] }));
    const input = server.requests.at(-1)!.body.input.slice(1);
    assert.deepEqual(
      input.map((item: { type?: string; id?: string; content?: string; call_id?: string }) => item.id ?? item.call_id ?? item.content),
      ['rs_1', "I'll read the file.", 'rs_2', 'call_1', 'rs_3', 'Reading.'],
      'rs_4, which nothing followed (a reply cut after it), is left out',
    );
  });

  test('Responses: non-reasoning models get no reasoning parameters', async () => {
    const provider = new OpenAIResponsesProvider({ apiKey: 'sk-test', baseURL: `${server.url}/v1`, maxRetries: 0 });
    server.enqueue({ sse: fixture('openai-responses-text.sse') });
    await collect(provider, request('gpt-4.1', { thinkingBudget: 8000 }));
    const body = server.requests.at(-1)!.body;
    assert.equal(body.reasoning, undefined);
    assert.equal(body.include, undefined);
    assert.equal(body.max_output_tokens, 32_768);
  });

  test('Responses: a GPT-5 or GPT-6 id newer than the catalogue is sent images and asked to reason, within its family\'s limits', async () => {
    const provider = new OpenAIResponsesProvider({ apiKey: 'sk-test', baseURL: `${server.url}/v1`, maxRetries: 0 });
    const sent = async (model: string) => {
      server.enqueue({ sse: fixture('openai-responses-text.sse') });
      await collect(provider, request(model, { messages: conversation([]), thinkingBudget: 8000 }));
      const body = server.requests.at(-1)!.body;
      return { reasoning: body.reasoning, max: body.max_output_tokens, image: body.input[0].content[1].type };
    };
    const image = 'input_image';
    for (const model of ['gpt-5.2', 'gpt-5.4-mini', 'gpt-5.1-codex', 'gpt-6-astra']) {
      assert.deepEqual(await sent(model), { reasoning: { effort: 'medium', summary: 'auto' }, max: 128_000, image }, model);
    }
    // ChatGPT's chat models take no reasoning parameter and write at most 16,384 tokens; a pro model
    // reasons at the one effort it allows (a requested one would be refused).
    assert.deepEqual(await sent('gpt-5.2-chat-latest'), { reasoning: undefined, max: 16_384, image });
    assert.deepEqual(await sent('gpt-5-pro'), { reasoning: undefined, max: 128_000, image });
    // Outside those families nothing is guessed: the conservative fallback (no images, no reasoning).
    assert.deepEqual(await sent('o3-mini'), { reasoning: undefined, max: 16_384, image: 'input_text' });
    assert.equal(provider.capabilities('gpt-5.2').pricing, undefined, 'no invented price');
  });

  test('Responses: countTokens uses /responses/input_tokens', async () => {
    const provider = new OpenAIResponsesProvider({ apiKey: 'sk-test', baseURL: `${server.url}/v1`, maxRetries: 0 });
    server.enqueue({ json: { object: 'response.input_tokens', input_tokens: 321 } });
    assert.equal(await provider.countTokens(request('gpt-5', { messages: conversation([]) }), new AbortController().signal), 321);
    const sent = server.requests.at(-1)!;
    assert.equal(sent.url, '/v1/responses/input_tokens');
    assert.equal(sent.body.instructions, SYSTEM);
    assert.equal(sent.body.input.length, 5);
  });

  test('Chat Completions: system message, assistant tool_calls, tool messages, usage requested', async () => {
    // A vision model (the config says it reads images): the image goes as an image_url part.
    const provider = new OpenAIChatProvider({ baseURL: `${server.url}/v1`, maxRetries: 0, models: { 'qwen3-coder': { images: true } } });
    server.enqueue({ sse: fixture('openai-chat-text.sse') });
    await collect(provider, request('qwen3-coder', { messages: conversation(MIXED_REASONING) }));
    const sent = server.requests.at(-1)!;
    assert.equal(sent.url, '/v1/chat/completions');
    const body = sent.body;
    assert.deepEqual(body.stream_options, { include_usage: true });
    assert.equal(body.max_tokens, 4_096, 'unknown local models get the conservative default');
    assert.deepEqual(body.tools[1], { type: 'function', function: { name: 'grep', description: 'Search files', parameters: request('x').tools[1]!.inputSchema } });
    assert.deepEqual(body.messages, [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: [{ type: 'text', text: 'Read src/index.ts' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }] },
      { role: 'assistant', content: 'Reading it.', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"src/index.ts"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: 'export {}' },
      { role: 'user', content: 'Now summarise.' },
    ]);
  });

  test('Chat Completions: a model whose window is configured without an output limit asks for at most a quarter of it', async () => {
    // Until 2026-12-07 4,096 whatever the window: a 4,096-token window was asked for whole as output,
    // and vLLM refused every request ("'max_tokens' … is too large"), a context_overflow no compaction cured.
    const models = { small: { contextWindow: 4_096 }, large: { contextWindow: 131_072 }, stated: { contextWindow: 4_096, maxOutputTokens: 3_000 } };
    const provider = new OpenAIChatProvider({ baseURL: `${server.url}/v1`, maxRetries: 0, models });
    const asked: Record<string, number> = {};
    for (const model of Object.keys(models)) {
      server.enqueue({ sse: fixture('openai-chat-text.sse') });
      await collect(provider, request(model));
      asked[model] = server.requests.at(-1)!.body.max_tokens;
    }
    assert.deepEqual(asked, { small: 1_024, large: 4_096, stated: 3_000 });
  });

  test('a model without images (a session switched to it) gets a line for each image of its history, not the image', async () => {
    // Text-only servers refuse a request with an image (vLLM "not a multimodal model", llama.cpp
    // "image input is not supported"), and the history carries it to every later request.
    const line = '[image (image/png) omitted: the model does not take images]';
    const chat = new OpenAIChatProvider({ baseURL: `${server.url}/v1`, maxRetries: 0 });
    server.enqueue({ sse: fixture('openai-chat-text.sse') });
    await collect(chat, request('qwen3-coder', { messages: conversation([]) }));
    assert.deepEqual(server.requests.at(-1)!.body.messages[1], { role: 'user', content: `Read src/index.ts\n\n${line}` });
    const responses = new OpenAIResponsesProvider({ apiKey: 'sk-test', baseURL: `${server.url}/v1`, maxRetries: 0, models: { 'gpt-4.1': { images: false } } });
    server.enqueue({ sse: fixture('openai-responses-text.sse') });
    await collect(responses, request('gpt-4.1', { messages: conversation([]) }));
    assert.deepEqual(server.requests.at(-1)!.body.input[0], { role: 'user', content: [{ type: 'input_text', text: 'Read src/index.ts' }, { type: 'input_text', text: line }] });
  });

  test('Chat Completions: a reply that held only reasoning, or nothing, is left out; the user turns around it are one', async () => {
    const provider = new OpenAIChatProvider({ baseURL: `${server.url}/v1`, maxRetries: 0 });
    server.enqueue({ sse: fixture('openai-chat-text.sse') });
    const user = (text: string) => ({ role: 'user' as const, content: [{ type: 'text' as const, text }] });
    await collect(
      provider,
      request('qwen3-coder', {
        messages: [user('one'), { role: 'assistant', text: '', thinking: 'hmm, thinking', toolCalls: [] }, user('two'), { role: 'assistant', text: '', toolCalls: [] }, user('three')],
      }),
    );
    // Not {"role":"assistant","content":null}: content may be null only beside tool_calls.
    assert.deepEqual(server.requests.at(-1)!.body.messages, [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: 'one\n\ntwo\n\nthree' },
    ]);
  });

  test('Chat Completions: a failed tool result says so, since the format has no error flag', async () => {
    const provider = new OpenAIChatProvider({ baseURL: `${server.url}/v1`, maxRetries: 0 });
    server.enqueue({ sse: fixture('openai-chat-text.sse') });
    const messages = conversation([]);
    messages[2] = { role: 'tool', results: [{ toolCallId: 'call_1', name: 'read_file', output: 'ENOENT', isError: true }] };
    await collect(provider, request('qwen3-coder', { messages }));
    assert.equal(server.requests.at(-1)!.body.messages[3].content, 'Error: ENOENT');
  });
  test('Chat Completions to a Mistral model: tool call ids of other vendors go as 9 letters and digits, the same for a call and its result, request after request', async () => {
    // Mistral refuses any other id ("Tool call id was toolu_01… but must be a-z, A-Z, 0-9, with a
    // length of 9."), so a session switched to it from Claude or GPT was refused on every turn.
    const provider = new OpenAIChatProvider({ baseURL: `${server.url}/v1`, maxRetries: 0 });
    const ids = ['toolu_01A09q90qw90lq917835lq9', 'call_Xk2', 'aB3xK9mP2', 'gemini-call-1'];
    const messages: ModelMessage[] = [{ role: 'user', content: [{ type: 'text', text: 'Look around' }] }];
    for (const id of ids) {
      messages.push({ role: 'assistant', text: '', toolCalls: [{ id, name: 'read_file', input: { path: id } }] });
      messages.push({ role: 'tool', results: [{ toolCallId: id, name: 'read_file', output: 'ok', isError: false }] });
    }
    const sentIds = async (model: string) => {
      server.enqueue({ sse: fixture('openai-chat-text.sse') });
      await collect(provider, request(model, { messages }));
      const sent = server.requests.at(-1)!.body.messages.slice(2);
      return sent.map((m: any) => (m.role === 'tool' ? m.tool_call_id : m.tool_calls[0].id));
    };
    const mistral = await sentIds('mistral-small-latest');
    assert.equal(mistral.length, 8);
    for (const id of mistral) assert.match(id, /^[a-zA-Z0-9]{9}$/);
    for (let i = 0; i < 8; i += 2) assert.equal(mistral[i], mistral[i + 1], 'a call and its result keep one id');
    assert.equal(mistral[4], 'aB3xK9mP2', 'an id Mistral takes goes as it is');
    assert.equal(new Set(mistral).size, 4, 'distinct calls keep distinct ids');
    assert.deepEqual(await sentIds('mistralai/devstral-small-2507'), mistral, 'the same ids on the next request, and for the family on a gateway');
    // Other servers take any id: theirs go as they came.
    assert.deepEqual(await sentIds('qwen3-coder'), ids.flatMap((id) => [id, id]));
  });

  test('Mistral\'s API is known by its host, whatever the model is called; a local server by the model', () => {
    assert.equal(takesMistralIdsOnly('my-finetune', 'https://api.mistral.ai/v1'), true);
    assert.equal(takesMistralIdsOnly('my-finetune', 'http://127.0.0.1:11434/v1'), false);
    assert.equal(takesMistralIdsOnly('devstral:24b', 'http://127.0.0.1:11434/v1'), true);
    assert.equal(takesMistralIdsOnly('qwen3-coder', 'not a url'), false);
  });
});
