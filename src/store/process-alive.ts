/** Whether the process a lock names still runs: by pid and, where /proc gives it, its start time. */
import { procStatFields } from '../core/proc-stat.js';

/** Whether a process with this pid exists (EPERM: it exists but is not ours). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * When the process with this pid started, in clock ticks since boot (Linux: field 22 of
 * /proc/<pid>/stat), or undefined where there is no /proc or no such process. A pid alone does not
 * name a process for long: after a hard kill or a reboot another process may have it, and a lock
 * naming the pid would then be held for good.
 */
export function processStartTicks(pid: number): string | undefined {
  return procStatFields(pid)?.[19];
}

/** Whether the process that wrote `pid` (and `startTicks`, if it could) still runs. */
export function isSameProcessAlive(pid: number, startTicks: string | undefined): boolean {
  if (!isProcessAlive(pid)) return false;
  if (startTicks === undefined) return true;
  const now = processStartTicks(pid);
  return now === undefined || now === startTicks;
}
