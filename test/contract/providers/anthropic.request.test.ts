// What the Anthropic adapter sends: cache breakpoints, system, tools, tool results, thinking replay.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { AnthropicProvider } from '../../../src/providers/anthropic/anthropic.provider.js';
import { fixture, startReplayServer, type ReplayServer } from '../../support/replay-server.js';
import { collect, request } from './provider-contract.js';
import { conversation, MIXED_REASONING, PNG, reasoningOf, SYSTEM } from './conversation.js';

const EPHEMERAL = { type: 'ephemeral' };

describe('anthropic adapter: the request it sends', { timeout: 20_000 }, () => {
  let server: ReplayServer;
  let provider: AnthropicProvider;
  before(async () => {
    server = await startReplayServer();
    provider = new AnthropicProvider({ apiKey: 'sk-ant-test', baseURL: server.url, maxRetries: 0 });
  });
  after(() => server.close());

  test('system and tools carry cache_control; the conversation is converted in order', async () => {
    server.enqueue({ sse: fixture('anthropic-text.sse') });
    await collect(provider, request('claude-haiku-4-5', { messages: conversation(MIXED_REASONING), thinkingBudget: 2048 }));
    const sent = server.requests.at(-1)!;
    assert.equal(sent.url, '/v1/messages');
    // SDK 1.x sends the API key as a bearer token; older ones used x-api-key.
    assert.ok([sent.headers['x-api-key'], sent.headers.authorization].some((v) => String(v).includes('sk-ant-test')));
    const body = sent.body;
    assert.equal(body.stream, true);
    assert.equal(body.model, 'claude-haiku-4-5');
    assert.deepEqual(body.system, [{ type: 'text', text: SYSTEM, cache_control: EPHEMERAL }]);
    assert.equal(body.tools.length, 2);
    assert.equal(body.tools[0].cache_control, undefined);
    assert.deepEqual(body.tools[1].cache_control, EPHEMERAL, 'the breakpoint on the last tool caches every tool');
    assert.equal(body.tools[0].input_schema.required[0], 'path');
    assert.deepEqual(body.thinking, { type: 'enabled', budget_tokens: 2048 });
    assert.ok(body.max_tokens > 2048);
    assert.deepEqual(body.messages, [
      { role: 'user', content: [{ type: 'text', text: 'Read src/index.ts' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } }] },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'I need the file.', signature: 'sig-anthropic' },
          { type: 'text', text: 'Reading it.' },
          { type: 'tool_use', id: 'call_1', name: 'read_file', input: { path: 'src/index.ts' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_1', content: 'export {}', is_error: false },
          { type: 'text', text: 'Now summarise.', cache_control: EPHEMERAL },
        ],
      },
    ]);
  });

  test('a streamed thinking block goes back with its signature on the next request', async () => {
    server.enqueue({ sse: fixture('anthropic-thinking.sse') });
    const events = await collect(provider, request('claude-haiku-4-5', { thinkingBudget: 2048 }));
    const parts = reasoningOf(events);
    assert.equal(parts.length, 1);
    assert.match(parts[0]!.data!, /^EqQBCgIYAhIM/);
    server.enqueue({ sse: fixture('anthropic-text.sse') });
    const next = request('claude-haiku-4-5', {
      thinkingBudget: 2048,
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Hello' }] },
        { role: 'assistant', text: 'Hi there!', toolCalls: [], reasoning: parts },
        { role: 'user', content: [{ type: 'text', text: 'Again' }] },
      ],
    });
    await collect(provider, next);
    const assistant = server.requests.at(-1)!.body.messages[1];
    assert.deepEqual(assistant.content[0], { type: 'thinking', thinking: 'The user greets me. I should greet back.', signature: parts[0]!.data });
  });

  test('a reply that held only thinking (cut by max_tokens, or cancelled) is left out; the user turns around it are one', async () => {
    // Anthropic refuses an assistant message whose last block is thinking ("The final block in an
    // assistant message cannot be `thinking`"), and the reply stays in the history.
    server.enqueue({ sse: fixture('anthropic-text.sse') });
    const user = (text: string) => ({ role: 'user' as const, content: [{ type: 'text' as const, text }] });
    const thinking = { provider: 'anthropic', kind: 'thinking', text: 'Let me think.', data: 'sig-1' };
    const redacted = { provider: 'anthropic', kind: 'redacted_thinking', data: 'opaque' };
    await collect(
      provider,
      request('claude-haiku-4-5', {
        thinkingBudget: 2048,
        messages: [
          user('one'),
          { role: 'assistant', text: '', toolCalls: [], reasoning: [thinking, redacted] },
          user('two'),
          { role: 'assistant', text: '\n\n', toolCalls: [], reasoning: [thinking] },
          user('three'),
        ],
      }),
    );
    assert.deepEqual(server.requests.at(-1)!.body.messages, [
      { role: 'user', content: [{ type: 'text', text: 'one' }, { type: 'text', text: 'two' }, { type: 'text', text: 'three', cache_control: EPHEMERAL }] },
    ]);
  });

  test('an empty tool result at the end carries no cache_control: the breakpoint goes on the block before it', async () => {
    // Anthropic refuses cache_control on an empty block ("cache_control cannot be set for empty text blocks").
    server.enqueue({ sse: fixture('anthropic-text.sse') });
    const messages = conversation([]).slice(0, 3);
    messages[2] = { role: 'tool', results: [{ toolCallId: 'call_1', name: 'read_file', output: '', isError: false }] };
    await collect(provider, request('claude-haiku-4-5', { messages }));
    const sent = server.requests.at(-1)!.body.messages;
    assert.deepEqual(sent[2].content, [{ type: 'tool_result', tool_use_id: 'call_1', content: '', is_error: false }]);
    assert.deepEqual(sent[1].content.at(-1).cache_control, EPHEMERAL, 'the tool call before it is the breakpoint');
  });

  test('adaptive-thinking models get {type:"adaptive", display:"summarized"}; no budget means no thinking', async () => {
    server.enqueue({ sse: fixture('anthropic-text.sse') }, { sse: fixture('anthropic-text.sse') });
    await collect(provider, request('claude-sonnet-5-5', { thinkingBudget: 4096 }));
    assert.deepEqual(server.requests.at(-1)!.body.thinking, { type: 'adaptive', display: 'summarized' });
    await collect(provider, request('claude-sonnet-5-5'));
    assert.equal(server.requests.at(-1)!.body.thinking, undefined);
  });

  test('the 4.6 models, on which Anthropic deprecated budget_tokens, get adaptive thinking too', async () => {
    for (const model of ['claude-opus-4-6', 'claude-sonnet-4-6']) {
      server.enqueue({ sse: fixture('anthropic-text.sse') });
      await collect(provider, request(model, { thinkingBudget: 8000 }));
      assert.deepEqual(server.requests.at(-1)!.body.thinking, { type: 'adaptive', display: 'summarized' }, model);
    }
  });

  test('thinking budgets are fitted to the API rules: at least 1024, below max_tokens', async () => {
    server.enqueue({ sse: fixture('anthropic-text.sse') }, { sse: fixture('anthropic-text.sse') });
    await collect(provider, request('claude-haiku-4-5', { thinkingBudget: 4096, maxOutputTokens: 2000 }));
    let body = server.requests.at(-1)!.body;
    assert.deepEqual(body.thinking, { type: 'enabled', budget_tokens: 4096 });
    assert.equal(body.max_tokens, 5120, 'max_tokens is raised above the budget, within the model limit');
    await collect(provider, request('claude-haiku-4-5', { thinkingBudget: 300 }));
    body = server.requests.at(-1)!.body;
    assert.deepEqual(body.thinking, { type: 'enabled', budget_tokens: 1024 });
    assert.equal(body.max_tokens, 64_000);
  });

  test('countTokens uses the count_tokens endpoint with the same body', async () => {
    server.enqueue({ json: { input_tokens: 1234 } });
    const n = await provider.countTokens(request('claude-haiku-4-5', { messages: conversation([]) }), new AbortController().signal);
    assert.equal(n, 1234);
    const sent = server.requests.at(-1)!;
    assert.equal(sent.url, '/v1/messages/count_tokens');
    assert.equal(sent.body.max_tokens, undefined);
    assert.equal(sent.body.messages.length, 3);
    assert.equal(sent.body.tools.length, 2);
  });

  test('without a credential the adapter reports auth and sends nothing', async () => {
    const before = server.requests.length;
    const keyless = new AnthropicProvider({ baseURL: server.url });
    await assert.rejects(collect(keyless, request('claude-haiku-4-5')), (err: Error & { kind?: string }) => err.kind === 'auth');
    assert.equal(server.requests.length, before);
  });
});
