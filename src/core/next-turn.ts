/**
 * Resolves on the event loop's next turn (after pending I/O): long work done in slices awaits it
 * between slices, so that one request does not hold up every other (a daemon's clients, an agent's
 * streams).
 */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Runs the jobs pushed to it in order, one per turn of the event loop, with I/O and timers in
 * between: for work that comes in bursts, small piece by small piece but long all together. `push`
 * settles as its job does. A job pushed when none waits and none has run in this turn runs at once,
 * inside `push`: a lone request (a warm `session/new`) does not wait a turn for nothing, and its
 * child is sent the request before its HTTP 202 is written, not after (spec/daemon.md §Relay). The
 * jobs pushed behind it wait for later turns, one per turn, as before.
 */
export class OnePerTurn {
  private readonly jobs: (() => void)[] = [];
  private scheduled = false;
  /** A job ran at once in this turn: the next waits for a later one. Cleared by `endTurn`. */
  private ranThisTurn = false;

  push(job: () => void): Promise<void> {
    return new Promise((resolve, reject) => {
      const run = () => {
        try {
          job();
          resolve();
        } catch (err) {
          reject(err);
        }
      };
      if (!this.scheduled && !this.ranThisTurn) {
        this.ranThisTurn = true;
        setImmediate(this.endTurn);
        return run();
      }
      this.jobs.push(run);
      if (!this.scheduled) {
        this.scheduled = true;
        // Set while a job that ran at once holds this turn: an immediate set now runs later in the
        // same turn of the loop (its check phase), so the next job waits one more.
        if (this.ranThisTurn) setImmediate(() => setImmediate(this.runOne));
        else setImmediate(this.runOne);
      }
    });
  }

  private readonly endTurn = (): void => {
    this.ranThisTurn = false;
  };

  private readonly runOne = (): void => {
    const job = this.jobs.shift()!;
    // An immediate set while immediates run waits for the next turn of the loop.
    if (this.jobs.length > 0) setImmediate(this.runOne);
    else {
      this.scheduled = false;
      // This turn has had its job: one pushed later in it waits, as behind a job run at once.
      this.ranThisTurn = true;
      setImmediate(this.endTurn);
    }
    job();
  };
}
