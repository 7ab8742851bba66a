// What the model reads of an MCP result is made piece by piece, only up to its limit (mcp-results.ts,
// mcp-cut-text.ts): for random results and limits it is exactly what the whole text, made and then
// cut, would be: the parts joined by new lines (or the structured content's JSON when there is no
// content), as long a start of it as the limit holds (in bytes of JSON, or characters), a surrogate
// pair never parted, and a note of how many more characters there were.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { ContentBlock } from '@modelcontextprotocol/sdk/types.js';
import { jsonStringBytes } from '../../../src/core/json-bytes.js';
import { isHighSurrogate, isLowSurrogate } from '../../../src/core/text-cut.js';
import { CutText, type CutUnit } from '../../../src/tools/mcp/mcp-cut-text.js';
import { callOutput, cut } from '../../../src/tools/mcp/mcp-results.js';
import { fcRuns, fcSeed } from '../../support/fc-seed.js';

const seed = fcSeed('mcp-results');

/** The whole text cut, character by character. */
function whole(text: string, limit: number, unit: CutUnit): string {
  let size = 0;
  let n = 0;
  while (n < text.length) {
    const width = isHighSurrogate(text.charCodeAt(n)) && isLowSurrogate(text.charCodeAt(n + 1)) ? 2 : 1;
    const more = unit === 'bytes' ? jsonStringBytes(text.slice(n, n + width)) - 2 : width;
    if (size + more > limit) break;
    size += more;
    n += width;
  }
  return n === text.length ? text : `${text.slice(0, n)}\n[… ${text.length - n} more characters cut]`;
}

// Any code point, control characters and quotes (which JSON escapes) and astral ones (pairs) among them.
const text = fc.string({ unit: fc.oneof(fc.constantFrom('"', '\\', '\n', '\u0001', 'é', '中', '😀'), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })), maxLength: 40 });
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

test("a call's output is its whole text cut to its bytes: parts joined by new lines, or the structured content's JSON", () => {
  fc.assert(
    fc.property(fc.array(block, { maxLength: 30 }), fc.option(fc.jsonValue({ maxDepth: 3 }).map((v) => ({ v }))), limit, (content, structured, n) => {
      const result = { content: content as unknown[], ...(structured ? { structuredContent: structured } : {}) };
      const expected = content.length === 0 && structured ? JSON.stringify(structured) : content.map(partOf).join('\n');
      assert.equal(callOutput(result, n), whole(expected, n, 'bytes'));
    }),
    { seed, numRuns: fcRuns(300) },
  );
});

test('text given in pieces is cut as the whole of them is, in bytes or in characters', () => {
  fc.assert(
    fc.property(fc.array(text, { maxLength: 2000 }), limit, fc.constantFrom<CutUnit>('bytes', 'characters'), (pieces, n, unit) => {
      const cutText = new CutText(n, unit);
      for (const piece of pieces) cutText.add(piece);
      const expected = whole(pieces.join(''), n, unit);
      assert.equal(cutText.text(), expected);
      assert.equal(cut(pieces.join(''), n, unit), expected);
    }),
    { seed, numRuns: fcRuns(200) },
  );
});
