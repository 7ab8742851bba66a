// A client that does not own a tool call's terminal is shown the call one way, whether a session/load
// replays it (the event without its terminals, then projected) or the daemon relays it live (the
// projected update without them): src/acp/terminal-content.ts, the one rule for both.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { AgentEvent, ToolContent } from '../../../src/core/events.js';
import { projectEvent } from '../../../src/acp/update.projection.js';
import { terminalIdsOf, updateWithoutTerminals, withoutTerminals } from '../../../src/acp/terminal-content.js';
import { fcRuns, fcSeed } from '../../support/fc-seed.js';

const caps = { notices: false, compaction: false };
const seed = fcSeed('terminal-content');

const content: fc.Arbitrary<ToolContent> = fc.oneof(
  fc.record({ type: fc.constant('text' as const), text: fc.string() }),
  fc.record({ type: fc.constant('diff' as const), path: fc.string(), oldText: fc.option(fc.string(), { nil: null }), newText: fc.string() }),
  fc.record({ type: fc.constant('terminal' as const), terminalId: fc.constantFrom('term_1', 'term_2') }),
);

const updated: fc.Arbitrary<AgentEvent> = fc
  .record(
    {
      status: fc.constantFrom('pending', 'in_progress', 'completed', 'failed'),
      title: fc.string({ minLength: 1 }),
      content: fc.array(content, { maxLength: 4 }),
      output: fc.string(),
      errorCode: fc.constantFrom('tool_failed', 'request_cancelled'),
    },
    { requiredKeys: [] },
  )
  .map((fields) => ({ type: 'tool_call_updated', seq: 7, ts: 1, sessionId: 'ses_1', turnId: 'turn_1', toolCallId: 'call_1', ...fields }) as AgentEvent);

const update = (e: AgentEvent) => projectEvent(e, caps)[0]!.update as unknown as Record<string, unknown>;

test('a tool call update without the terminals a client does not own: live (the update) as replayed (the event)', () => {
  fc.assert(
    fc.property(updated, (e) => {
      assert.deepEqual(updateWithoutTerminals(update(e)), update(withoutTerminals(e)));
      // The same keys in the same order: the line a client is sent reads as the replay's.
      assert.deepEqual(Object.keys(updateWithoutTerminals(update(e))), Object.keys(update(withoutTerminals(e))));
    }),
    { seed, numRuns: fcRuns(500) },
  );
});

test("an update keeps the terminals its client owns, and is the very same object when it loses none", () => {
  fc.assert(
    fc.property(updated, (e) => {
      const u = update(e);
      assert.equal(updateWithoutTerminals(u, () => true), u);
      const kept = updateWithoutTerminals(u, (id) => id === 'term_1');
      assert.deepEqual(terminalIdsOf(kept).filter((id) => id !== 'term_1'), []);
      assert.deepEqual(terminalIdsOf(kept), terminalIdsOf(u).filter((id) => id === 'term_1'));
    }),
    { seed, numRuns: fcRuns(500) },
  );
});
