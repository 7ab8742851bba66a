// The child machine's restart after its backoff is a delayed transition, whose XState event name is
// `xstate.after.backoff.child.backoff`: the timeline says `after backoff`, as the chart's edge does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildRows } from '../../../src/inspector-ui/timeline.js';
import { shownEvent } from '../../../src/inspector-ui/event-label.js';

test('a delayed transition of the child reads `after <delay>` on the timeline; other events as they are', () => {
  const child = [
    { n: 1, sessionId: 's', machine: 'child' as const, state: 'backoff', event: 'EXITED', at: 1 },
    { n: 2, sessionId: 's', machine: 'child' as const, state: 'restarting', event: 'xstate.after.backoff.child.backoff', at: 2 },
  ];
  assert.deepEqual(
    buildRows([], [], child, []).map((r) => r.text),
    ['child → backoff   on EXITED', 'child → restarting   on after backoff'],
  );
  assert.equal(shownEvent('done: modelStep'), 'done: modelStep');
});
