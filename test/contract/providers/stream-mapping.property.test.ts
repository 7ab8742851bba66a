// Stream mappers under arbitrary chunking: however a vendor splits tool arguments, the call ends
// with exactly the arguments sent; stop reasons and malformed arguments map as documented.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ARGS_DELTA_BYTES, isProviderError, type ProviderEvent } from '../../../src/core/provider.js';
import { mapAnthropicStream } from '../../../src/providers/anthropic/anthropic.stream.js';
import { mapChatStream } from '../../../src/providers/openai/chat.stream.js';
import { mapGoogleStream } from '../../../src/providers/google/google.stream.js';

const seed = process.env.FC_SEED ? Number(process.env.FC_SEED) : Date.now() ^ (Math.random() * 2 ** 31);
console.log('fast-check seed', seed);

const signal = new AbortController().signal;
const args = fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.array(fc.string(), { maxLength: 3 })), { maxKeys: 5, noNullPrototype: true });

/** Splits `text` at the given cut points (sorted, deduplicated, within bounds). */
function split(text: string, cuts: number[]): string[] {
  const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  const pieces: string[] = [];
  let from = 0;
  for (const p of points) {
    pieces.push(text.slice(from, p));
    from = p;
  }
  pieces.push(text.slice(from));
  return pieces;
}

async function all(gen: AsyncIterable<ProviderEvent>): Promise<ProviderEvent[]> {
  const out: ProviderEvent[] = [];
  for await (const e of gen) out.push(e);
  return out;
}

async function* from<T>(items: T[]): AsyncGenerator<T> {
  for (const item of items) yield item;
}

function anthropicToolStream(pieces: string[], stop = 'tool_use'): any[] {
  return [
    { type: 'message_start', message: { usage: { input_tokens: 5, output_tokens: 1, cache_read_input_tokens: null, cache_creation_input_tokens: null } } },
    { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: 'edit', input: {} } },
    ...pieces.map((p) => ({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: p } })),
    { type: 'content_block_stop', index: 0 },
    { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 9 } },
    { type: 'message_stop' },
  ];
}

function chatToolStream(pieces: string[], finish = 'tool_calls'): any[] {
  const chunk = (delta: object, finish_reason: string | null = null) => ({ choices: [{ index: 0, delta, finish_reason }] });
  return [
    chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'edit', arguments: '' } }] }),
    ...pieces.map((p) => chunk({ tool_calls: [{ index: 0, function: { arguments: p } }] })),
    chunk({}, finish),
    { choices: [], usage: { prompt_tokens: 5, completion_tokens: 9 } },
  ];
}

test('property: anthropic tool arguments survive any chunking', async () => {
  await fc.assert(
    fc.asyncProperty(args, fc.array(fc.nat(), { maxLength: 12 }), async (input, cuts) => {
      const json = JSON.stringify(input);
      const events = await all(mapAnthropicStream(from(anthropicToolStream(split(json, cuts))), signal));
      const deltas = events.flatMap((e) => (e.type === 'tool_call_delta' ? [e.argsDelta] : []));
      assert.equal(deltas.join(''), json);
      assert.ok(deltas.every((d) => d.length > 0), 'no empty deltas');
      assert.deepEqual(events.find((e) => e.type === 'tool_call_end'), { type: 'tool_call_end', id: 'toolu_1', input: JSON.parse(json) });
    }),
    { seed, numRuns: 100 },
  );
});

test('property: chat-completions tool arguments survive any chunking', async () => {
  await fc.assert(
    fc.asyncProperty(args, fc.array(fc.nat(), { maxLength: 12 }), async (input, cuts) => {
      const json = JSON.stringify(input);
      const events = await all(mapChatStream(from(chatToolStream(split(json, cuts))), signal));
      assert.equal(events.flatMap((e) => (e.type === 'tool_call_delta' ? [e.argsDelta] : [])).join(''), json);
      assert.deepEqual(events.find((e) => e.type === 'tool_call_end'), { type: 'tool_call_end', id: 'call_1', input: JSON.parse(json) });
      assert.deepEqual(events.slice(-2), [{ type: 'usage', inputTokens: 5, outputTokens: 9, cacheReadTokens: 0 }, { type: 'stop', reason: 'tool_use' }]);
    }),
    { seed, numRuns: 100 },
  );
});

// Arguments that come whole, as an object (Gemini's always, an Anthropic-compatible gateway's in
// content_block_start): their JSON is written in pieces (made whole, it could be longer than a string
// can be). Here 3 × 100k characters, 1.8 MB of JSON.
const wholeInput = { path: 'a.bin', parts: ['\x01'.repeat(100_000), 'é'.repeat(100_000), '\x01'.repeat(100_000)] };

/** The deltas of call `id` join to the JSON of `wholeInput`, in more than one piece, each at most ARGS_DELTA_BYTES; it ends with the input itself. */
function assertWholeArgs(events: ProviderEvent[], id: string): void {
  const deltas = events.flatMap((e) => (e.type === 'tool_call_delta' && e.id === id ? [e.argsDelta] : []));
  assert.equal(deltas.join(''), JSON.stringify(wholeInput));
  assert.ok(deltas.length > 1, `${deltas.length} deltas`);
  for (const d of deltas) assert.ok(Buffer.byteLength(JSON.stringify(d)) <= ARGS_DELTA_BYTES, `a delta of ${d.length} characters`);
  assert.deepEqual(events.find((e) => e.type === 'tool_call_end'), { type: 'tool_call_end', id, input: wholeInput });
  assert.deepEqual(events.at(-1), { type: 'stop', reason: 'tool_use' });
}

test('google: a call whose arguments come whole is given as deltas of at most ARGS_DELTA_BYTES that join to their JSON, never made whole', async () => {
  const chunk = { candidates: [{ content: { parts: [{ functionCall: { id: 'c1', name: 'write_file', args: wholeInput } }] }, finishReason: 'STOP' }] };
  assertWholeArgs(await all(mapGoogleStream(from([chunk as never]), signal)), 'c1');
});

test('anthropic: a tool_use whose input comes whole in content_block_start is given as deltas of at most ARGS_DELTA_BYTES, never made whole', async () => {
  const stream = anthropicToolStream([]);
  stream[1].content_block.input = wholeInput;
  assertWholeArgs(await all(mapAnthropicStream(from(stream), signal)), 'toolu_1');
});

test('arguments that are not a JSON object end with invalidArgs and an empty input', async () => {
  const events = await all(mapAnthropicStream(from(anthropicToolStream(['{"path": "a.ts"', ', oops'])), signal));
  assert.deepEqual(events.find((e) => e.type === 'tool_call_end'), { type: 'tool_call_end', id: 'toolu_1', input: {}, invalidArgs: '{"path": "a.ts", oops' });
  const chat = await all(mapChatStream(from(chatToolStream(['[1,2]'])), signal));
  assert.deepEqual(chat.find((e) => e.type === 'tool_call_end'), { type: 'tool_call_end', id: 'call_1', input: {}, invalidArgs: '[1,2]' });
});

test('stop reasons map onto troupe vocabulary', async () => {
  const stopOf = async (events: ProviderEvent[]) => events.at(-1);
  for (const [vendor, ours] of [['max_tokens', 'max_tokens'], ['refusal', 'refusal'], ['pause_turn', 'tool_use']] as const) {
    // pause_turn with a tool_use block still asks troupe to run the tool.
    assert.deepEqual(await stopOf(await all(mapAnthropicStream(from(anthropicToolStream(['{}'], vendor)), signal))), { type: 'stop', reason: ours });
  }
  // A reply that filled the context window is that overflow, not the output limit (anthropic-window-full.test.ts).
  await assert.rejects(all(mapAnthropicStream(from(anthropicToolStream(['{}'], 'model_context_window_exceeded')), signal)), (err) => isProviderError(err, 'context_overflow'));
  for (const [vendor, ours] of [['length', 'max_tokens'], ['content_filter', 'refusal'], ['stop', 'tool_use']] as const) {
    assert.deepEqual(await stopOf(await all(mapChatStream(from(chatToolStream(['{}'], vendor)), signal))), { type: 'stop', reason: ours });
  }
});
