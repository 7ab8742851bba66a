// A reply the context window cut (Anthropic's model_context_window_exceeded, Mistral's model_length)
// stays in the conversation folded from the log, and the overflow compaction that follows it adds a
// note asking the model to go on from it; nothing else does (src/actors/conversation.ts,
// continueCutReply). The session-level behaviour is test/e2e/providers/window-full.e2e.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Conversation, CUT_REPLY_NOTE } from '../../../src/actors/conversation.js';
import type { AgentEvent } from '../../../src/core/events.js';
import { makeHarness, text as userText, throwOnceOnAppend } from '../../support/engine-harness.js';

const sessionId = 'ses_cut';
const turnId = 'turn_1';

/** The conversation of one turn whose step said `said` (events), then a compaction of `reason` that ends `status`. */
function folded(said: object[], reason: 'preflight' | 'overflow' | 'manual', status: 'completed' | 'failed' = 'completed'): Conversation {
  const events = [
    { type: 'session_created', cwd: '/w', additionalDirectories: [], model: 'scripted/demo', mode: 'default' },
    { type: 'user_message', turnId, messageId: 'msg_1', content: [{ type: 'text', text: 'write the report' }] },
    { type: 'turn_started', turnId, maxSteps: 25 },
    ...said,
    { type: 'compaction_started', turnId, compactionId: 'cmp_1', reason, tokensBefore: 100 },
    { type: 'compaction_completed', turnId, compactionId: 'cmp_1', status, ...(status === 'completed' ? { toolOutputLimit: 4000 } : { errorCode: 'provider_network' }) },
  ];
  const conv = new Conversation();
  events.forEach((e, i) => conv.apply({ ...e, sessionId, seq: i + 1, ts: 0 } as unknown as AgentEvent));
  return conv;
}

const text = (t: string) => ({ type: 'agent_message_chunk', turnId, messageId: 'msg_a', text: t });
const roles = (conv: Conversation) => conv.messages().map((m) => [m.role, m.role === 'user' ? m.content.map((b) => (b.type === 'text' ? b.text : b.type)).join('') : m.role === 'assistant' ? m.text : '']);

test('after the overflow compaction of a cut reply, the note follows it, and the retried reply is a message of its own', () => {
  const conv = folded([text('Part one: '), text('the code is ')], 'overflow');
  conv.apply({ ...text('4242.'), sessionId, seq: 20, ts: 0 } as unknown as AgentEvent);
  assert.deepEqual(roles(conv), [
    ['user', 'write the report'],
    ['assistant', 'Part one: the code is '],
    ['user', CUT_REPLY_NOTE],
    ['assistant', '4242.'],
  ]);
});

test('no note where there is no cut reply to go on from', () => {
  const cases: [string, Conversation][] = [
    // A 400 overflow: the step said nothing before it.
    ['refused before any reply', folded([], 'overflow')],
    // Thinking alone: nothing said (and Anthropic's request leaves it out).
    ['a reply of thinking alone', folded([{ type: 'agent_thought_chunk', turnId, messageId: 'th_1', text: 'Let me think' }], 'overflow')],
    ['a preflight compaction', folded([text('Part one: ')], 'preflight')],
    ['a failed overflow compaction (the turn ends)', folded([text('Part one: ')], 'overflow', 'failed')],
  ];
  for (const [label, conv] of cases) assert.ok(!roles(conv).some(([, t]) => t === CUT_REPLY_NOTE), label);
});

// The turn counts the retried step as the step it retries (turn.machine: no new step number after an
// overflow); crash repair counts the steps of a turn it ends from the conversation's open turn. Until
// 2026-12-07 that count took the retried reply, a message of its own after the note, for a step more.
test('a turn whose cut reply was retried after compaction, ended by crash repair: its steps are the turn\'s own', async () => {
  const h = makeHarness([[{ text: 'earlier' }], [{ text: 'Part one: ' }, { context_overflow: 'the reply filled the window' }], [{ text: 'part two.' }]]);
  assert.equal((await h.engine.prompt(userText('first')).result).stopReason, 'end_turn');
  const whole = await h.engine.prompt(userText('go')).result;
  assert.deepEqual([whole.stopReason, whole.steps], ['end_turn', 1], 'the retried step is the same step');
  assert.ok(roles(h.engine.conversation).some(([, t]) => t === CUT_REPLY_NOTE), 'the cut reply was retried after its note');
  // The same turn again, its end refused once (a bug in the action that writes it): the session
  // stops and crash repair ends the turn (SessionEngine.stopWith, endInterruptedTurn).
  const again = makeHarness([[{ text: 'earlier' }], [{ text: 'Part one: ' }, { context_overflow: 'the reply filled the window' }], [{ text: 'part two.' }]]);
  assert.equal((await again.engine.prompt(userText('first')).result).stopReason, 'end_turn');
  throwOnceOnAppend(again, 'turn_completed');
  const repaired = await again.engine.prompt(userText('go')).result;
  assert.deepEqual([repaired.stopReason, repaired.errorCode, repaired.steps], ['error', 'internal_error', whole.steps]);
  const ended = again.ofType('turn_completed').at(-1)!;
  assert.deepEqual([ended.interrupted, ended.steps], [true, whole.steps]);
});
