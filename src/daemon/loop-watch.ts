/**
 * How responsive the daemon's event loop is, measured inside the daemon (GET /metrics):
 * - `monitorEventLoopDelay` (libuv timer, 10 ms resolution): delay percentiles and max;
 * - a stall classifier: a 20 ms interval timer that fires late by more than 20 ms is a stall. On
 *   Linux the main thread's schedstat (time on a CPU, time waiting in the run queue) says which kind:
 *   waiting for a core more than half the stall, the daemon was *starved* (children booting on a
 *   small machine took the cores); otherwise it was *blocked* by its own work (JavaScript, GC, a
 *   synchronous syscall such as fork), or by a pause of the whole VM, which counts as neither
 *   running nor waiting and so looks the same. Elsewhere the process CPU time stands in (CPU for at least
 *   half the stall: blocked). An outside probe sees both as latency; only this tells them apart.
 * Windows are "since the last scrape" (like prom-client's event-loop lag), counters are cumulative.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const TICK_MS = 20;
const STALL_MS = 20;

export interface LoopWindow {
  delayP50Ms: number;
  delayP99Ms: number;
  delayMaxMs: number;
  blockedMaxMs: number;
  starvedMaxMs: number;
}

export class LoopWatch {
  private readonly delay = monitorEventLoopDelay({ resolution: 10 });
  private readonly timer: NodeJS.Timeout;
  private last = performance.now();
  private lastCpu = process.cpuUsage();
  /** /proc/thread-self/schedstat of the main thread (opened here, on it), or -1. */
  private readonly sched = openSchedstat();
  private readonly buf = Buffer.alloc(64);
  private lastSched = this.schedstat();
  private blockedMax = 0;
  private starvedMax = 0;
  /** Stalls over 50 ms since start, by kind. */
  readonly stallsOver50 = { blocked: 0, starved: 0 };

  constructor() {
    this.delay.enable();
    this.timer = setInterval(() => this.tick(), TICK_MS);
    this.timer.unref();
  }

  private tick(): void {
    const now = performance.now();
    const cpu = process.cpuUsage();
    const wall = now - this.last;
    const late = wall - TICK_MS;
    const sched = this.schedstat();
    if (late > STALL_MS) {
      const cpuMs = (cpu.user - this.lastCpu.user + cpu.system - this.lastCpu.system) / 1000;
      const blocked = sched && this.lastSched ? sched.waitMs - this.lastSched.waitMs <= wall / 2 : cpuMs >= wall / 2;
      if (blocked) this.blockedMax = Math.max(this.blockedMax, late);
      else this.starvedMax = Math.max(this.starvedMax, late);
      if (late > 50) this.stallsOver50[blocked ? 'blocked' : 'starved']++;
    }
    this.last = now;
    this.lastCpu = cpu;
    this.lastSched = sched;
  }

  /** The main thread's time on a CPU and waiting for one, in ms (Linux), else undefined. */
  private schedstat(): { runMs: number; waitMs: number } | undefined {
    if (this.sched < 0) return undefined;
    try {
      const n = readSync(this.sched, this.buf, 0, this.buf.length, 0);
      const [run, wait] = this.buf.toString('latin1', 0, n).split(' ');
      return { runMs: Number(run) / 1e6, waitMs: Number(wait) / 1e6 };
    } catch {
      return undefined;
    }
  }

  /** The figures of the current window. */
  read(): LoopWindow {
    const ms = (ns: number) => (Number.isFinite(ns) ? ns / 1e6 : 0);
    return {
      delayP50Ms: ms(this.delay.percentile(50)),
      delayP99Ms: ms(this.delay.percentile(99)),
      delayMaxMs: ms(this.delay.max),
      blockedMaxMs: this.blockedMax,
      starvedMaxMs: this.starvedMax,
    };
  }

  /** Starts a new window. */
  reset(): void {
    this.delay.reset();
    this.blockedMax = 0;
    this.starvedMax = 0;
  }

  stop(): void {
    clearInterval(this.timer);
    this.delay.disable();
    if (this.sched >= 0) closeSync(this.sched);
  }
}

function openSchedstat(): number {
  try {
    return openSync('/proc/thread-self/schedstat', 'r');
  } catch {
    return -1;
  }
}
