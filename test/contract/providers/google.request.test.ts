// What the Gemini adapter sends: systemInstruction, function declarations, function responses,
// thought signatures returned on their parts, and the streaming URL.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { GoogleProvider } from '../../../src/providers/google/google.provider.js';
import { fixture, startReplayServer, type ReplayServer } from '../../support/replay-server.js';
import { collect, request } from './provider-contract.js';
import { conversation, MIXED_REASONING, PNG, reasoningOf, SYSTEM } from './conversation.js';

describe('google adapter: the request it sends', { timeout: 20_000 }, () => {
  let server: ReplayServer;
  let provider: GoogleProvider;
  before(async () => {
    server = await startReplayServer();
    provider = new GoogleProvider({ apiKey: 'AIza-test', baseURL: server.url, maxRetries: 0 });
  });
  after(() => server.close());

  test('streamGenerateContent with system instruction, declarations and the conversation', async () => {
    server.enqueue({ sse: fixture('google-text.sse') });
    await collect(provider, request('gemini-2.5-pro', { messages: conversation(MIXED_REASONING), thinkingBudget: 2048 }));
    const sent = server.requests.at(-1)!;
    // The API version (v1 or v1beta) is the SDK's choice.
    assert.match(sent.url, /^\/v1(beta)?\/models\/gemini-2\.5-pro:streamGenerateContent\?alt=sse$/);
    assert.equal(sent.headers['x-goog-api-key'], 'AIza-test');
    const body = sent.body;
    assert.deepEqual(body.systemInstruction.parts, [{ text: SYSTEM }]);
    assert.deepEqual(body.tools[0].functionDeclarations[0], { name: 'read_file', description: 'Read a file', parametersJsonSchema: request('x').tools[0]!.inputSchema });
    assert.deepEqual(body.generationConfig.thinkingConfig, { includeThoughts: true, thinkingBudget: 2048 });
    assert.deepEqual(body.contents, [
      { role: 'user', parts: [{ text: 'Read src/index.ts' }, { inlineData: { mimeType: 'image/png', data: PNG } }] },
      {
        role: 'model',
        parts: [{ text: 'Reading it.' }, { functionCall: { id: 'call_1', name: 'read_file', args: { path: 'src/index.ts' } }, thoughtSignature: 'sig-google' }],
      },
      { role: 'user', parts: [{ functionResponse: { id: 'call_1', name: 'read_file', response: { output: 'export {}' } } }, { text: 'Now summarise.' }] },
    ]);
  });

  test('calls Gemini sent without ids go back without ids, with their thought signature', async () => {
    server.enqueue({ sse: fixture('google-tools.sse') });
    const events = await collect(provider, request('gemini-2.5-pro'));
    const ends = events.flatMap((e) => (e.type === 'tool_call_end' ? [e] : []));
    const parts = reasoningOf(events);
    assert.equal(parts.length, 1);
    assert.equal(parts[0]!.id, ends[0]!.id, 'the signature belongs to the first call');
    server.enqueue({ sse: fixture('google-text.sse') });
    await collect(
      provider,
      request('gemini-2.5-pro', {
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Look' }] },
          { role: 'assistant', text: '', toolCalls: ends.map((e, i) => ({ id: e.id, name: i === 0 ? 'read_file' : 'grep', input: e.input })), reasoning: parts },
          { role: 'tool', results: ends.map((e, i) => ({ toolCallId: e.id, name: i === 0 ? 'read_file' : 'grep', output: 'ok', isError: i === 1 })) },
        ],
      }),
    );
    const [, model, results] = server.requests.at(-1)!.body.contents;
    assert.deepEqual(model.parts, [
      { functionCall: { name: 'read_file', args: { path: 'src/index.ts' } }, thoughtSignature: 'CiQB0e2Kb5FUNCTIONCALLSIGNATUREFIXTURE00000000BBBB' },
      { functionCall: { name: 'grep', args: { pattern: 'TODO', path: 'src' } } },
    ]);
    assert.deepEqual(results.parts, [
      { functionResponse: { name: 'read_file', response: { output: 'ok' } } },
      { functionResponse: { name: 'grep', response: { error: 'ok' } } },
    ]);
  });

  test('thought signatures go back on the thought they came on, and the text signature on the text', async () => {
    const chunk = (parts: object[], extra: object = {}) =>
      `data: ${JSON.stringify({ candidates: [{ content: { parts, role: 'model' }, index: 0, ...extra }], usageMetadata: { promptTokenCount: 40, totalTokenCount: 40 }, modelVersion: 'gemini-2.5-pro' })}\r\n\r\n`;
    // Two thought runs: one signed on its own part, one closed by an empty thought part that carries
    // only the signature; then the answer, signed on its last part.
    server.enqueue({
      sse:
        chunk([{ text: 'The user greets me. ', thought: true, thoughtSignature: 'SIG-THOUGHT-A' }]) +
        chunk([{ text: 'I should greet back.', thought: true }]) +
        chunk([{ text: '', thought: true, thoughtSignature: 'SIG-THOUGHT-B' }]) +
        chunk([{ text: 'Hi ' }]) +
        chunk([{ text: 'there!', thoughtSignature: 'SIG-TEXT' }], { finishReason: 'STOP' }),
    });
    const first = request('gemini-2.5-pro', { thinkingBudget: 1024 });
    const events = await collect(provider, first);
    const said = (type: 'text_delta' | 'thinking_delta') => events.flatMap((e) => (e.type === type ? [e.text] : [])).join('');
    assert.equal(said('thinking_delta'), 'The user greets me. I should greet back.');
    // The next turn, with the assistant message as the engine keeps it.
    server.enqueue({ sse: fixture('google-text.sse') });
    await collect(
      provider,
      request('gemini-2.5-pro', {
        thinkingBudget: 1024,
        messages: [
          ...first.messages,
          { role: 'assistant', text: said('text_delta'), thinking: said('thinking_delta'), toolCalls: [], reasoning: reasoningOf(events) },
          { role: 'user', content: [{ type: 'text', text: 'And now?' }] },
        ],
      }),
    );
    const [, model] = server.requests.at(-1)!.body.contents;
    assert.deepEqual(model, {
      role: 'model',
      parts: [
        { thought: true, text: 'The user greets me. ', thoughtSignature: 'SIG-THOUGHT-A' },
        { thought: true, text: 'I should greet back.', thoughtSignature: 'SIG-THOUGHT-B' },
        { text: 'Hi there!', thoughtSignature: 'SIG-TEXT' },
      ],
    });
  });

  test('the one thinking budget of the config is fitted to each catalogue model\'s documented range', async () => {
    // providers.google.thinkingBudget applies to every Gemini model, and their ranges differ
    // (2.5 Pro 128 to 32768, 2.5 Flash 0 to 24576, 2.5 Flash-Lite 512 to 24576); Gemini refuses a
    // budget outside them on every turn.
    const sent = async (model: string, thinkingBudget: number) => {
      server.enqueue({ sse: fixture('google-text.sse') });
      await collect(provider, request(model, { thinkingBudget }));
      return server.requests.at(-1)!.body.generationConfig.thinkingConfig;
    };
    assert.deepEqual(await sent('gemini-2.5-flash', 32_768), { includeThoughts: true, thinkingBudget: 24_576 });
    assert.deepEqual(await sent('gemini-2.5-pro', 65_536), { includeThoughts: true, thinkingBudget: 32_768 });
    assert.deepEqual(await sent('gemini-2.5-pro', 64), { includeThoughts: true, thinkingBudget: 128 });
    assert.deepEqual(await sent('gemini-2.5-flash-lite-001', 100), { includeThoughts: true, thinkingBudget: 512 });
    assert.deepEqual(await sent('gemini-2.5-flash', 8_192), { includeThoughts: true, thinkingBudget: 8_192 }, 'a budget in range goes as it is');
  });

  test('countTokens counts system prompt and tools as a leading turn', async () => {
    server.enqueue({ json: { totalTokens: 777 } });
    assert.equal(await provider.countTokens(request('gemini-2.5-pro', { messages: conversation([]) }), new AbortController().signal), 777);
    const sent = server.requests.at(-1)!;
    assert.match(sent.url, /^\/v1(beta)?\/models\/gemini-2\.5-pro:countTokens$/);
    assert.ok(sent.body.contents[0].parts[0].text.startsWith(SYSTEM));
    assert.match(sent.body.contents[0].parts[0].text, /"name":"grep"/);
  });

  test('GOOGLE_GENAI_API_VERSION=beta selects the v1beta API (docs/providers.md)', async (t) => {
    // Read when a client is made: the adapter must not pin a version of its own over it.
    const saved = process.env.GOOGLE_GENAI_API_VERSION;
    t.after(() => (saved === undefined ? delete process.env.GOOGLE_GENAI_API_VERSION : (process.env.GOOGLE_GENAI_API_VERSION = saved)));
    process.env.GOOGLE_GENAI_API_VERSION = 'beta';
    const beta = new GoogleProvider({ apiKey: 'AIza-test', baseURL: server.url, maxRetries: 0 });
    server.enqueue({ sse: fixture('google-text.sse') });
    await collect(beta, request('gemini-2.5-pro'));
    assert.match(server.requests.at(-1)!.url, /^\/v1beta\/models\/gemini-2\.5-pro:streamGenerateContent\?alt=sse$/);
  });
});
