/**
 * The daemon relays a child's `session/update` lines without parsing them; these cases are the
 * ones a cheap classification could get wrong: look-alike text inside strings, other messages
 * with similar prefixes, and lines that are not exactly what the child writes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { classifyUpdateLine } from '../../../src/wire/update-line.js';
import { ControlFrameDecoder, encodeControlFrame } from '../../../src/wire/control-frame.codec.js';

const update = (sessionId: string, update: Record<string, unknown>) => JSON.stringify({ jsonrpc: '2.0', method: 'session/update', params: { sessionId, update } });

test('an update as the child writes it is recognised with its session and seq', () => {
  const line = update('ses_a', { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'hi' }, messageId: 'm1', _meta: { troupe: { seq: 42, turnId: 'turn_1' } } });
  assert.deepEqual(classifyUpdateLine(line), { sessionId: 'ses_a', seq: 42, json: line });
  const noTurn = update('ses_a', { sessionUpdate: 'usage_update', used: 1, size: 2, _meta: { troupe: { seq: 7 } } });
  assert.equal(classifyUpdateLine(noTurn)?.seq, 7);
});

test('the echo of a prompt the daemon forwarded is recognised with its prompter, which is cut out of the line', () => {
  const block = { sessionUpdate: 'user_message_chunk', content: { type: 'text', text: '"prompter":1}}}}}' }, messageId: 'm1' };
  const echo = update('ses_a', { ...block, _meta: { troupe: { seq: 9, turnId: 'turn_1', prompter: 12 } } });
  const plain = update('ses_a', { ...block, _meta: { troupe: { seq: 9, turnId: 'turn_1' } } });
  assert.deepEqual(classifyUpdateLine(echo), { sessionId: 'ses_a', seq: 9, json: plain, prompter: 12 });
  assert.deepEqual(JSON.parse(classifyUpdateLine(echo)!.json), JSON.parse(plain));
  const noTurn = update('ses_a', { ...block, _meta: { troupe: { seq: 9, prompter: 0 } } });
  assert.equal(classifyUpdateLine(noTurn)?.prompter, 0);
  for (const prompter of [-1, 1.5, '3', 1e16, null]) {
    assert.equal(classifyUpdateLine(update('ses_a', { ...block, _meta: { troupe: { seq: 9, turnId: 't', prompter } } })), undefined, String(prompter));
  }
  // Only where the daemon's field goes: last in `_meta.troupe`.
  assert.equal(classifyUpdateLine(update('ses_a', { ...block, _meta: { troupe: { seq: 9, prompter: 1, turnId: 't' } } })), undefined);
});

test('text that looks like JSON-RPC structure inside an update does not fool it', () => {
  const tricky = '"id": 5, "method":"x"} {"jsonrpc":"2.0","id":1,"result":{}} "_meta":{"troupe":{"seq":999}}}}}}\n\\"';
  const line = update('ses_a', { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: tricky }, _meta: { troupe: { seq: 3, turnId: 't' } } });
  const got = classifyUpdateLine(line);
  assert.equal(got?.seq, 3);
  assert.equal(got?.json, line);
  // The text's own "_meta" sits inside a string (quotes escaped), so it is never taken for the seq.
  const last = update('ses_a', { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'x' }, _meta: { troupe: { seq: 4 } }, extra: tricky });
  assert.equal(classifyUpdateLine(last), undefined, 'the seq must be the last thing in the update');
});

test('responses, requests and other notifications are left for the parser', () => {
  const notUpdates = [
    JSON.stringify({ jsonrpc: '2.0', id: 1, result: { stopReason: 'end_turn', _meta: { troupe: { seq: 1 } } } }),
    JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'session/request_permission', params: { sessionId: 'ses_a', update: {}, _meta: { troupe: { seq: 2 } } } }),
    JSON.stringify({ jsonrpc: '2.0', method: 'session/update', id: 9, params: { sessionId: 'ses_a', update: { _meta: { troupe: { seq: 2 } } } } }),
    JSON.stringify({ jsonrpc: '2.0', method: 'session/update', params: { sessionId: 'ses_a', update: { _meta: { troupe: { seq: 2 } } } }, id: 9 }),
    JSON.stringify({ jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: 3 } }),
    update('ses_a', { sessionUpdate: 'available_commands_update', availableCommands: [] }),
    update('ses_a', { sessionUpdate: 'x', _meta: { troupe: { seq: -1 } } }),
    update('ses_a', { sessionUpdate: 'x', _meta: { troupe: { seq: 1.5 } } }),
    update('ses_a', { sessionUpdate: 'x', _meta: { troupe: { seq: 1, turnId: 'a"b' } } }),
    update('se"s', { sessionUpdate: 'x', _meta: { troupe: { seq: 1 } } }),
    update('ses_a', { sessionUpdate: 'x', _meta: { troupe: { seq: 1 } } }) + ' ',
  ];
  for (const line of notUpdates) assert.equal(classifyUpdateLine(line), undefined, line);
});

test('control frames split across many reads decode once whole, in order', () => {
  const big = { t: 'events', sessionId: 's', events: Array.from({ length: 2000 }, (_, i) => ({ seq: i + 1, text: 'x'.repeat(50) })) } as never;
  const small = { t: 'hb', rss: 1, heapUsed: 2, events: 3, at: 4 } as never;
  const bytes = Buffer.concat([encodeControlFrame(small), encodeControlFrame(big), encodeControlFrame(small)]);
  for (const size of [1, 3, 7, 4096, 65536, bytes.length]) {
    const decoder = new ControlFrameDecoder();
    const out: unknown[] = [];
    for (let i = 0; i < bytes.length; i += size) out.push(...decoder.push(bytes.subarray(i, i + size)));
    const decodedBig = { ...(big as object), count: 2000, lastSeq: 2000, indexed: [] };
    assert.deepEqual(out, [small, decodedBig, small], `chunks of ${size}`);
  }
});
