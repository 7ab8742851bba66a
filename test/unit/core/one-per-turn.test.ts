import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OnePerTurn } from '../../../src/core/next-turn.js';

/** Holds the thread for `ms`: a job that is slow enough for a timer to fall due while it runs. */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

test('OnePerTurn runs its jobs in order, later than pushed, one per turn of the loop: a timer due after one runs before the next', async () => {
  const queue = new OnePerTurn();
  const seen: string[] = [];
  const done = new Promise<void>((resolve) => {
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
  assert.equal(seen.length, 0, 'nothing runs in push');
  await done;
  assert.deepEqual(seen, ['job 1', 'timer', 'job 2', 'job 3', 'job 4']);
  // A job pushed after the queue ran dry starts it again.
  await new Promise<void>((resolve) => queue.push(() => (seen.push('job 5'), resolve())));
  assert.equal(seen.at(-1), 'job 5');
  // Each push settles as its job does: a job that throws rejects its own push only.
  const failed = queue.push(() => {
    throw new Error('job 6 failed');
  });
  const next = queue.push(() => void seen.push('job 7'));
  await assert.rejects(failed, /job 6 failed/);
  await next;
  assert.equal(seen.at(-1), 'job 7');
});
