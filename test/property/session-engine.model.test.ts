// Model-based test of the session engine: random sequences of prompt, cancel, steer, waits and
// permission answers, over random scripted model outcomes. After each sequence the whole log is
// checked against the lifecycle invariants of spec/machines.md.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { isTroupeError } from '../../src/core/errors.js';
import type { PermissionOutcome } from '../../src/core/events.js';
import type { PromptHandle } from '../../src/actors/session-engine.js';
import type { ScriptItem } from '../../src/providers/scripted/script-items.js';
import { makeHarness, text, type Harness } from '../support/engine-harness.js';
import { fcRuns, fcSeed } from '../support/fc-seed.js';

interface Real {
  h: Harness;
  handles: PromptHandle[];
  /** Turns that were running (not yet completed) when a cancel was sent (or the session unloaded). */
  cancelled: Set<string>;
  /** Prompts still queued when a cancel was sent (or the session unloaded). */
  dropped: Set<string>;
  accepted: string[];
  refused: string[];
}
type Model = Record<string, never>;
type Cmd = fc.AsyncCommand<Model, Real>;

function noteCancel(r: Real) {
  const state = r.h.engine.state();
  const done = new Set(r.h.ofType('turn_completed').map((e) => e.turnId));
  if (state.turnId && !done.has(state.turnId)) r.cancelled.add(state.turnId);
  for (const q of state.queue) r.dropped.add(q.promptId);
}

const open = () => true;
const command = (name: string, check: (m: Model) => boolean, run: (m: Model, r: Real) => Promise<void> | void): Cmd => ({
  check,
  async run(m, r) {
    await run(m, r);
  },
  toString: () => name,
});

const commands = [
  fc.string({ maxLength: 12 }).map((t) => command(`prompt(${JSON.stringify(t)})`, open, (_, r) => void r.handles.push(r.h.engine.prompt(text(t || 'go'))))),
  fc.constant(command('cancel', open, (_, r) => (noteCancel(r), r.h.engine.cancel()))),
  fc.boolean().map((right) =>
    command(`steer(${right ? 'running turn' : 'wrong turn'})`, open, (_, r) => {
      const expected = right ? (r.h.engine.state().turnId ?? 'turn_none') : 'turn_wrong';
      try {
        r.accepted.push(r.h.engine.steer(expected, text('guidance')).steerId);
      } catch (err) {
        assert.ok(isTroupeError(err, 'turn_mismatch') || isTroupeError(err, 'no_active_turn'), `untyped steer failure: ${err}`);
        r.refused.push(err.code);
      }
    }),
  ),
  fc.integer({ min: 0, max: 6 }).map((ms) => command(`wait(${ms})`, () => true, () => new Promise((res) => setTimeout(res, ms)))),
  fc.constantFrom<PermissionOutcome>('allow_once', 'allow_always', 'reject_once', 'reject_always').map((o) =>
    command(`answer(${o})`, open, (_, r) => {
      try {
        r.h.asker.answer(o);
      } catch {
        // No permission request was waiting: nothing to answer.
      }
    }),
  ),
];

const write = { tool_call: { name: 'write_file', input: { path: 'f.txt', content: 'x' } } };
const reply: fc.Arbitrary<ScriptItem[]> = fc.constantFrom<ScriptItem[]>(
  [{ text: 'plain answer' }],
  [{ thought: 'hmm' }, { text: 'answer' }],
  [{ text: 'writing' }, write],
  [{ tool_call: { name: 'list_dir', input: {} } }],
  [{ delay_ms: 3 }, { text: 'slow answer' }],
  [{ text: 'before hang' }, { hang: true }],
  [{ context_overflow: 'prompt is too long' }],
  [{ error: { kind: 'rate_limited', message: '429', retry_after_ms: 10 } }],
  [{ text: 'cut' }, { stop: 'max_tokens' }],
);

async function checkInvariants(r: Real) {
  const { h } = r;
  // The session is unloaded (session/close, session/delete): the running turn and the queue are cancelled.
  noteCancel(r);
  await h.engine.dispose();
  const results = await Promise.race([
    Promise.all(r.handles.map((p) => p.result)),
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error('a prompt result never arrived')), 5000)),
  ]);
  const ev = h.events;
  assert.deepEqual(h.schemaErrors, []);
  ev.forEach((e, i) => assert.equal(e.seq, i + 1, 'seq strictly increases with no holes'));

  const started = h.ofType('turn_started').map((e) => e.turnId);
  const completed = h.ofType('turn_completed');
  assert.deepEqual(completed.map((e) => e.turnId).sort(), [...started].sort(), 'each started turn completes exactly once');
  const stop = new Map(completed.map((e) => [e.turnId, e]));
  for (const turnId of r.cancelled) assert.equal(stop.get(turnId)?.stopReason, 'cancelled', `cancelled turn ${turnId}`);
  for (const e of completed) if (e.stopReason === 'error') assert.ok(e.errorCode, 'errors carry a code');

  r.handles.forEach((handle, i) => {
    const result = results[i]!;
    assert.equal(result.turnId, handle.turnId);
    const turn = stop.get(handle.turnId);
    if (turn) assert.equal(result.stopReason, turn.stopReason, 'the result is the turn’s own');
    else assert.equal(result.stopReason, 'cancelled', 'a prompt that never ran was cancelled');
    if (r.dropped.has(handle.promptId)) assert.equal(result.stopReason, 'cancelled');
  });

  const applied = h.ofType('steer_applied');
  const rejected = h.ofType('steer_rejected');
  const received = new Map(h.ofType('steer_received').map((e) => [e.steerId, e.turnId]));
  for (const steerId of r.accepted) {
    const outcomes = [...applied.filter((e) => e.steerId === steerId), ...rejected.filter((e) => e.steerId === steerId)];
    assert.equal(outcomes.length, 1, `steer ${steerId} is applied or rejected exactly once`);
    assert.equal(outcomes[0]!.turnId, received.get(steerId), 'guidance never leaks into another turn');
    if (outcomes[0]!.type === 'steer_rejected') assert.equal(outcomes[0]!.code, 'turn_ended');
  }
  const refusedLogged = rejected.filter((e) => e.code !== 'turn_ended').map((e) => e.code);
  assert.deepEqual(refusedLogged, r.refused, 'every refused steer is logged with its typed code');

  // Every tool output here is short, so a compaction can only summarize earlier turns: an overflow
  // compacts only when there is one (never on the session's first prompt), and no compaction that
  // completes summarized nothing. Until 2026-12-06 a first prompt's overflow did, then sent the
  // refused request again.
  const firstTurn = started[0];
  for (const e of h.ofType('compaction_started')) assert.notEqual(e.turnId, firstTurn, 'the first turn has nothing to compact');
  for (const e of h.ofType('compaction_completed')) if (e.status === 'completed') assert.ok(e.summary !== undefined, `compaction ${e.compactionId} made nothing smaller`);
}

test('session engine: lifecycle invariants hold for random command sequences', async () => {
  const seed = fcSeed('session engine model');
  await fc.assert(
    fc.asyncProperty(fc.array(reply, { minLength: 1, maxLength: 12 }), fc.commands(commands, { maxCommands: 25 }), async (replies, cmds) => {
      const h = makeHarness(replies, { mode: 'default', limits: { permissionTimeoutMs: 15, maxSteps: 4 } });
      const real: Real = { h, handles: [], cancelled: new Set(), dropped: new Set(), accepted: [], refused: [] };
      await fc.asyncModelRun(() => ({ model: {}, real }), cmds);
      await checkInvariants(real);
    }),
    { seed, numRuns: fcRuns(200) },
  );
});
