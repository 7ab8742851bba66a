// The page count troupe reads from a PDF's bytes to keep one over a vendor's page limit out of a
// request (src/core/pdf-pages.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pdfPageCount } from '../../../src/core/pdf-pages.js';
import { pdfFile } from '../../support/pdf-file.js';

test('a PDF\'s pages are counted, written plainly or packed in a compressed object stream; the page tree is not a page', () => {
  assert.equal(pdfPageCount(pdfFile(3)), 3);
  assert.equal(pdfPageCount(pdfFile(150, 'packed')), 150);
  assert.equal(pdfPageCount(pdfFile(1, 'packed')), 1);
});

test('data that is not a PDF has no page count', () => {
  assert.equal(pdfPageCount(Buffer.from('PK\x03\x04 an archive').toString('base64')), undefined);
  assert.equal(pdfPageCount(''), undefined);
});
