// Prompt blocks from a client → the session's content: what is refused, and what is left out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type * as acp from '@agentclientprotocol/sdk';
import { toContent } from '../../../src/acp/prompt-content.js';

const opts = { images: true, model: 'scripted/demo' };
const refused = (blocks: unknown[]) => assert.throws(() => toContent(blocks as acp.ContentBlock[], opts), (e: { code?: string }) => e.code === 'invalid_params');

test('a prompt of nothing or of whitespace-only text is refused as empty', () => {
  refused([]);
  refused([{ type: 'text', text: '' }]);
  refused([{ type: 'text', text: ' \n\t ' }, { type: 'text', text: '' }]);
});

test('whitespace-only text beside other content is left out; other text is kept as sent', () => {
  const image = { type: 'image', data: 'aGk=', mimeType: 'image/png' };
  assert.deepEqual(toContent([{ type: 'text', text: '  ' }, image] as acp.ContentBlock[], opts), [image]);
  assert.deepEqual(toContent([{ type: 'text', text: ' hi ' }, { type: 'text', text: '\n' }] as acp.ContentBlock[], opts), [{ type: 'text', text: ' hi ' }]);
});

test('malformed blocks are refused, not left out', () => {
  refused([{ type: 'text' }]);
  refused([{ type: 'text', text: 'ok' }, null]);
  refused([{ type: 'image', data: 'aGk=' }]);
  refused([{ type: 'resource', resource: null }]);
});
