/**
 * The fields of /proc/<pid>/stat (Linux), read in one way for the few places that ask the kernel
 * about a process: the lock files (when it started) and the heartbeat watchdog (its state, its CPU
 * time).
 */
import { readFileSync } from 'node:fs';

/**
 * The fields after the command name, from the state on: index 0 is field 3 of proc(5) (`state`), so
 * field N is at index N - 3. Undefined where there is no procfs or no such process.
 */
export function procStatFields(pid: number): string[] | undefined {
  if (!(pid > 0)) return undefined;
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return undefined;
  }
  // `pid (comm) state …`: comm may hold spaces and parentheses, so the fields count from the last ')'.
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}
