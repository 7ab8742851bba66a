// The page count troupe reads from a PDF's bytes to keep one over a vendor's page limit out of a
// request (src/core/pdf-pages.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pdfPageCount } from '../../../src/core/pdf-pages.js';
import { pdfFile } from '../../support/pdf-file.js';
import { newestWithin } from '../../../src/core/media-type.js';
import type { ContentBlock } from '../../../src/core/events.js';
import type { ModelMessage } from '../../../src/core/provider.js';

test('a PDF\'s pages are counted, written plainly or packed in a compressed object stream; the page tree is not a page', () => {
  assert.equal(pdfPageCount(pdfFile(3)), 3);
  assert.equal(pdfPageCount(pdfFile(150, 'packed')), 150);
  assert.equal(pdfPageCount(pdfFile(1, 'packed')), 1);
});

test('data that is not a PDF has no page count', () => {
  assert.equal(pdfPageCount(Buffer.from('PK\x03\x04 an archive').toString('base64')), undefined);
  assert.equal(pdfPageCount(''), undefined);
});

test('attachments that fit a request\'s limit exactly all go; one more unit and the oldest gives way, not the newest', () => {
  const block = (n: number): ContentBlock => ({ type: 'image', data: 'x'.repeat(n), mimeType: 'image/png' });
  const [a, b, c] = [block(4), block(3), block(3)];
  const messages: ModelMessage[] = [
    { role: 'user', content: [a] },
    { role: 'assistant', text: 'ok', toolCalls: [] },
    { role: 'user', content: [{ type: 'text', text: 'two more' }, b, c] },
  ];
  const length = (x: ContentBlock) => (x.type === 'image' ? x.data.length : undefined);
  assert.deepEqual([...newestWithin(messages, length, 10)], []);
  assert.deepEqual([...newestWithin(messages, length, 9)], [a]);
  assert.deepEqual([...newestWithin(messages, length, 5)], [b, a]);
});
