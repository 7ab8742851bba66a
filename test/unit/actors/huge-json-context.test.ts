// A conversation may hold a value whose JSON is longer than V8's longest string (2^29 - 24
// characters): a tool input of 90 million control characters is 540 million characters of JSON
// (`\u0001` each). What sizes and cuts the conversation counts that JSON, never makes it: making it
// threw a RangeError on every turn (the estimate) and failed every compaction. The values here share
// one string of 1 Mi control characters 90 times: over the limit as JSON, 1 MiB in memory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fitForSummary, outline } from '../../../src/actors/compaction.effect.js';
import { jsonLength } from '../../../src/core/json-bytes.js';
import { CHARS_PER_TOKEN, estimateTokens, type ModelMessage } from '../../../src/core/provider.js';

const MAX_STRING_LENGTH = 2 ** 29 - 24;
const chunk = '\x01'.repeat(2 ** 20);
const input = { path: 'big.bin', chunks: Array<string>(90).fill(chunk) };
const JSON_LENGTH = 28 + 90 * (6 * 2 ** 20 + 2) + 89 + 2; // {"path":"big.bin","chunks":[ … ]}
const call: ModelMessage = { role: 'assistant', text: '', toolCalls: [{ id: 'call_1', name: 'write_file', input }] };

test('the premise: the input has JSON over the longest string V8 makes', () => {
  assert.equal(jsonLength(input), JSON_LENGTH);
  assert.ok(JSON_LENGTH > MAX_STRING_LENGTH);
});

test("the offline estimate counts a tool input's JSON and a prompt's text blocks of any size", () => {
  const ask: ModelMessage = { role: 'user', content: [{ type: 'text', text: 'write it' }] };
  const small = estimateTokens({ system: '', tools: [], messages: [ask, { ...call, toolCalls: [{ ...call.toolCalls[0]!, input: {} }] }] });
  const big = estimateTokens({ system: '', tools: [], messages: [ask, call] });
  // The input counts as its JSON (`{}` less), give or take the rounding of each estimate.
  assert.ok(Math.abs(big - small - (JSON_LENGTH - 2) / CHARS_PER_TOKEN) <= 1, `${big - small} tokens more`);
  // A prompt of one text that long (90 MB): its block is counted as its JSON too.
  const prompt: ModelMessage = { role: 'user', content: [{ type: 'text', text: chunk.repeat(90) }] };
  assert.ok(estimateTokens({ system: '', tools: [], messages: [prompt] }) > MAX_STRING_LENGTH / CHARS_PER_TOKEN);
});

test("a summarization request shows such an input cut, saying how much of its JSON was left out", () => {
  const budget = 10_000;
  const limit = budget; // fitForSummary's first cut: budget × 4 / 4 characters
  const ask: ModelMessage = { role: 'user', content: [{ type: 'text', text: 'write it' }] };
  const messages = fitForSummary([ask, call], undefined, budget, 1_000);
  const cut = messages.flatMap((m) => (m.role === 'assistant' ? m.toolCalls : []))[0]!.input as { cut_by_compaction: string };
  const head = `{"path":"big.bin","chunks":["${'\\u0001'.repeat(limit)}`.slice(0, limit);
  assert.equal(cut.cut_by_compaction, `${head}\n[… ${JSON_LENGTH - limit} characters removed by compaction]`);
});

test('the outline that stands in for a summary names such a call with the start of its input', () => {
  const text = outline([{ role: 'user', content: [{ type: 'text', text: 'write it' }] }, call], undefined, 10_000);
  const head = `{"path":"big.bin","chunks":["${'\\u0001'.repeat(120)}`.slice(0, 120);
  assert.match(text, /- The user wrote: write it\n/);
  assert.ok(text.endsWith(`- Tools used: write_file ${head}\n[… ${JSON_LENGTH - 120} characters removed by compaction]`), text.slice(-300));
});
