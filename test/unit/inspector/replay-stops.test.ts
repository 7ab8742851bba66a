// A turn whose machines stopped (the session's log failed, or one of its machines did) is ended in
// the log by crash repair with the stop's code, not `agent_crashed`: the replay must tell that end
// from the machines' own all the same (src/core/interruption.ts). The logs are written by the real
// engine: its repair when the session host reopens a session that stopped on its log
// (reopen-session.ts passes the stop's error to SessionEngine.open), and its stop on a machine's
// failure in the same process. The turn after the restart is checked against the live machines of
// the engine that ran it, labelled by the same recorder a supervised child reports with.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AgentEvent } from '../../../src/core/events.js';
import { replaySession, statesAt, type ReplayedTransition } from '../../../src/machines/replay.js';
import { transitionRecorder } from '../../../src/machines/transition-recorder.js';
import { SessionEngine } from '../../../src/actors/session-engine.js';
import { makeHarness, text, throwOnceOnAppend, type Harness } from '../../support/engine-harness.js';
import { ControlledAsker } from '../../support/controlled-asker.js';
import { until, type Live } from './live-recorder.js';

const write = (path: string) => ({ tool_call: { name: 'write_file', input: { path, content: 'x\n' } } });
const sleep = { tool_call: { name: 'run_command', input: { command: 'sleep 30' } } };
const shown = (ts: readonly ReplayedTransition[]): Live[] => ts.map((t) => ({ machine: t.machine, state: t.state, event: t.event }));

/** Opens the session's log in a new engine (what the host does next), recording its machines' transitions from their start. */
async function reopen(h: Harness, interrupted?: { code: string; message: string }) {
  const live: Live[] = [];
  const inspect = transitionRecorder((t) => live.push({ machine: t.machine, state: t.state, event: t.event }));
  const engine = await SessionEngine.open({ ...(h.engine as any).core.deps, asker: new ControlledAsker() }, h.engine.sessionId, interrupted, { inspect });
  return { engine, live };
}

/**
 * The replay of `events`, where the turn stopped after `stoppedAt` and was ended by the repair: the
 * machines stay where they stopped through the repair, restart at its end, and from there replay
 * as `live` ran. Returns the repair's events.
 */
function assertStoppedThenRestarted(events: readonly AgentEvent[], stoppedAt: number, state: string, live: Live[]): AgentEvent[] {
  const end = events.find((e) => e.seq > stoppedAt && e.type === 'turn_completed')!;
  const repair = events.filter((e) => e.seq > stoppedAt && e.seq <= end.seq);
  const all = replaySession(events);
  assert.deepEqual(statesAt(all, stoppedAt), { session: 'running', turn: state });
  for (const e of repair.slice(0, -1)) assert.deepEqual(statesAt(all, e.seq), { session: 'running', turn: state }, `at the repair's ${e.type}`);
  assert.deepEqual(statesAt(all, end.seq), { session: 'idle' }, 'the turn ends with the restart');
  assert.deepEqual(shown(all.filter((t) => t.seq >= end.seq)), live, 'from the restart on, as the machines ran');
  return repair;
}

test("a turn whose session stopped on its log, ended by the repair with log_write_failed when it is reopened, replays as a crash: stopped where it was, restarted at its end, and the next turn as live", async (t) => {
  const cases: { state: string; h: Harness; reached: (h: Harness) => Promise<void> }[] = [
    { state: 'modelStep', h: makeHarness([[{ text: 'a' }, { delay_ms: 30_000 }], [{ text: 'after' }]]), reached: (h) => until(() => h.ofType('agent_message_chunk').length > 0) },
    { state: 'tools.awaitingPermission', h: makeHarness([[write('a.txt')], [{ text: 'after' }]], { mode: 'default' }), reached: (h) => h.asker.whenAsked() },
    { state: 'tools.running', h: makeHarness([[sleep], [{ text: 'after' }]]), reached: (h) => until(() => h.ofType('tool_call_updated').some((e) => e.status === 'in_progress')) },
  ];
  for (const c of cases) {
    t.after(() => c.h.engine.dispose());
    c.h.engine.prompt(text('go'));
    await c.reached(c.h);
    const stoppedAt = c.h.events.at(-1)!.seq;
    const { engine, live } = await reopen(c.h, { code: 'log_write_failed', message: "the session's event log cannot be written: ENOSPC" });
    t.after(() => engine.dispose());
    assert.equal((await engine.prompt(text('next')).result).stopReason, 'end_turn');
    const repair = assertStoppedThenRestarted(c.h.events, stoppedAt, c.state, live);
    const ends = repair.filter((e) => e.type !== 'permission_resolved');
    assert.deepEqual(ends.map((e) => [e.type, 'errorCode' in e && e.errorCode, 'interrupted' in e && e.interrupted]).at(-1), ['turn_completed', 'log_write_failed', true]);
    assert.ok(ends.every((e) => 'interrupted' in e && e.interrupted === true), `every end the repair wrote is marked: ${JSON.stringify(ends)}`);
    assert.deepEqual(c.h.schemaErrors, []);
  }
});

test('a compaction whose session stopped on its log, ended failed log_write_failed by the repair, replays as a crash there', async (t) => {
  const h = makeHarness({ replies: [[{ text: 'one' }], [{ text: 'two' }]], compaction: [{ hang: true }], capabilities: { contextWindow: 200 } }, { mode: 'bypass', limits: { keepTurns: 0 } });
  t.after(() => h.engine.dispose());
  await h.engine.prompt(text('first')).result;
  h.engine.prompt(text('go'));
  await until(() => h.ofType('compaction_started').length > 0);
  const stoppedAt = h.events.at(-1)!.seq;
  const { engine, live } = await reopen(h, { code: 'log_write_failed', message: 'disk full' });
  t.after(() => engine.dispose());
  const repair = assertStoppedThenRestarted(h.events, stoppedAt, 'compacting', live);
  assert.deepEqual(
    repair.map((e) => [e.type, 'errorCode' in e && e.errorCode, 'interrupted' in e && e.interrupted]),
    [
      ['compaction_completed', 'log_write_failed', true],
      ['turn_completed', 'log_write_failed', true],
    ],
  );
  assert.deepEqual(h.schemaErrors, []);
});

test("a turn whose session stopped on a machine's failure (internal_error) at a permission prompt replays stopped there, restarted at the repair's end, and the next turn as live", async (t) => {
  const h = makeHarness([[write('a.txt')], [{ text: 'after' }]], { mode: 'default' });
  t.after(() => h.engine.dispose());
  const prompt = h.engine.prompt(text('go'));
  await h.asker.whenAsked();
  const stoppedAt = h.events.at(-1)!.seq;
  // An action of the session machine throws (a bug), once: here the one that logs a steer.
  throwOnceOnAppend(h, 'steer_received');
  try {
    h.engine.steer(prompt.turnId, text('guidance'));
  } catch {
    // refused or not: the session has stopped either way
  }
  assert.equal((await prompt.result).errorCode, 'internal_error');
  // The host unloads the stopped session; the next request opens it again (nothing left to repair).
  const { engine, live } = await reopen(h);
  t.after(() => engine.dispose());
  assert.equal((await engine.prompt(text('next')).result).stopReason, 'end_turn');
  const repair = assertStoppedThenRestarted(h.events, stoppedAt, 'tools.awaitingPermission', live);
  assert.deepEqual(
    repair.map((e) => [e.type, 'errorCode' in e && e.errorCode, 'interrupted' in e && e.interrupted]),
    [
      ['permission_resolved', false, false],
      ['tool_call_updated', 'internal_error', true],
      ['turn_completed', 'internal_error', true],
    ],
  );
  assert.deepEqual(h.schemaErrors, []);
});
