// Streams from servers that speak a vendor's format loosely (gateways, OpenAI- and
// Anthropic-compatible endpoints), through the real SDKs: what they leave out must not end the turn.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { AnthropicProvider } from '../../../src/providers/anthropic/anthropic.provider.js';
import { OpenAIChatProvider } from '../../../src/providers/openai/openai-chat.provider.js';
import { OpenAIResponsesProvider } from '../../../src/providers/openai/openai-responses.provider.js';
import { toChatMessages } from '../../../src/providers/openai/chat.request.js';
import { startReplayServer, type ReplayServer } from '../../support/replay-server.js';
import { collect, request } from './provider-contract.js';

let server: ReplayServer;
before(async () => {
  server = await startReplayServer();
});
after(() => server.close());

const sse = (events: [string, object][]) => events.map(([name, data]) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`).join('');

test('anthropic-compatible: a message_start and a message_delta without usage (MiniMax, GLM gateways) still end the turn, counting what was said', async () => {
  // https://github.com/earendil-works/pi/issues/6567: MiniMax's /anthropic endpoint sends message_delta without usage.
  server.enqueue({
    sse: sse([
      ['message_start', { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], model: 'MiniMax-M3', stop_reason: null, stop_sequence: null } }],
      ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }],
      ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello!' } }],
      ['content_block_stop', { type: 'content_block_stop', index: 0 }],
      ['message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null } }],
      ['message_stop', { type: 'message_stop' }],
    ]),
  });
  const provider = new AnthropicProvider({ apiKey: 'k', baseURL: server.url, maxRetries: 0 });
  const events = await collect(provider, request('MiniMax-M3'));
  assert.deepEqual(events, [
    { type: 'text_delta', text: 'Hello!' },
    { type: 'usage', inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
    { type: 'stop', reason: 'end_turn' },
  ]);
});

test('anthropic-compatible: a tool_use whose input comes whole in content_block_start, with no input_json_delta, runs with that input, not {}', async () => {
  server.enqueue({
    sse: sse([
      ['message_start', { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], model: 'm', stop_reason: null, stop_sequence: null, usage: { input_tokens: 9, output_tokens: 1 } } }],
      ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'src/index.ts' } } }],
      ['content_block_stop', { type: 'content_block_stop', index: 0 }],
      ['message_delta', { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 12 } }],
      ['message_stop', { type: 'message_stop' }],
    ]),
  });
  const provider = new AnthropicProvider({ apiKey: 'k', baseURL: server.url, maxRetries: 0 });
  const events = await collect(provider, request('gateway-model'));
  assert.deepEqual(
    events.filter((e) => e.type.startsWith('tool_call')),
    [
      { type: 'tool_call_start', id: 'toolu_1', name: 'read_file' },
      { type: 'tool_call_delta', id: 'toolu_1', argsDelta: '{"path":"src/index.ts"}' },
      { type: 'tool_call_end', id: 'toolu_1', input: { path: 'src/index.ts' } },
    ],
  );
  assert.deepEqual(events.at(-1), { type: 'stop', reason: 'tool_use' });
});

test('openai-compatible: chunks without choices (Groq usage frames), with choices null (MiniMax) and choices without delta (Azure content filter) are read past', async () => {
  const chunk = (rest: object) => `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1775700000, model: 'm', ...rest })}\n\n`;
  server.enqueue({
    sse:
      chunk({ choices: [{ index: 0, delta: { role: 'assistant', content: 'Hello' }, finish_reason: null }] }) +
      // Azure: a content-filter result for the text so far, a choice with no delta.
      chunk({ choices: [{ index: 0, finish_reason: null, content_filter_offsets: { check_offset: 0, start_offset: 0, end_offset: 5 }, content_filter_results: { hate: { filtered: false, severity: 'safe' } } }] }) +
      chunk({ choices: null }) +
      chunk({ choices: [{ index: 0, delta: { content: ' there' }, finish_reason: null }] }) +
      // A finish chunk without delta.
      chunk({ choices: [{ index: 0, finish_reason: 'stop' }] }) +
      // Groq: the usage frame has no choices at all.
      chunk({ x_groq: { id: 'req_1' }, usage: { prompt_tokens: 30, completion_tokens: 2, total_tokens: 32 } }) +
      'data: [DONE]\n\n',
  });
  const provider = new OpenAIChatProvider({ baseURL: `${server.url}/v1`, maxRetries: 0 });
  const events = await collect(provider, request('m'));
  assert.deepEqual(events, [
    { type: 'text_delta', text: 'Hello' },
    { type: 'text_delta', text: ' there' },
    { type: 'usage', inputTokens: 30, outputTokens: 2, cacheReadTokens: 0 },
    { type: 'stop', reason: 'end_turn' },
  ]);
});

test('openai-compatible: content streamed as a list of typed parts (Mistral Magistral) is its thinking and its text, not a list', async () => {
  // https://github.com/BerriAI/litellm/issues/16272: magistral-medium-2509 streams thoughts so.
  const chunk = (delta: object, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1762355135, model: 'magistral-medium-2509', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  server.enqueue({
    sse:
      chunk({ role: 'assistant', content: [{ type: 'thinking', thinking: [{ type: 'text', text: "It's a greeting" }] }] }) +
      chunk({ content: [{ type: 'thinking', thinking: [{ type: 'text', text: ', I should return one.' }] }] }) +
      chunk({ content: [{ type: 'text', text: 'Hello' }] }) +
      chunk({ content: ' there!' }) +
      chunk({}, 'stop') +
      'data: [DONE]\n\n',
  });
  const provider = new OpenAIChatProvider({ baseURL: `${server.url}/v1`, maxRetries: 0 });
  const events = await collect(provider, request('magistral-medium-2509'));
  assert.deepEqual(events, [
    { type: 'thinking_delta', text: "It's a greeting" },
    { type: 'thinking_delta', text: ', I should return one.' },
    { type: 'text_delta', text: 'Hello' },
    { type: 'text_delta', text: ' there!' },
    { type: 'stop', reason: 'end_turn' },
  ]);
});

test('openai-compatible: thoughts streamed as reasoning_content are kept to go back in that field; thoughts streamed as reasoning (Groq, Ollama) are not', async () => {
  const chunk = (delta: object, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const provider = new OpenAIChatProvider({ baseURL: `${server.url}/v1`, maxRetries: 0 });
  server.enqueue({ sse: chunk({ reasoning_content: 'Think' }) + chunk({ reasoning_content: 'ing.' }) + chunk({ content: 'Hi' }) + chunk({}, 'stop') + 'data: [DONE]\n\n' });
  const parts = (await collect(provider, request('deepseek-v4-flash'))).filter((e) => e.type === 'reasoning_part');
  assert.deepEqual(parts, [{ type: 'reasoning_part', part: { provider: 'openai-compatible', kind: 'reasoning_content', text: 'Thinking.' } }]);
  server.enqueue({ sse: chunk({ reasoning: 'Thinking.' }) + chunk({ content: 'Hi' }) + chunk({}, 'stop') + 'data: [DONE]\n\n' });
  assert.deepEqual((await collect(provider, request('openai/gpt-oss-120b'))).filter((e) => e.type === 'reasoning_part'), []);

  // Back: only this adapter's own parts (a model switch leaves another vendor's reasoning behind).
  const reply = (provider: string) => ({
    role: 'assistant' as const,
    text: '',
    toolCalls: [{ id: 'call_1', name: 'read_file', input: { path: 'a' } }],
    reasoning: [{ provider, kind: 'reasoning_content', text: 'Thinking.' }],
  });
  assert.equal((toChatMessages([reply('openai-compatible')], false)[0] as any).reasoning_content, 'Thinking.');
  assert.equal('reasoning_content' in toChatMessages([reply('anthropic')], false)[0]!, false);
});

test('openai-compatible: a usage with only some counts gives 0 for the missing ones, not NaN', async () => {
  const chunk = (rest: object) => `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1775700000, model: 'm', ...rest })}\n\n`;
  const provider = new OpenAIChatProvider({ baseURL: `${server.url}/v1`, maxRetries: 0 });
  for (const [sent, expected] of [
    [{ completion_tokens: 2 }, { inputTokens: 0, outputTokens: 2 }],
    [{ prompt_tokens: 30 }, { inputTokens: 30, outputTokens: 0 }],
    [{ total_tokens: 32 }, { inputTokens: 0, outputTokens: 0 }],
  ] as const) {
    server.enqueue({ sse: chunk({ choices: [{ index: 0, delta: { content: 'Hi' }, finish_reason: 'stop' }], usage: sent }) + 'data: [DONE]\n\n' });
    const events = await collect(provider, request('m'));
    assert.deepEqual(events, [{ type: 'text_delta', text: 'Hi' }, { type: 'usage', ...expected, cacheReadTokens: 0 }, { type: 'stop', reason: 'end_turn' }], JSON.stringify(sent));
  }
});

test('openai-responses-compatible: a usage with only some counts gives 0 for the missing ones, not NaN', async () => {
  const provider = new OpenAIResponsesProvider({ apiKey: 'k', baseURL: `${server.url}/v1`, maxRetries: 0 });
  const response = { id: 'resp_1', object: 'response', created_at: 1775700000, status: 'completed', error: null, incomplete_details: null, model: 'm', output: [] };
  for (const [usage, expected] of [
    [{ output_tokens: 3 }, { inputTokens: 0, outputTokens: 3 }],
    [{ input_tokens: 12 }, { inputTokens: 12, outputTokens: 0 }],
  ] as const) {
    server.enqueue({
      sse: sse([
        ['response.output_text.delta', { type: 'response.output_text.delta', item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'Hi', sequence_number: 1 }],
        ['response.completed', { type: 'response.completed', response: { ...response, usage }, sequence_number: 2 }],
      ]),
    });
    const events = await collect(provider, request('m'));
    assert.deepEqual(events, [{ type: 'text_delta', text: 'Hi' }, { type: 'usage', ...expected, cacheReadTokens: 0 }, { type: 'stop', reason: 'end_turn' }], JSON.stringify(usage));
  }
});
