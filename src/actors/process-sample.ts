/**
 * What the kernel says of a process now: its scheduler state and the CPU time it has used. The
 * heartbeat watchdog asks before it kills a silent child, to tell a child whose loop is stuck from
 * one the machine has not given the CPU to run (spec/daemon.md §Supervision). Linux only (procfs);
 * elsewhere there is no answer and silence alone decides, as it did before.
 */
import { procStatFields } from '../core/proc-stat.js';

export interface ProcessSample {
  /**
   * One letter, as in `ps`: `R` running or runnable, `D` waiting on the disk, `S` asleep, `T`
   * stopped (SIGSTOP), `Z` exited and not reaped yet.
   */
  state: string;
  /** User and system CPU time of all its threads, in ms (10 ms resolution). */
  cpuMs: number;
}

/** USER_HZ: the unit of /proc's CPU times, 100 on every Linux ABI whatever the kernel's own tick. */
const MS_PER_CLOCK_TICK = 10;

export function sampleProcess(pid: number): ProcessSample | undefined {
  const fields = process.platform === 'linux' ? procStatFields(pid) : undefined;
  if (!fields) return undefined; // gone (or no procfs)
  // Fields 3 (state), 14 (utime) and 15 (stime).
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (!fields[0] || !Number.isFinite(utime) || !Number.isFinite(stime)) return undefined;
  return { state: fields[0], cpuMs: (utime + stime) * MS_PER_CLOCK_TICK };
}
