// Machine definitions serialize to plain JSON that names every state, effect and transition.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeMachine, type StateDescription } from '../../../src/machines/serialize.js';
import { turnMachine } from '../../../src/machines/turn.machine.js';
import { sessionMachine } from '../../../src/machines/session.machine.js';

function flatten(s: StateDescription): StateDescription[] {
  return [s, ...s.states.flatMap(flatten)];
}

test('the turn machine serializes with every state, effect and named guard', () => {
  const d = JSON.parse(JSON.stringify(describeMachine(turnMachine)));
  const states = flatten(d.root);
  assert.deepEqual(states.map((s) => s.path).sort(), [
    '', 'boundary', 'compacting', 'done', 'modelStep', 'preflight', 'tools',
    'tools.awaitingPermission', 'tools.deciding', 'tools.next', 'tools.running',
  ]);
  assert.equal(d.root.initial, 'preflight');
  const byPath = new Map(states.map((s) => [s.path, s]));
  assert.deepEqual(byPath.get('modelStep')!.invokes, ['modelStep']);
  assert.ok(d.root.transitions.some((t: any) => t.event === 'CANCEL' && t.targets[0] === 'done'));
  const errorEdges = byPath.get('modelStep')!.transitions.filter((t) => t.event === 'error: modelStep');
  assert.deepEqual(errorEdges.map((t) => [t.targets[0], t.guard]), [['compacting', 'canCompactOverflow'], ['done', undefined]]);
  assert.ok(byPath.get('boundary')!.transitions.some((t) => t.event === 'always' && t.guard === 'stepLimitReached'));
  assert.equal(byPath.get('done')!.type, 'final');
});

test('the session machine serializes with its invoked turn', () => {
  const d = describeMachine(sessionMachine);
  const running = d.root.states.find((s) => s.key === 'running')!;
  assert.deepEqual(running.invokes, ['turn']);
  assert.deepEqual(running.transitions.filter((t) => t.event === 'done: turn').map((t) => t.targets[0]), ['closed', 'idle']);
});
