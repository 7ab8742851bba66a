/**
 * A small advisory lock file (`O_EXCL` create) for read-modify-write of shared files such as the
 * session index, which several troupe processes update. A lock left by a dead process (its pid is
 * gone) or older than `staleMs` is broken, so a SIGKILLed holder never blocks the others for long;
 * it is broken as the very file found stale, by one contender at a time (stale-lock.ts).
 */
import { TroupeError } from '../core/errors.js';
import { createExclusive } from './exclusive-create.js';
import { isProcessAlive } from './process-alive.js';
import { type LockSeen, readLock, removeLockIfStill } from './stale-lock.js';

function isStale(seen: LockSeen, staleMs: number): boolean {
  const pid = Number.parseInt(seen.text, 10);
  if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && !isProcessAlive(pid)) return true;
  return Date.now() - seen.mtimeMs > staleMs;
}

/** The lock as it is now, or undefined if it is gone or cannot be read (then: look again shortly). */
function readLockOrUndefined(path: string): LockSeen | undefined {
  try {
    return readLock(path);
  } catch {
    return undefined;
  }
}

/** Runs `fn` while holding the lock file `path`; waits up to `timeoutMs` for it. */
export async function withFileLock<T>(path: string, fn: () => Promise<T>, opts: { timeoutMs?: number; staleMs?: number } = {}): Promise<T> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const staleMs = opts.staleMs ?? 10_000;
  const deadline = Date.now() + timeoutMs;
  let own: LockSeen | undefined;
  for (let wait = 2; ; wait = Math.min(wait * 2, 50)) {
    try {
      // Never empty, even for a moment: an empty lock holds every writer off until it is stale.
      createExclusive(path, String(process.pid));
      own = readLockOrUndefined(path);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const seen = readLockOrUndefined(path);
      // Removed by us (or gone): take it at once. Another contender removing it: wait as for a holder.
      if (seen && isStale(seen, staleMs) && removeLockIfStill(path, seen)) continue;
      if (Date.now() > deadline) throw new TroupeError('internal_error', `timed out waiting for the lock ${path}`, { path });
      await new Promise((r) => setTimeout(r, wait));
    }
  }
  try {
    return await fn();
  } finally {
    // Only our own: held past `staleMs`, it may have been broken, and the lock there is another's now.
    if (own) removeLockIfStill(path, own);
  }
}
