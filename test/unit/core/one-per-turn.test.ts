import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OnePerTurn } from '../../../src/core/next-turn.js';

/** Holds the thread for `ms`: a job that is slow enough for a timer to fall due while it runs. */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

test('OnePerTurn runs its jobs in order, one per turn of the loop: the first at once, a timer due after one runs before the next', async () => {
  const queue = new OnePerTurn();
  const seen: string[] = [];
  let done!: Promise<void>;
  // Pushed from a timer callback, as a request arrives from I/O: not from the test's own start.
  await new Promise<void>((pushed) =>
    setTimeout(() => {
      done = new Promise<void>((resolve) => {
        for (let i = 1; i <= 4; i++) {
          queue.push(() => {
            seen.push(`job ${i}`);
            if (i === 1) setTimeout(() => seen.push('timer'), 0);
            // Past the timer's 1 ms: it is due before the loop's next turn. Run all in one turn (as
            // setImmediate callbacks queued together are), the other jobs would come before it.
            busy(5);
            if (i === 4) resolve();
          });
        }
      });
      pushed();
    }, 0),
  );
  // A lone job does not wait a turn (a warm session/new): the first of a burst runs in its push.
  assert.deepEqual(seen, ['job 1'], 'the first job runs in push, the others wait');
  await done;
  assert.deepEqual(seen, ['job 1', 'timer', 'job 2', 'job 3', 'job 4']);
  // A job pushed in a later turn, the queue dry, runs at once again.
  await new Promise((r) => setTimeout(r, 5));
  await new Promise<void>((resolve) => queue.push(() => (seen.push('job 5'), resolve())));
  assert.equal(seen.at(-1), 'job 5');
  // Each push settles as its job does: a job that throws rejects its own push only.
  await new Promise((r) => setTimeout(r, 5));
  const failed = queue.push(() => {
    throw new Error('job 6 failed');
  });
  const next = queue.push(() => void seen.push('job 7'));
  assert.notEqual(seen.at(-1), 'job 7', 'a second job in the same turn waits');
  await assert.rejects(failed, /job 6 failed/);
  await next;
  assert.equal(seen.at(-1), 'job 7');
});

test('OnePerTurn: after the queue ran dry, a job pushed in the same turn as its last one waits for a later turn', async () => {
  const queue = new OnePerTurn();
  const order: string[] = [];
  await new Promise<void>((resolve) =>
    setTimeout(() => {
      void queue.push(() => order.push('a'));
      void queue.push(() => {
        order.push('b');
        // Pushed while the last queued job runs: not in this same turn.
        void queue.push(() => (order.push('c'), resolve()));
        setImmediate(() => order.push('immediate after b'));
      });
    }, 0),
  );
  assert.deepEqual(order, ['a', 'b', 'immediate after b', 'c']);
});
