/**
 * Where children come from: a warm pool of spawned `troupe acp` processes, and a spawn queue.
 * Spawning and loading code is most of a session's start-up cost (spec/daemon.md §Warm pool): a
 * pooled child has paid it and waits on stdin, so `session/new` only has to initialize it. The
 * processes are started by the spawner process (child-spawner.ts: a fork never holds the daemon's
 * loop), and at most `concurrency` children are started or load their code at once, so a burst of
 * sessions does not thrash the cores; requests wait their turn in order. Refilling has the lowest
 * priority: it starts `refillDelayMs` after the last take, so that the new child's loading does not
 * compete for the CPU with the `session/new` that took a warm child.
 * A pooled child is also made ready ahead (`prepare`: the daemon sends it `initialize`) once its code
 * has loaded, so that the session taking it has one round trip less to wait for.
 */
import { TroupeError } from '../core/errors.js';
import type { Logger } from '../core/ports.js';
import type { ChildProcessHandle } from './child-process.actor.js';

/** After a spawn that failed, the pool refills no sooner than this (the limit is likely still there). */
const SPAWN_RETRY_MS = 1000;
/**
 * Pooled children that may die while they wait, one after the other with none taken alive between,
 * before the pool stops refilling: their start fails (a broken NODE_OPTIONS, a heap budget too small
 * to load, a home they cannot use), and each replacement would die the same way.
 */
const DEATHS_BEFORE_REST = 3;

/**
 * Why no process could be started, for the request that waited for one: the daemon's own limits
 * (open files, processes, memory), a capacity problem rather than a crash of the session.
 */
function spawnFailure(errno: string): TroupeError {
  const why =
    errno === 'EMFILE' || errno === 'ENFILE'
      ? 'the daemon has too many open files: raise its open-files limit (ulimit -n) or lower --max-sessions'
      : errno === 'EAGAIN' || errno === 'ENOMEM'
        ? 'the system refused another process (ulimit -u, or memory)'
        : 'see the daemon log';
  return new TroupeError('capacity_exceeded', `cannot start a process for the session (spawn ${errno}): ${why}`, { reason: errno });
}

export class ChildPool {
  private readonly warm: ChildProcessHandle[] = [];
  private readonly waiting: { resolve: (child: ChildProcessHandle) => void; reject: (err: TroupeError) => void }[] = [];
  private starting = 0;
  private scheduled = false;
  private closed = false;
  private refillTimer?: NodeJS.Timeout;
  /** No refill spawn before this time (ms since epoch): a `session/new` is using the taken child. */
  private quietUntil = 0;
  /** Pooled children that died while they waited since one was last taken alive. */
  private diedWaiting = 0;
  /**
   * Refilling stopped (DEATHS_BEFORE_REST): until the next take, which spawns for its request as
   * always and lets one refill try again. Respawning at once spun for good, unlogged, while every
   * child died at its start: a process start every few hundred milliseconds, for nothing.
   */
  private resting = false;

  constructor(
    private readonly size: number,
    private readonly launch: () => Promise<ChildProcessHandle>,
    private readonly logger: Logger,
    private readonly prepare: (child: ChildProcessHandle) => void = () => undefined,
    private readonly concurrency = 2,
    private readonly refillDelayMs = 50,
  ) {
    this.pump();
  }

  /**
   * A warm child if one is ready, else the next one spawned. The pool refills behind it. Rejects
   * (`capacity_exceeded`, see spawnFailure) when no process could be started.
   */
  take(): Promise<ChildProcessHandle> {
    let child: ChildProcessHandle | undefined;
    this.quietUntil = Date.now() + this.refillDelayMs;
    while ((child = this.warm.shift()) && !child.alive) this.logger.warn('a pooled child died while waiting; discarding it', { pid: child.pid });
    // Demand: one refill tries again (a pool that rests starts no more children by itself).
    this.resting = false;
    if (child) {
      this.diedWaiting = 0;
      this.pump();
      return Promise.resolve(child);
    }
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      this.pump();
    });
  }

  get available(): number {
    return this.warm.filter((c) => c.alive).length;
  }

  /** Stops every warm child. */
  async close(graceMs: number): Promise<void> {
    this.closed = true;
    clearTimeout(this.refillTimer);
    await Promise.all(this.warm.splice(0).map((c) => c.stop(graceMs)));
  }

  /** Spawns the next child when a loading slot is free: for a waiting request first, else to refill. */
  private pump(): void {
    if (this.scheduled || this.closed || this.starting >= this.concurrency) return;
    if (this.waiting.length === 0) {
      if (this.resting || this.warm.length + this.starting >= this.size || this.refillTimer) return;
      const wait = this.quietUntil - Date.now();
      if (wait > 0) {
        this.refillTimer = setTimeout(() => {
          this.refillTimer = undefined;
          this.pump();
        }, wait);
        this.refillTimer.unref();
        return;
      }
    }
    clearTimeout(this.refillTimer);
    this.refillTimer = undefined;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (this.closed || this.starting >= this.concurrency) return;
      const waiter = this.waiting.shift();
      if (!waiter && (this.resting || this.warm.length + this.starting >= this.size)) return;
      this.starting++;
      this.launch().then(
        (child) => this.launched(child, waiter),
        (err: unknown) => {
          this.starting--;
          this.spawnFailed(waiter, spawnFailure((err as { code?: string }).code ?? String(err)));
        },
      );
    });
  }

  /** A process started: to the request that waited for it, else into the pool. */
  private launched(child: ChildProcessHandle, waiter: { resolve: (child: ChildProcessHandle) => void } | undefined): void {
    void child.started.then(() => {
      this.starting--;
      this.pump();
    });
    if (waiter) waiter.resolve(child);
    else if (this.closed) void child.stop(0); // closed while it was being spawned
    else {
      this.warm.push(child);
      // Only while it waits here: a child taken before it loaded is initialized by its session.
      void child.started.then(() => child.alive && this.warm.includes(child) && this.prepare(child));
      void child.whenExited().then((exit) => {
        const at = this.warm.indexOf(child);
        if (at < 0) return; // taken, or the pool closed
        this.warm.splice(at, 1);
        this.diedWaiting++;
        // Its last words say why (a child that cannot start says so on stderr).
        const why = { pid: child.pid, code: exit.code, signal: exit.signal, reason: exit.reason, stderr: exit.stderrTail.slice(-500) };
        if (this.diedWaiting < DEATHS_BEFORE_REST) this.logger.warn('a pooled child died while waiting; replacing it', why);
        else if (!this.resting) {
          this.resting = true;
          this.logger.error(`${this.diedWaiting} pooled children in a row died while waiting; the warm pool stops refilling until a session needs a child`, why);
        }
        this.pump();
      });
    }
    this.pump();
  }

  /**
   * No process could be started: the request that waited is told why, and refilling waits a while
   * rather than spin on a limit that is likely still there.
   */
  private spawnFailed(waiter: { reject: (err: TroupeError) => void } | undefined, err: TroupeError): void {
    this.quietUntil = Math.max(this.quietUntil, Date.now() + SPAWN_RETRY_MS);
    if (waiter) waiter.reject(err);
    else this.logger.warn('cannot start a child for the warm pool; trying again in a while', { error: err.message });
    this.pump();
  }
}
