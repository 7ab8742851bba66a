// The session machine with a stand-in turn the test finishes by hand: queue, fencing, cancel, close.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assign, createActor, setup } from 'xstate';
import { sessionMachine } from '../../../src/machines/session.machine.js';
import type { TurnResult } from '../../../src/machines/turn.machine.js';

/** A turn that ends when told (FINISH) or cancelled, and remembers the steers it was given. */
const standInTurn = setup({
  types: {
    context: {} as { steers: string[]; result?: TurnResult },
    events: {} as { type: 'FINISH' } | { type: 'CANCEL' } | { type: 'STEER'; steerId: string },
    input: {} as { turnId: string; maxSteps: number },
    output: {} as TurnResult,
  },
}).createMachine({
  context: { steers: [] },
  initial: 'running',
  output: ({ context }) => context.result!,
  states: {
    running: {
      on: {
        FINISH: { target: 'done', actions: assign({ result: { stopReason: 'end_turn', steps: 1 } }) },
        CANCEL: { target: 'done', actions: assign({ result: { stopReason: 'cancelled', steps: 0 } }) },
        STEER: { actions: assign({ steers: ({ context, event }) => [...context.steers, event.steerId] }) },
      },
    },
    done: { type: 'final' },
  },
});

function driveSession() {
  const calls: { name: string; params: any }[] = [];
  const record = (name: string) => (_: unknown, params: unknown) => void calls.push({ name, params });
  const actor = createActor(
    sessionMachine.provide({
      actors: { turn: standInTurn as never },
      actions: {
        startTurn: record('startTurn'),
        settleTurn: record('settleTurn'),
        cancelQueued: record('cancelQueued'),
        rejectSteer: record('rejectSteer'),
        announceClosed: record('announceClosed'),
      },
    }),
    { input: { maxSteps: 5 } },
  ).start();
  const prompt = (n: number) => actor.send({ type: 'PROMPT', promptId: `p${n}`, turnId: `t${n}`, content: [{ type: 'text', text: `${n}` }] });
  const turn = () => actor.getSnapshot().children.turn as any;
  return { actor, calls, prompt, turn, named: (n: string) => calls.filter((c) => c.name === n) };
}

test('prompts run one at a time in FIFO order, each with its own result', () => {
  const s = driveSession();
  s.prompt(1);
  s.prompt(2);
  s.prompt(3);
  assert.equal(s.actor.getSnapshot().value, 'running');
  assert.deepEqual(s.actor.getSnapshot().context.queue.map((q) => q.turnId), ['t2', 't3']);
  for (const expected of ['t1', 't2', 't3']) {
    assert.equal(s.actor.getSnapshot().context.current?.turnId, expected);
    s.turn().send({ type: 'FINISH' });
  }
  assert.deepEqual(s.named('startTurn').map((c) => c.params.prompt.turnId), ['t1', 't2', 't3']);
  assert.deepEqual(s.named('settleTurn').map((c) => [c.params.prompt.turnId, c.params.result.stopReason]), [
    ['t1', 'end_turn'],
    ['t2', 'end_turn'],
    ['t3', 'end_turn'],
  ]);
  assert.equal(s.actor.getSnapshot().value, 'idle');
});

test('steer is fenced: the running turn gets it, a wrong id is turn_mismatch, idle is no_active_turn', () => {
  const s = driveSession();
  s.actor.send({ type: 'STEER', steerId: 's0', expectedTurnId: 't1', content: [] });
  assert.equal(s.named('rejectSteer')[0]!.params.code, 'no_active_turn');
  s.prompt(1);
  s.prompt(2);
  s.actor.send({ type: 'STEER', steerId: 's1', expectedTurnId: 't1', content: [] });
  // A queued turn's id is not the running turn: guidance must not leak into another turn.
  s.actor.send({ type: 'STEER', steerId: 's2', expectedTurnId: 't2', content: [] });
  assert.deepEqual(s.turn().getSnapshot().context.steers, ['s1']);
  const mismatch = s.named('rejectSteer')[1]!.params;
  assert.deepEqual([mismatch.steerId, mismatch.code, mismatch.turnId], ['s2', 'turn_mismatch', 't1']);
});

test('cancel ends the running turn and gives every queued prompt a cancelled result', () => {
  const s = driveSession();
  s.prompt(1);
  s.prompt(2);
  s.prompt(3);
  s.actor.send({ type: 'CANCEL' });
  assert.deepEqual(s.named('cancelQueued')[0]!.params.prompts.map((p: any) => p.turnId), ['t2', 't3']);
  assert.deepEqual(s.named('settleTurn').map((c) => [c.params.prompt.turnId, c.params.result.stopReason]), [['t1', 'cancelled']]);
  assert.equal(s.actor.getSnapshot().value, 'idle');
  // The session goes on: a new prompt runs.
  s.prompt(4);
  assert.equal(s.actor.getSnapshot().context.current?.turnId, 't4');
});

test('close while running cancels the turn and the queue, then ends closed', () => {
  const s = driveSession();
  s.prompt(1);
  s.prompt(2);
  s.actor.send({ type: 'CLOSE' });
  s.prompt(3); // refused: the session is closing
  assert.equal(s.actor.getSnapshot().status, 'done');
  assert.equal(s.actor.getSnapshot().value, 'closed');
  assert.deepEqual(s.named('cancelQueued')[0]!.params.prompts.map((p: any) => p.turnId), ['t2']);
  assert.deepEqual(s.named('settleTurn').map((c) => c.params.result.stopReason), ['cancelled']);
  assert.equal(s.named('announceClosed').length, 1);
  assert.equal(s.named('startTurn').length, 1, 'the prompt sent while closing never started');
});

test('close while idle ends closed at once', () => {
  const s = driveSession();
  s.actor.send({ type: 'CLOSE' });
  assert.equal(s.actor.getSnapshot().value, 'closed');
  assert.equal(s.named('announceClosed').length, 1);
});
