/**
 * A lock file held by a live process: made with an exclusive create, holding the holder's pid and,
 * where /proc tells it, its process start time (a pid alone does not name a process for long: after
 * a hard kill or a reboot another process may have it). A lock whose process is gone, or whose pid
 * another process has since, is taken over, as the very file found so and by one contender at a
 * time (stale-lock.ts); there is no time limit, a holder may run for days. The daemon's lock (one
 * daemon per home) and a session log's writer lock are such locks.
 */
import { createExclusive } from './exclusive-create.js';
import { holderOf, type LockSeen, ownLockLine, parseLockLine, readLock, removeLockIfStill } from './stale-lock.js';

/** The lock as it is now; undefined if there is none or it cannot be read. */
function seenOrUndefined(path: string): LockSeen | undefined {
  try {
    return readLock(path);
  } catch {
    return undefined;
  }
}

/**
 * The pid of the live process that holds the lock at `path` (this one included), -1 for one being
 * made right now, undefined if none holds it.
 */
export function processLockHolder(path: string): number | undefined {
  return holderOf(seenOrUndefined(path));
}

/** The live process holding a lock. */
export interface LockHolder {
  pid: number;
  /** When it took the lock (the lock's mtime). */
  sinceMs: number;
  /**
   * Whether the lock names its start time too, so that the pid cannot be another process's by now
   * (the lock itself proves who holds it, where a pid alone may have come round again). False where
   * there is no /proc to give it.
   */
  sameProcess: boolean;
}

/**
 * The live process holding the lock at `path` (this one included). Undefined if none holds it, or
 * one is being made right now (its holder not known yet).
 */
export function liveProcessLockHolder(path: string): LockHolder | undefined {
  const seen = seenOrUndefined(path);
  const pid = holderOf(seen);
  if (!seen || pid === undefined || pid < 0) return undefined;
  return { pid, sinceMs: seen.mtimeMs, sameProcess: parseLockLine(seen.text)?.start !== undefined };
}

/**
 * Takes the lock at `path`; returns its release. A live holder makes it throw `refused(holder)`
 * (holder: its pid, -1 while its maker writes it, undefined if it could not be taken at all:
 * another process was taking over the same stale lock).
 * `ownIsStale`: a lock naming this very process is left over (a process that takes its lock once,
 * and whose pid came round again), not held.
 */
export function takeProcessLock(path: string, refused: (holder: number | undefined) => Error, { ownIsStale = false } = {}): () => void {
  const line = ownLockLine();
  // Three: a stale lock, a breaker its killed breaker left (removed on the way), then the lock.
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      // Never empty, even for a moment: an empty lock reads as one being made, and holds others off.
      createExclusive(path, line);
      const own = seenOrUndefined(path);
      // Only our own: after a takeover (we were taken for dead) the lock is another's.
      return () => void (own && removeLockIfStill(path, own));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const seen = seenOrUndefined(path);
      const holder = holderOf(seen);
      if (holder !== undefined && !(ownIsStale && holder === process.pid)) throw refused(holder);
      if (seen) removeLockIfStill(path, seen);
    }
  }
  throw refused(undefined);
}
