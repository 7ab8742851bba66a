// Prompt blocks from a client → the session's content: what is refused, and what is left out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type * as acp from '@agentclientprotocol/sdk';
import { MAX_PROMPT_BLOCKS, toContent } from '../../../src/acp/prompt-content.js';

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

test('an image for a model without images is refused, saying how to tell troupe the model takes them', () => {
  assert.throws(
    () => toContent([{ type: 'image', data: 'aGk=', mimeType: 'image/png' }] as acp.ContentBlock[], { images: false, model: 'openai-compatible/llava' }),
    (e: { code?: string; message?: string }) => e.code === 'invalid_params' && /the model openai-compatible\/llava does not accept images \(if it does, set "images": true .*docs\/providers\.md\)/.test(e.message ?? ''),
  );
});

test('malformed blocks are refused, not left out', () => {
  refused([{ type: 'text' }]);
  refused([{ type: 'text', text: 'ok' }, null]);
  refused([{ type: 'image', data: 'aGk=' }]);
  refused([{ type: 'resource', resource: null }]);
});

test('an image or a binary resource a vendor could not take is refused at once, with the reason', () => {
  const reason = (blocks: unknown[]) => {
    try {
      toContent(blocks as acp.ContentBlock[], opts);
    } catch (e) {
      assert.equal((e as { code?: string }).code, 'invalid_params');
      return (e as Error).message;
    }
    assert.fail('accepted');
  };
  const image = (data: string, mimeType = 'image/png') => [{ type: 'text', text: 'see' }, { type: 'image', data, mimeType }];
  assert.match(reason(image('')), /^prompt block 1: the image's data is empty/);
  assert.match(reason(image('data:image/png;base64,aGk=')), /without a data: URL prefix/);
  for (const data of ['aG k=', 'aGk=\n', 'aGk-', 'aGk_', 'a', 'aGk==', 'aG=k', '€€€€']) assert.match(reason(image(data)), /is not standard base64/, data);
  assert.match(reason(image('aGk=', 'text/plain')), /mimeType must be an image type such as image\/png, not "text\/plain"/);
  assert.match(reason([{ type: 'resource', resource: { uri: 'file:///a.pdf', blob: 'not base64!', mimeType: 'application/pdf' } }]), /^prompt block 0: the resource's blob is not standard base64/);
  // Padded, unpadded, and the other image types are taken as sent.
  for (const [data, mimeType] of [['aGk=', 'image/png'], ['aGk', 'image/jpeg'], ['aGVsbG8', 'image/webp'], ['AAAA', 'image/svg+xml'], ['aA==', 'image/vnd.microsoft.icon']]) {
    assert.deepEqual(toContent(image(data!, mimeType) as acp.ContentBlock[], opts)[1], { type: 'image', data, mimeType });
  }
});

test('a prompt of more blocks than the limit is refused; one of exactly the limit is taken', () => {
  const blocks = (n: number) => Array.from({ length: n }, (_, i) => ({ type: 'text', text: `b${i}` })) as acp.ContentBlock[];
  assert.equal(toContent(blocks(MAX_PROMPT_BLOCKS), opts).length, MAX_PROMPT_BLOCKS);
  assert.throws(() => toContent(blocks(MAX_PROMPT_BLOCKS + 1), opts), (e: { code?: string; message?: string; data?: unknown }) => {
    assert.equal(e.code, 'invalid_params');
    assert.equal(e.message, `a prompt may have at most ${MAX_PROMPT_BLOCKS} blocks, not ${MAX_PROMPT_BLOCKS + 1}`);
    assert.deepEqual(e.data, { limit: MAX_PROMPT_BLOCKS });
    return true;
  });
});
