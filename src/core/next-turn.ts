/**
 * Resolves on the event loop's next turn (after pending I/O): long work done in slices awaits it
 * between slices, so that one request does not hold up every other (a daemon's clients, an agent's
 * streams).
 */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Runs the jobs pushed to it in order, one per turn of the event loop, with I/O and timers in
 * between: for work that comes in bursts, small piece by small piece but long all together. `push`
 * settles as its job does.
 */
export class OnePerTurn {
  private readonly jobs: (() => void)[] = [];
  private scheduled = false;

  push(job: () => void): Promise<void> {
    return new Promise((resolve, reject) => {
      this.jobs.push(() => {
        try {
          job();
          resolve();
        } catch (err) {
          reject(err);
        }
      });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.runOne);
      }
    });
  }

  private readonly runOne = (): void => {
    const job = this.jobs.shift()!;
    // An immediate set while immediates run waits for the next turn of the loop.
    if (this.jobs.length > 0) setImmediate(this.runOne);
    else this.scheduled = false;
    job();
  };
}
