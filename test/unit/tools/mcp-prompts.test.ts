// How a slash command's input fills an MCP prompt's arguments, how the prompt's messages become
// a turn's content (src/tools/mcp/mcp-prompts.ts), and how paged lists are read (mcp-pages.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isTroupeError } from '../../../src/core/errors.js';
import { allPages } from '../../../src/tools/mcp/mcp-pages.js';
import { commandOf, promptArguments, promptContent } from '../../../src/tools/mcp/mcp-prompts.js';

const one = [{ name: 'topic', required: true }];
const two = [{ name: 'name', required: true }, { name: 'style' }];
const refused = (fn: () => unknown, pattern: RegExp) => assert.throws(fn, (e: unknown) => isTroupeError(e, 'invalid_params') && pattern.test((e as Error).message));

test('one argument takes the whole input as typed', () => {
  assert.deepEqual(promptArguments('c', one, '  the "quoted" x=y  words '), { topic: 'the "quoted" x=y  words' });
  refused(() => promptArguments('c', one, '   '), /\/c needs topic: \/c topic$/);
});

test('several: the words in order, the last takes the rest of the line; or name=value words, quotes kept together', () => {
  assert.deepEqual(promptArguments('c', two, 'Ada'), { name: 'Ada' });
  assert.deepEqual(promptArguments('c', two, 'Ada very  formal'), { name: 'Ada', style: 'very  formal' });
  assert.deepEqual(promptArguments('c', two, '"Ada Lovelace" warm'), { name: 'Ada Lovelace', style: 'warm' });
  assert.deepEqual(promptArguments('c', two, 'style=warm name="Ada \\"the\\" Lovelace"'), { name: 'Ada "the" Lovelace', style: 'warm' });
  // A word that names no argument makes them all positional.
  assert.deepEqual(promptArguments('c', two, 'name=Ada colour=red'), { name: 'name=Ada', style: 'colour=red' });
  refused(() => promptArguments('c', two, 'style=warm'), /\/c needs name: \/c name \[style\]/);
});

test('arguments named like members of Object.prototype are arguments like any other', () => {
  const odd = [{ name: 'constructor', required: true }, { name: '__proto__', required: true }];
  refused(() => promptArguments('c', odd, ''), /\/c needs constructor, __proto__: /);
  const filled = promptArguments('c', odd, 'A B');
  assert.deepEqual([Object.keys(filled), filled.constructor, filled['__proto__']], [['constructor', '__proto__'], 'A', 'B']);
  assert.equal(JSON.stringify(filled), '{"constructor":"A","__proto__":"B"}', 'sent as own values');
});

test('a prompt without arguments takes no input', () => {
  assert.deepEqual(promptArguments('c', [], ''), {});
  refused(() => promptArguments('c', [], 'x'), /\/c takes no input/);
});

test("the command's hint and description say what to type and where it comes from", () => {
  assert.deepEqual(commandOf('mcp__s__p', 's', { name: 'p', description: 'Does p.', arguments: two }), { name: 'mcp__s__p', description: 'Does p. (prompt "p" of the MCP server "s")', input: { hint: 'name [style]' } });
  assert.equal(commandOf('mcp__s__p', 's', { name: 'p' }).input, undefined);
});

test("messages become the turn's content: one role as it is, several marked; audio and empty prompts refused", () => {
  assert.deepEqual(promptContent('c', { messages: [{ role: 'user', content: { type: 'text', text: 'a' } }, { role: 'user', content: { type: 'image', data: 'AA==', mimeType: 'image/png' } }] }), [
    { type: 'text', text: 'a' },
    { type: 'image', data: 'AA==', mimeType: 'image/png' },
  ]);
  assert.deepEqual(
    promptContent('c', {
      messages: [
        { role: 'user', content: { type: 'text', text: 'q' } },
        { role: 'assistant', content: { type: 'resource', resource: { uri: 'file:///x', text: 'X', mimeType: 'text/plain' } } },
      ],
    }),
    [{ type: 'text', text: 'User: q' }, { type: 'text', text: 'Assistant: ' }, { type: 'resource', resource: { uri: 'file:///x', text: 'X', mimeType: 'text/plain' } }],
  );
  refused(() => promptContent('c', { messages: [{ role: 'user', content: { type: 'audio', data: 'AA==', mimeType: 'audio/wav' } }] }), /\/c: troupe does not accept audio content/);
  refused(() => promptContent('c', { messages: [] }), /\/c: the MCP server made an empty prompt/);
});

test('paged lists: every page in order; a server whose pages never end is refused', async () => {
  const pages: Record<string, { items: number[]; nextCursor?: string }> = { start: { items: [1, 2], nextCursor: 'a' }, a: { items: [3], nextCursor: 'b' }, b: { items: [4] } };
  assert.deepEqual(await allPages(async (cursor) => pages[cursor ?? 'start']!), [1, 2, 3, 4]);
  await assert.rejects(allPages(async () => ({ items: [1], nextCursor: 'same' })), /does not end \(cursor "same" again/);
  let n = 0;
  await assert.rejects(allPages(async () => ({ items: [], nextCursor: String(n++) })), /over 1000 pages/);
});

test('paged lists: a list past 10000 items or 16 MiB in all is refused before its next page is kept', async () => {
  const tooLong = /the server's list is too long \(over 10000 items or 16 MiB in all\); troupe reads no more of it/;
  // Pages of 2000 small items: refused at the sixth page, long before 1000 pages.
  let pages = 0;
  await assert.rejects(allPages(async () => ({ items: Array.from({ length: 2000 }, (_, i) => i), nextCursor: String(++pages) })), tooLong);
  assert.equal(pages, 6);
  // Pages of one item of 1 MiB (and 4 bytes of JSON around it): refused at the sixteenth.
  const big = 'x'.repeat(1024 * 1024);
  pages = 0;
  await assert.rejects(allPages(async () => ({ items: [big], nextCursor: String(++pages) })), tooLong);
  assert.equal(pages, 16);
  // Up to the limits, the whole list.
  pages = 0;
  assert.equal((await allPages(async () => ({ items: Array.from({ length: 1000 }, (_, i) => i), ...(++pages < 10 ? { nextCursor: String(pages) } : {}) }))).length, 10_000);
});
