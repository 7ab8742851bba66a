// The offline token estimate counts an attachment as the request will carry it (src/core/media-type.ts
// contentPlan): an image or a binary file as a flat IMAGE_TOKENS, a PDF as that a page, a file of a
// text type by its text, which goes to the model whole.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CHARS_PER_TOKEN, IMAGE_TOKENS, estimateTokens } from '../../../src/core/provider.js';
import type { ContentBlock } from '../../../src/core/events.js';
import { pdfFile } from '../../support/pdf-file.js';

const estimate = (block: ContentBlock) => estimateTokens({ system: '', tools: [], messages: [{ role: 'user', content: [block] }] });

test('a text file attached as a blob counts by its text; a binary one of the same size counts as an image', () => {
  const csv = 'name,count\n'.repeat(40_000); // 440,000 characters: about 110k tokens
  const blob = Buffer.from(csv).toString('base64');
  const asText = estimate({ type: 'resource', resource: { uri: 'file:///data.csv', mimeType: 'text/csv', blob } });
  assert.ok(asText >= csv.length / CHARS_PER_TOKEN, `${asText} tokens for ${csv.length} characters of text`);
  const asFile = estimate({ type: 'resource', resource: { uri: 'file:///data.zip', mimeType: 'application/zip', blob } });
  assert.ok(asFile < IMAGE_TOKENS + 100, `${asFile} tokens for a zip`);
});

test('a PDF counts as an image a page: a 40-page paper is not one image', () => {
  const paper = estimate({ type: 'resource', resource: { uri: 'file:///paper.pdf', mimeType: 'application/pdf', blob: pdfFile(40) } });
  assert.ok(paper >= 40 * IMAGE_TOKENS, `${paper} tokens for 40 pages`);
  const note = estimate({ type: 'resource', resource: { uri: 'file:///note.pdf', mimeType: 'application/pdf', blob: pdfFile(1, 'packed') } });
  assert.ok(note < 2 * IMAGE_TOKENS, `${note} tokens for one page`);
});
