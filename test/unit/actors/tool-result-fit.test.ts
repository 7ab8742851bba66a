import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fitPreview } from '../../../src/actors/tool-result-fit.js';
import type { ToolContent } from '../../../src/core/events.js';

const bytes = (c: ToolContent[]) => Buffer.byteLength(JSON.stringify(c));

test('a permission preview within its budget is shown as it is; over it, narrowed to the changed lines; over it still, a note', () => {
  const small: ToolContent[] = [{ type: 'diff', path: '/w/a.txt', oldText: 'a\n', newText: 'b\n' }];
  assert.equal(fitPreview(small, 1024), small);

  // Counted as JSON: 100 control characters a line are 600 bytes each, not 100.
  const line = '\x01'.repeat(100) + '\n';
  const many: ToolContent[] = [{ type: 'diff', path: '/w/a.txt', oldText: 'a\n' + line.repeat(50), newText: 'b\n' + line.repeat(50) }];
  const narrowed = fitPreview(many, 10_000);
  assert.deepEqual(narrowed, [{ type: 'diff', path: '/w/a.txt', oldText: 'a\n' + line.repeat(3), newText: 'b\n' + line.repeat(3) }]);
  assert.ok(bytes(narrowed) <= 10_000);

  // A new file (nothing to narrow), or a change that alone is over the budget.
  const created: ToolContent[] = [{ type: 'diff', path: '/w/new.txt', oldText: null, newText: '"'.repeat(6000) }];
  assert.deepEqual(fitPreview(created, 10_000), [{ type: 'text', text: '[The change is too large to show here.]' }]);
});

test('a preview whose JSON is over the longest string V8 makes is a note, not a RangeError', () => {
  // write_file over a 10 MiB file (maxFileBytes) of control characters, with a new content of 80
  // million: each text's JSON can be made (60M and 480M characters), the two together (540M) cannot.
  // Making it threw, and the call was denied without the person being asked.
  const oldText = '\x01'.repeat(10 * 1024 * 1024);
  const newText = '\x02'.repeat(80_000_000);
  assert.ok(JSON.stringify(newText).length < 2 ** 29 - 24, 'the premise: the new content alone has JSON');
  const replaced: ToolContent[] = [{ type: 'diff', path: '/w/big.bin', oldText, newText }];
  assert.throws(() => JSON.stringify(replaced), RangeError, 'the premise: V8 cannot make this JSON');
  assert.deepEqual(fitPreview(replaced, 32 * 1024 * 1024), [{ type: 'text', text: '[The change is too large to show here.]' }]);
});
