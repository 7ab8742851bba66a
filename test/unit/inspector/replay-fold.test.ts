// The replay as a resumable fold (ReplayFold): folding a log in appends of any size, and replaying
// it anew from the start whenever the fold says it went stale, gives at every point exactly what a
// whole replay of the log so far gives. The logs are real: scripted sessions run by a real engine
// (cancels, a close during a turn, a steer, tools, an overflow that compacts), plus a crash.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { AgentEvent } from '../../../src/core/events.js';
import { ReplayFold, replaySession, type ReplayedTransition } from '../../../src/machines/replay.js';
import { text } from '../../support/engine-harness.js';
import { fcSeed } from '../../support/fc-seed.js';
import { recorded, until } from './live-recorder.js';

const write = (path: string) => ({ tool_call: { name: 'write_file', input: { path, content: 'x\n' } } });

/** Folds `events` in the given cuts, checking after each append against a whole replay; returns how often it went stale. */
function foldInCuts(events: readonly AgentEvent[], cuts: number[]): number {
  let fold = new ReplayFold();
  let got: ReplayedTransition[] = [];
  let stale = 0;
  let from = 0;
  for (const to of [...cuts, events.length]) {
    const added = fold.append(events.slice(from, to));
    if (fold.stale) {
      stale++;
      fold.stop();
      fold = new ReplayFold();
      got = fold.append(events.slice(0, to));
      assert.equal(fold.stale, false, 'a fold of the whole log so far is never stale');
    } else got = got.concat(added);
    assert.deepEqual(got, replaySession(events.slice(0, to)), `after seq ${events[to - 1]?.seq}`);
    from = to;
  }
  fold.stop();
  return stale;
}

// The random cuttings come from one printed seed: FC_SEED=<seed> replays a failing run.
const SEED = fcSeed('replay-fold cuttings');
let cuttings = 0;

/** Every event on its own, then a few random cuttings (each event ends an append one time in five). */
function checkAllCuts(events: readonly AgentEvent[]): number {
  const stale = foldInCuts(events, events.map((_, i) => i + 1).slice(0, -1));
  for (let k = 0; k < 5; k++) {
    const ends = fc.sample(fc.integer({ min: 0, max: 4 }), { seed: SEED + cuttings++, numRuns: events.length });
    foldInCuts(events, events.map((_, i) => i + 1).filter((_, i) => ends[i] === 0));
  }
  return stale;
}

test('a log folded event by event equals its whole replay at every seq: tools, steer, cancels', async () => {
  const r = await recorded(
    [
      [{ text: 'Writing.' }, write('a.txt')],
      [{ text: 'Written.' }],
      [{ text: 'first ' }, { delay_ms: 40 }, { text: 'half' }],
      [{ text: 'steered' }],
      [{ text: 'partial' }, { hang: true }],
      [write('b.txt')],
    ],
    { mode: 'default' },
  );
  r.h.asker['answers'].push('allow_once');
  await r.h.engine.prompt(text('write')).result;
  const s = r.h.engine.prompt(text('slow'));
  await until(() => r.h.ofType('agent_message_chunk').some((e) => e.text === 'first '));
  r.h.engine.steer(s.turnId, text('tabs'));
  await s.result;
  const c = r.h.engine.prompt(text('hang'));
  await until(() => r.h.ofType('agent_message_chunk').some((e) => e.text === 'partial'));
  r.h.engine.cancel();
  await c.result;
  const p = r.h.engine.prompt(text('ask'));
  await r.h.asker.whenAsked();
  r.h.engine.cancel();
  await p.result;
  await r.finish();
  // The first turn_started tells the step limit the machines started with: one replay anew.
  assert.equal(checkAllCuts(r.h.events), 1);
});

test('a close right after a cancelled turn, learnt only after the cancel was folded, makes the fold stale', async () => {
  const r = await recorded([[{ text: 'x' }, { hang: true }]]);
  const a = r.h.engine.prompt(text('go'));
  await until(() => r.h.ofType('agent_message_chunk').length > 0);
  // What SessionEngine.close() wrote (until 2026-12-07): the turn cancelled, then session_closed at once.
  r.h.engine.cancel();
  await a.result;
  r.h.log.append({ type: 'session_closed', sessionId: r.h.engine.sessionId, reason: 'closed' });
  await r.finish();
  const events = r.h.events;
  assert.equal(events.at(-1)!.type, 'session_closed');
  assert.equal(replaySession(events).at(-1)!.state, 'closed');
  // Cut just before the close: the cancel was folded as a cancel, the close says it was a close.
  assert.equal(foldInCuts(events, [events.length - 1]), 1);
  assert.ok(checkAllCuts(events) >= 2);
});

test('an overflow with nothing to compact, one that compacts, an error, and a crash the next process logged', async () => {
  const r = await recorded([
    [{ context_overflow: 'too long' }],
    [{ context_overflow: 'too long' }],
    [{ text: 'after compaction' }],
    [{ error: { kind: 'invalid_request', message: 'bad' } }],
  ]);
  // The first prompt's overflow ends its turn at once (nothing to compact); the second's compacts.
  assert.equal((await r.h.engine.prompt(text('big')).result).errorCode, 'context_overflow');
  assert.equal((await r.h.engine.prompt(text('again')).result).stopReason, 'end_turn');
  await r.h.engine.prompt(text('bad')).result;
  await r.finish();
  const events = r.h.events;
  const last = events.at(-1)!;
  const base = { sessionId: last.sessionId, ts: last.ts + 1 };
  const crashed = [
    ...events,
    { ...base, seq: last.seq + 1, type: 'user_message', turnId: 't9', messageId: 'm9', content: text('go') },
    { ...base, seq: last.seq + 2, type: 'turn_started', turnId: 't9', maxSteps: 3 },
    { ...base, seq: last.seq + 3, type: 'agent_message_chunk', turnId: 't9', messageId: 'a9', text: 'x' },
    { ...base, seq: last.seq + 4, type: 'turn_completed', turnId: 't9', stopReason: 'error', errorCode: 'agent_crashed', steps: 1 },
    { ...base, seq: last.seq + 5, type: 'user_message', turnId: 't10', messageId: 'm10', content: text('again') },
    { ...base, seq: last.seq + 6, type: 'turn_started', turnId: 't10', maxSteps: 2 },
  ] as AgentEvent[];
  const second = events.filter((e) => e.type === 'turn_started')[1]!.turnId;
  assert.deepEqual(events.flatMap((e) => (e.type === 'compaction_completed' ? [e.turnId] : [])), [second], 'only the second turn compacted');
  // The machines restarted by the crash learn their step limit from the next turn_started.
  assert.equal(checkAllCuts(crashed), 2);
});

test('a long reply: the fold keeps none of its chunks between appends', () => {
  const base = { sessionId: 'ses_long', ts: 1 };
  const events: AgentEvent[] = [
    { ...base, seq: 1, type: 'session_created', cwd: '/', additionalDirectories: [], model: 'm', mode: 'default' },
    { ...base, seq: 2, type: 'user_message', turnId: 't1', messageId: 'm1', content: text('go') },
    { ...base, seq: 3, type: 'turn_started', turnId: 't1', maxSteps: 5 },
  ] as AgentEvent[];
  for (let i = 0; i < 3000; i++) events.push({ ...base, seq: 4 + i, type: 'agent_message_chunk', turnId: 't1', messageId: 'a1', text: `w${i} ` } as AgentEvent);
  const fold = new ReplayFold();
  fold.append(events);
  const turn = (fold as unknown as { actor: { getSnapshot(): { children: { turn: { getSnapshot(): { children: Record<string, unknown> } } } } } }).actor.getSnapshot().children.turn;
  const runs = (fold as unknown as { runs: WeakMap<object, { effect: string; emitted: unknown[] }> }).runs;
  const step = Object.values(turn.getSnapshot().children).map((ref) => runs.get(ref as object)).find((r) => r?.effect === 'modelStep');
  assert.ok(step, 'the model step is pending');
  assert.equal(step.emitted.length, 0);
  fold.stop();
});

test('machines started before the log gave their step limit: a turn that reaches it replays as a whole replay does', async () => {
  const r = await recorded([[{ text: 'a' }, write('a.txt')], [write('b.txt')], [write('c.txt')]], { limits: { maxSteps: 2 } });
  assert.equal((await r.h.engine.prompt(text('go')).result).stopReason, 'max_turn_requests');
  await r.finish();
  const events = r.h.events;
  const started = events.findIndex((e) => e.type === 'turn_started');
  // Cut right before the turn_started: the fold's machines start with no step limit known.
  assert.equal(foldInCuts(events, [started]), 1);
});
