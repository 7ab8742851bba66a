/**
 * A small advisory lock file (`O_EXCL` create) for read-modify-write of shared files such as the
 * session index, which several troupe processes update. A lock left by a dead process (its pid is
 * gone) or older than `staleMs` is broken, so a SIGKILLed holder never blocks the others for long.
 */
import { readFile, stat, unlink } from 'node:fs/promises';
import { TroupeError } from '../core/errors.js';
import { procStatFields } from '../core/proc-stat.js';
import { createExclusive } from './exclusive-create.js';

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

async function isStale(path: string, staleMs: number): Promise<boolean> {
  try {
    const [text, st] = await Promise.all([readFile(path, 'utf8'), stat(path)]);
    const pid = Number.parseInt(text, 10);
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && !isProcessAlive(pid)) return true;
    return Date.now() - st.mtimeMs > staleMs;
  } catch {
    // Gone already (or unreadable): try again shortly.
    return false;
  }
}

/** Runs `fn` while holding the lock file `path`; waits up to `timeoutMs` for it. */
export async function withFileLock<T>(path: string, fn: () => Promise<T>, opts: { timeoutMs?: number; staleMs?: number } = {}): Promise<T> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const staleMs = opts.staleMs ?? 10_000;
  const deadline = Date.now() + timeoutMs;
  for (let wait = 2; ; wait = Math.min(wait * 2, 50)) {
    try {
      // Never empty, even for a moment: an empty lock holds every writer off until it is stale.
      createExclusive(path, String(process.pid));
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      if (await isStale(path, staleMs)) {
        await unlink(path).catch(() => undefined);
        continue;
      }
      if (Date.now() > deadline) throw new TroupeError('internal_error', `timed out waiting for the lock ${path}`, { path });
      await new Promise((r) => setTimeout(r, wait));
    }
  }
  try {
    return await fn();
  } finally {
    await unlink(path).catch(() => undefined);
  }
}
