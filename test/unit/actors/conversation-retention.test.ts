// What the conversation folded from the log lets go of: a steer's content once the steer is applied
// or rejected (the guidance the model sees is in the history, until a compaction summarizes it).
// Observed with WeakRefs after a full collection, on the real Conversation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Conversation } from '../../../src/actors/conversation.js';
import type { AgentEvent, ContentBlock } from '../../../src/core/events.js';

const sessionId = 'ses_keep';
const turnId = 'turn_1';

/** A full garbage collection, for tests that check what is let go (WeakRef). */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

/** Folds a turn with two steers of `size` characters, one applied and one rejected; returns WeakRefs to their content. */
function foldSteers(conv: Conversation, size: number): WeakRef<ContentBlock>[] {
  const applied: ContentBlock = { type: 'text', text: 'a'.repeat(size) };
  const rejected: ContentBlock = { type: 'text', text: 'r'.repeat(size) };
  const events = [
    { type: 'session_created', cwd: '/w', additionalDirectories: [], model: 'scripted/demo', mode: 'default' },
    { type: 'user_message', turnId, messageId: 'msg_1', content: [{ type: 'text', text: 'go' }] },
    { type: 'turn_started', turnId, maxSteps: 25 },
    { type: 'steer_received', turnId, steerId: 'st_1', content: [applied] },
    { type: 'steer_received', turnId, steerId: 'st_2', content: [rejected] },
    { type: 'steer_applied', turnId, steerId: 'st_1', step: 2 },
    { type: 'steer_rejected', turnId, steerId: 'st_2', expectedTurnId: turnId, code: 'turn_ended' },
    { type: 'turn_completed', turnId, stopReason: 'end_turn', steps: 2 },
  ];
  events.forEach((e, i) => conv.apply({ ...e, sessionId, seq: i + 1, ts: 0 } as unknown as AgentEvent));
  return [new WeakRef(applied), new WeakRef(rejected)];
}

test("a steer's content is let go once it is rejected, and once a compaction summarizes the guidance applied", async () => {
  const conv = new Conversation();
  const [applied, rejected] = foldSteers(conv, 1_000_000);
  await new Promise((resolve) => setImmediate(resolve));
  collectGarbage();
  assert.equal(rejected!.deref(), undefined, 'the rejected steer is gone');
  assert.ok(applied!.deref(), 'the applied steer is in the history the model sees');
  assert.ok(conv.messages().some((m) => m.role === 'user' && m.content.includes(applied!.deref()!)), 'as guidance');

  conv.apply({ type: 'compaction_completed', sessionId, compactionId: 'cmp_1', status: 'completed', summary: 'did it', throughSeq: 8, seq: 9, ts: 0 } as AgentEvent);
  await new Promise((resolve) => setImmediate(resolve));
  collectGarbage();
  // Until 2026-12-07 both stayed for the session's life (and a reopened one's: it folds the same log).
  assert.equal(applied!.deref(), undefined, 'the applied steer is gone with the history it was in');
});
