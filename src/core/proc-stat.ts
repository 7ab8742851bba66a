/**
 * The fields of /proc/<pid>/stat (Linux), read in one way for the few places that ask the kernel
 * about a process: the lock files (when it started) and the heartbeat watchdog (its state, its CPU
 * time).
 */
import { closeSync, openSync, readFileSync, readSync } from 'node:fs';

/**
 * One buffer for every read. The watchdog reads each child's stat at its start and then every few
 * seconds of heartbeats, and `readFileSync` of a procfs file (its size is 0) allocates two 8 KiB
 * buffers outside the V8 heap each time: with hundreds of children that churn kept 25–55 KiB of
 * freed malloc memory resident per idle session in the daemon (bench/README.md §Live sessions).
 */
const statBuffer = Buffer.allocUnsafeSlow(1024);

/**
 * The fields after the command name, from the state on: index 0 is field 3 of proc(5) (`state`), so
 * field N is at index N - 3. Undefined where there is no procfs or no such process.
 */
export function procStatFields(pid: number): string[] | undefined {
  if (!(pid > 0)) return undefined;
  let stat: string;
  try {
    stat = readStat(`/proc/${pid}/stat`);
  } catch {
    return undefined;
  }
  // `pid (comm) state …`: comm may hold spaces and parentheses, so the fields count from the last ')'.
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

function readStat(path: string): string {
  const fd = openSync(path, 'r');
  let n: number;
  try {
    n = readSync(fd, statBuffer, 0, statBuffer.length, 0);
  } finally {
    closeSync(fd);
  }
  // A stat line is ~300 bytes; one that fills the buffer may be longer, and is read whole.
  return n < statBuffer.length ? statBuffer.toString('latin1', 0, n) : readFileSync(path, 'latin1');
}
