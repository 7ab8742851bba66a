// The relay passes a child's session/update lines through without parsing them
// (src/wire/update-line.ts). Through a real daemon and the SDK's clients: text that looks like
// JSON-RPC structure arrives byte for byte, multi-byte characters and lines longer than a pipe read
// survive, updates interleaved with a child → client request (permission) and with the prompt's
// response keep their order, and a second attached connection gets every update exactly once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { daemonWithSession } from '../../support/daemon.js';

const TRICKY = [
  '"id": 1, "method": "session/request_permission"',
  '{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}\n',
  '"_meta":{"troupe":{"seq":99999}}}}}}',
  'back\\slash \\"quote\\" and "quotes"',
  'ünïcödé ✓ 日本語 😀',
  '😀'.repeat(40_000), // 160 KB of 4-byte characters: spans many pipe reads, split inside characters
];
const MANY = Array.from({ length: 500 }, (_, i) => `m${i} `);

const script = {
  replies: [
    { when: 'tricky', items: [...TRICKY.map((text) => ({ text })), { tool_call: { name: 'write_file', input: { path: 'w.txt', content: 'x' } } }] },
    [{ text: 'after "id": 2 tool' }],
    { when: 'many', items: MANY.map((text) => ({ text })) },
  ],
};

for (const transport of ['http', 'ws'] as const) {
  test(`${transport}: updates relayed unparsed arrive exact, in order, around a permission request and before the response`, async (t) => {
    const { d, c: a, sessionId } = await daemonWithSession(t, transport, { script });

    const res = await a.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'tricky' }] });
    assert.equal(res.stopReason, 'end_turn');
    // Everything before the response was written ahead of it (one stream on WS; the session stream on HTTP).
    const texts = a.updatesFor(sessionId, 'agent_message_chunk').map((u) => u.content.text);
    assert.deepEqual(texts, [...TRICKY, 'after "id": 2 tool']);
    assert.equal(a.permissions.length, 1, 'the child → client request was recognised and routed');
    assert.equal(a.permissions[0]!.sessionId, sessionId);
    const kinds = a.updatesFor(sessionId).map((u) => u.sessionUpdate);
    const tricky = kinds.map((k, i) => (k === 'agent_message_chunk' ? i : -1)).filter((i) => i >= 0);
    assert.ok(kinds.indexOf('tool_call') > tricky[TRICKY.length - 1]! && kinds.indexOf('tool_call') < tricky[TRICKY.length]!, 'the tool call between the texts around it');

    // A second connection attached to the live session: every update once, in order, on both.
    const b = d.connect(transport === 'http' ? 'ws' : 'http');
    t.after(() => b.close());
    await b.init();
    await b.agent.request('_troupe/session_state' as never, { sessionId } as never);
    const fromA = a.updatesFor(sessionId).length;
    await a.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'many' }] });
    await b.until(() => b.updatesFor(sessionId, 'agent_message_chunk').length >= MANY.length, 'the watcher to get every chunk');
    for (const c of [a, b]) {
      const seqs = c.seqs(sessionId);
      assert.ok(seqs.every((s, i) => i === 0 || s > seqs[i - 1]!), 'seqs strictly increase (no duplicate, no reorder)');
    }
    assert.deepEqual(a.updatesFor(sessionId, 'agent_message_chunk').slice(TRICKY.length + 1).map((u) => u.content.text), MANY);
    assert.deepEqual(b.updatesFor(sessionId, 'agent_message_chunk').map((u) => u.content.text), MANY);
    assert.ok(a.updatesFor(sessionId).length > fromA);
  });
}
