// What the model reads of an MCP result is made piece by piece, only up to its limit (mcp-results.ts):
// for random results and limits it is exactly what the whole text, made and then cut, would be: the
// parts joined by new lines (or the structured content's JSON when there is no content), its first
// `limit` characters and a note of how many more there were.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { ContentBlock } from '@modelcontextprotocol/sdk/types.js';
import { callOutput, cut, CutText } from '../../../src/tools/mcp/mcp-results.js';
import { fcRuns, fcSeed } from '../../support/fc-seed.js';

const seed = fcSeed('mcp-results');
const whole = (text: string, limit: number) => (text.length <= limit ? text : `${text.slice(0, limit)}\n[… ${text.length - limit} more characters cut]`);

const text = fc.string({ unit: 'binary', maxLength: 40 });
const block: fc.Arbitrary<ContentBlock> = fc.oneof(
  text.map((t) => ({ type: 'text' as const, text: t })),
  fc.record({ type: fc.constant('image' as const), data: fc.constant('AAAA'), mimeType: fc.constantFrom('image/png', 'image/jpeg') }),
  fc.record({ type: fc.constant('resource_link' as const), uri: fc.constantFrom('file:///a', 'test://b'), name: fc.constantFrom('', 'n') }),
  fc.record({ type: fc.constant('resource' as const), resource: fc.oneof(text.map((t) => ({ uri: 'test://t', text: t })), fc.constant({ uri: 'test://bin', blob: 'AAAA' })) }),
);
/** Each part as the model reads it (spec/tools.md §7, "Run"). */
const partOf = (c: ContentBlock): string =>
  c.type === 'text' ? c.text
  : c.type === 'resource' ? ('text' in c.resource ? c.resource.text : `[binary resource ${c.resource.uri}]`)
  : c.type === 'resource_link' ? `[resource ${c.uri}${c.name ? ` (${c.name})` : ''}]`
  : `[${c.type} content, ${c.mimeType}]`;
const limit = fc.integer({ min: 0, max: 300 });

test("a call's output is its whole text cut: parts joined by new lines, or the structured content's JSON", () => {
  fc.assert(
    fc.property(fc.array(block, { maxLength: 30 }), fc.option(fc.jsonValue({ maxDepth: 3 }).map((v) => ({ v }))), limit, (content, structured, n) => {
      const result = { content: content as unknown[], ...(structured ? { structuredContent: structured } : {}) };
      const expected = content.length === 0 && structured ? JSON.stringify(structured) : content.map(partOf).join('\n');
      assert.equal(callOutput(result, n), whole(expected, n));
    }),
    { seed, numRuns: fcRuns(300) },
  );
});

test('text given in pieces is cut as the whole of them is', () => {
  fc.assert(
    fc.property(fc.array(text, { maxLength: 2000 }), limit, (pieces, n) => {
      const cutText = new CutText(n);
      for (const piece of pieces) cutText.add(piece);
      assert.equal(cutText.text(), whole(pieces.join(''), n));
      assert.equal(cut(pieces.join(''), n), whole(pieces.join(''), n));
    }),
    { seed, numRuns: fcRuns(200) },
  );
});
