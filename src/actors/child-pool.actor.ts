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
 * While it waits, a pooled child is watched as a session's is (child-watchdog.ts): one that hangs,
 * before its hello or after, is killed and replaced, never handed to a session.
 */
import { TroupeError } from '../core/errors.js';
import type { Logger } from '../core/ports.js';
import type { ChildProcessHandle } from './child-process.actor.js';
import { ChildWatchdog, DEFAULT_STARTUP_TIMEOUT_MS } from './child-watchdog.js';
import { tailOf } from '../core/text-cut.js';

/** After a spawn that failed, the pool refills no sooner than this (the limit is likely still there). */
const SPAWN_RETRY_MS = 1000;
/**
 * Pooled children that may die while they wait, one after the other with none taken alive between,
 * before the pool stops refilling: their start fails (a broken NODE_OPTIONS, a heap budget too small
 * to load, a home they cannot use), and each replacement would die the same way.
 */
const DEATHS_BEFORE_REST = 3;

export interface ChildPoolOptions {
  /** Called once a pooled child has loaded, while it waits (the daemon initializes it ahead). */
  prepare?: (child: ChildProcessHandle) => void;
  /** A pooled child that has said hello and is then silent this long, its loop stuck, is killed (--heartbeat-timeout-ms). */
  heartbeatTimeoutMs?: number;
  /** A pooled child that has not said hello this long after its spawn, its start stuck, is killed (--startup-timeout-ms). */
  startupTimeoutMs?: number;
  /** Children started or loading their code at once. */
  concurrency?: number;
  /** A refill starts no sooner than this after the last take. */
  refillDelayMs?: number;
}

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
  /** The watchdog of each child in `warm` (see watch). */
  private readonly watchdogs = new Map<ChildProcessHandle, ChildWatchdog>();
  private readonly prepare: (child: ChildProcessHandle) => void;
  private readonly heartbeatTimeoutMs: number;
  private readonly startupTimeoutMs: number;
  private readonly concurrency: number;
  private readonly refillDelayMs: number;

  constructor(
    private readonly size: number,
    private readonly launch: () => Promise<ChildProcessHandle>,
    private readonly logger: Logger,
    options: ChildPoolOptions = {},
  ) {
    this.prepare = options.prepare ?? (() => undefined);
    this.heartbeatTimeoutMs = options.heartbeatTimeoutMs ?? 10_000;
    this.startupTimeoutMs = options.startupTimeoutMs ?? DEFAULT_STARTUP_TIMEOUT_MS;
    this.concurrency = options.concurrency ?? 2;
    this.refillDelayMs = options.refillDelayMs ?? 50;
    this.pump();
  }

  /**
   * A warm child if one is ready, else the next one spawned. The pool refills behind it. Rejects
   * (`capacity_exceeded`, see spawnFailure) when no process could be started.
   */
  take(): Promise<ChildProcessHandle> {
    let child: ChildProcessHandle | undefined;
    this.quietUntil = Date.now() + this.refillDelayMs;
    while ((child = this.warm.shift())) {
      this.unwatch(child); // its session watches it from now on
      if (child.alive) break;
      this.logger.warn('a pooled child died while waiting; discarding it', { pid: child.pid });
    }
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
    const warm = this.warm.splice(0);
    warm.forEach((c) => this.unwatch(c));
    await Promise.all(warm.map((c) => c.stop(graceMs)));
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
      this.watch(child);
      // Only while it waits here: a child taken before it loaded is initialized by its session.
      void child.started.then(() => child.alive && this.warm.includes(child) && this.prepare(child));
      void child.whenExited().then((exit) => {
        // Its last words say why (a child that cannot start says so on stderr).
        if (this.leave(child)) this.lostWhileWaiting({ pid: child.pid, code: exit.code, signal: exit.signal, reason: exit.reason, stderr: tailOf(exit.stderrTail, 500) });
      });
    }
    this.pump();
  }

  /**
   * Watches a child while it waits here, as a session's is watched (child-watchdog.ts): the same
   * start-up time to say hello from its spawn, then its heartbeats. Unwatched, a child that hung
   * as it started sat in the pool for good, counted as warm and holding a start slot, and the session
   * that took it found out only through its own start-up check (30 s, then restarts).
   */
  private watch(child: ChildProcessHandle): void {
    const watchdog = new ChildWatchdog({
      sample: () => child.sample(),
      watched: () => child.alive && this.watchdogs.get(child) === watchdog,
      slow: (now, cpuMs) => this.logger.warn('a pooled child is silent but short of CPU (the machine is busy); waiting for it', { pid: child.pid, process: now.state, cpuMs }),
      hung: (now, cpuMs) => {
        if (!this.leave(child)) return;
        this.logger.warn(child.saidHello ? 'a pooled child missed its heartbeats; killing it' : `a pooled child did not start within ${this.startupTimeoutMs} ms; killing it`, { pid: child.pid, process: now?.state, cpuMs });
        child.kill();
        // Counted now: its exit, which frees its start slot, comes after it left the pool.
        this.lostWhileWaiting({ pid: child.pid, reason: 'hung', saidHello: child.saidHello });
      },
    });
    this.watchdogs.set(child, watchdog);
    watchdog.feed(child.saidHello ? this.heartbeatTimeoutMs : this.startupTimeoutMs);
    // As for a session's child: bytes on its control channel are its hello or heartbeats; on stdout
    // (its answer to the initialize sent ahead) they count once it has said hello.
    child.watchWhileWaiting((from) => (from === 'control' || child.saidHello) && watchdog.feed(this.heartbeatTimeoutMs));
  }

  /** The child leaves the pool (taken, or closed): its session or nobody watches it from now on. */
  private unwatch(child: ChildProcessHandle): void {
    this.watchdogs.get(child)?.stop();
    this.watchdogs.delete(child);
    child.watchWhileWaiting(undefined);
  }

  /** Takes a child that died or hung out of the pool; false if it had left already (taken, the pool closed). */
  private leave(child: ChildProcessHandle): boolean {
    const at = this.warm.indexOf(child);
    if (at < 0) return false;
    this.warm.splice(at, 1);
    this.unwatch(child);
    return true;
  }

  /** A pooled child died (or hung) while it waited: replaced, unless too many did in a row (DEATHS_BEFORE_REST). */
  private lostWhileWaiting(why: Record<string, unknown>): void {
    this.diedWaiting++;
    if (this.diedWaiting < DEATHS_BEFORE_REST) this.logger.warn('a pooled child died while waiting; replacing it', why);
    else if (!this.resting) {
      this.resting = true;
      this.logger.error(`${this.diedWaiting} pooled children in a row died while waiting; the warm pool stops refilling until a session needs a child`, why);
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
