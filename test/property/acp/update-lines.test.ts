// The direct `session/update` writer of `troupe acp` (projectEventLines) writes exactly the bytes the
// SDK's notify would: for any event, its text equals JSON.stringify of each projected notification
// in its JSON-RPC envelope, one per line. Replay with FC_SEED=<seed>.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { AgentEvent } from '../../../src/core/events.js';
import { projectEvent, projectEventLines, type ProjectionCaps } from '../../../src/acp/update.projection.js';
import { fcRuns, fcSeed } from '../../support/fc-seed.js';

const seed = fcSeed('update-lines');

const viaSdk = (e: AgentEvent, caps: ProjectionCaps) =>
  projectEvent(e, caps)
    .map((params) => JSON.stringify({ jsonrpc: '2.0', method: 'session/update', params }) + '\n')
    .join('');

const anyText = fc.string({ unit: 'binary' });
const id = fc.constantFrom('ses_a', 'ses_b"quoted"', 'ses_ü', 'msg_1', 'turn_x');

test('text chunks: the template writes what JSON.stringify writes, whatever the text and ids', () => {
  const chunk = fc.record({
    type: fc.constantFrom('agent_message_chunk' as const, 'agent_thought_chunk' as const),
    sessionId: id,
    turnId: fc.option(id, { nil: undefined }),
    messageId: id,
    text: anyText,
    seq: fc.integer({ min: 1, max: 2 ** 40 }),
    ts: fc.nat(),
  });
  const caps = { notices: false, compaction: false };
  // Several in a row, so that the cached template is reused and replaced.
  fc.assert(
    fc.property(fc.array(chunk, { minLength: 1, maxLength: 8 }), (events) => {
      for (const raw of events) {
        const e = (raw.turnId === undefined ? (({ turnId: _t, ...rest }) => rest)(raw) : raw) as unknown as AgentEvent;
        assert.equal(projectEventLines(e, caps), viaSdk(e, caps));
      }
    }),
    { seed, numRuns: fcRuns(300) },
  );
});

test('other events: one line per projected notification, none for internal events', () => {
  const caps = { notices: true, compaction: false };
  const base = { sessionId: 'ses_a', turnId: 'turn_1', ts: 5 };
  const events = [
    { ...base, seq: 1, type: 'turn_started', maxSteps: 3 },
    { ...base, seq: 2, type: 'user_message', messageId: 'msg_u', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b\n"c"' }] },
    { ...base, seq: 3, type: 'session_configured', title: 'T', mode: 'plan' },
    { ...base, seq: 4, type: 'tool_call_started', toolCallId: 'c1', name: 'read_file', kind: 'read', title: 'Read a', status: 'pending', input: { path: 'a' }, locations: [] },
    { ...base, seq: 5, type: 'turn_completed', stopReason: 'error', steps: 1, errorCode: 'internal_error', message: 'boom' },
  ] as unknown as AgentEvent[];
  const lines = events.map((e) => projectEventLines(e, caps));
  assert.deepEqual(lines, events.map((e) => viaSdk(e, caps)));
  assert.equal(lines[0], '');
  assert.equal(lines[1]!.split('\n').length, 3, 'two content blocks: two lines');
});
