/**
 * The silence watchdog of one child process (spec/daemon.md §Supervision, Heartbeats): each sign of
 * life puts its verdict `timeoutMs` away. Nothing came for that long: the child is hung if it had the
 * CPU to run and its loop did not turn (stopped with SIGSTOP, asleep without its heartbeats, or
 * running for half the timeout of CPU time since its last sign). A child waiting for a CPU (or the
 * disk) that the machine gives to others has used little: it is slow, not hung, and is given another
 * timeout (its CPU time counts on from the same mark, so a stuck loop is still found).
 *
 * One serves a session's child (supervised-child.actor.ts) and one each pooled child while it waits
 * (child-pool.actor.ts): a child that hangs in the pool is found by the same rules.
 */
import { timeoutAfterReads, type AfterReads } from '../core/after-reads.js';
import type { ProcessSample } from './process-sample.js';

/**
 * By default, a child that has not said hello within this time after its spawn is judged: loading its
 * code takes a while on a busy machine (`--startup-timeout-ms`).
 */
export const DEFAULT_STARTUP_TIMEOUT_MS = 30_000;

/**
 * What is left of a child's start-up time, `startupMs` from its spawn, for a watch that begins now (a
 * session taking a pooled child that has not said hello yet). Until 2026-12-06 that watch began a
 * whole new timeout: a child hung as it started could hold its session up to twice the start-up
 * time. At least a quarter of it, so that a child the pool found slow (short of CPU) is judged on
 * enough of its CPU time, never killed at once.
 */
export function startupLeftMs(spawnedAt: number, startupMs: number, now = Date.now()): number {
  return Math.max(startupMs - (now - spawnedAt), Math.ceil(startupMs / 4));
}

export interface WatchdogOptions {
  /** The child's scheduler state and CPU time now (undefined when it is gone, or without procfs). */
  sample(): ProcessSample | undefined;
  /** Whether a verdict still matters (the child is alive and still this watchdog's to judge). */
  watched(): boolean;
  /** Silent but short of CPU: waited for. Told once per silence. */
  slow(sample: ProcessSample, cpuMs: number): void;
  hung(sample: ProcessSample | undefined, cpuMs: number | undefined): void;
}

export class ChildWatchdog {
  private verdict?: AfterReads;
  /** The current timeout (the startup one until the child said hello). */
  private watchMs = 0;
  /** The child's CPU time when last read: read again on a sign of life at most every half timeout. */
  private cpuMark?: { at: number; cpuMs: number };
  /** Whether this silence was already found to be the machine's, not the child's (said once). */
  private starvedNoted = false;

  constructor(private readonly opts: WatchdogOptions) {}

  /** A sign of life (or the start of the watch): the verdict is `timeoutMs` away. */
  feed(timeoutMs: number): void {
    this.stop();
    this.watchMs = timeoutMs;
    this.starvedNoted = false;
    const now = Date.now();
    if (!this.cpuMark || now - this.cpuMark.at >= timeoutMs / 2) {
      const sample = this.opts.sample();
      this.cpuMark = sample && { at: now, cpuMs: sample.cpuMs };
    }
    this.arm();
  }

  /** Also withdraws a verdict already due that waits for the reads. */
  stop(): void {
    this.verdict?.cancel();
    this.verdict = undefined;
  }

  /** Another process is watched from now on: its CPU time is not the last one's. */
  forgetCpu(): void {
    this.cpuMark = undefined;
  }

  /** After the loop turn's reads: a daemon that was itself short of CPU would judge the child by bytes it has not read yet. */
  private arm(): void {
    this.verdict = timeoutAfterReads(this.watchMs, () => this.judge(), { unref: true });
  }

  private judge(): void {
    if (!this.opts.watched()) return;
    const now = this.opts.sample();
    const cpuMs = now && this.cpuMark ? now.cpuMs - this.cpuMark.cpuMs : undefined;
    if (now && cpuMs !== undefined && (now.state === 'R' || now.state === 'D') && cpuMs < this.watchMs / 2) {
      if (!this.starvedNoted) {
        this.starvedNoted = true;
        this.opts.slow(now, cpuMs);
      }
      return this.arm();
    }
    this.opts.hung(now, cpuMs);
  }
}
