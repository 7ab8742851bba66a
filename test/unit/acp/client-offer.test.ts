// One rule for what a client offered, as ACP's schema reads `initialize` (the SDK's zod schema:
// booleans for fs and terminal, objects for the session capabilities, anything else not offered).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clientOffer } from '../../../src/acp/client-offer.js';

const none = { readTextFile: false, writeTextFile: false, terminal: false, notices: false, compaction: false };

test('only `true` offers a file method or a terminal; only an object a session capability', () => {
  assert.deepEqual(clientOffer({ fs: { readTextFile: true, writeTextFile: true }, terminal: true, session: { notices: {}, compaction: { x: 1 } } }), {
    readTextFile: true,
    writeTextFile: true,
    terminal: true,
    notices: true,
    compaction: true,
  });
  assert.deepEqual(clientOffer({ fs: { readTextFile: true, writeTextFile: false } }), { ...none, readTextFile: true }, 'a read without a write');
  assert.deepEqual(clientOffer({ fs: { readTextFile: 'yes', writeTextFile: 1 }, terminal: {}, session: { notices: true, compaction: [] } }), none);
  assert.deepEqual(clientOffer({ fs: true, terminal: 'true', session: null }), none);
});

test('no capabilities, or not an object: nothing offered', () => {
  for (const caps of [undefined, null, {}, [], 'all', 7]) assert.deepEqual(clientOffer(caps), none, JSON.stringify(caps));
});
