/**
 * What the kernel says of a process now: its scheduler state and the CPU time it has used. The
 * heartbeat watchdog asks before it kills a silent child, to tell a child whose loop is stuck from
 * one the machine has not given the CPU to run (spec/daemon.md §Supervision). Linux only (procfs);
 * elsewhere there is no answer and silence alone decides, as it did before.
 */
import { readFileSync } from 'node:fs';

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
  if (process.platform !== 'linux' || !(pid > 0)) return undefined;
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return undefined; // gone (or no procfs)
  }
  // `pid (comm) state ppid …`: comm may hold spaces and parentheses, so the fields are counted
  // from the last ')'. After it: state is the 3rd field of the line, utime the 14th, stime the 15th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (!fields[0] || !Number.isFinite(utime) || !Number.isFinite(stime)) return undefined;
  return { state: fields[0], cpuMs: (utime + stime) * MS_PER_CLOCK_TICK };
}
