/**
 * A lock file held by a live process: made with an exclusive create, holding the holder's pid and,
 * where /proc tells it, its process start time (a pid alone does not name a process for long: after
 * a hard kill or a reboot another process may have it). A lock whose process is gone, or whose pid
 * another process has since, is taken over; there is no time limit, a holder may run for days. The
 * daemon's lock (one daemon per home) and a session log's writer lock are such locks.
 */
import { readFileSync, rmSync, statSync } from 'node:fs';
import { createExclusive } from './exclusive-create.js';
import { isSameProcessAlive, processStartTicks } from './file-lock.js';

/** This process's line in a lock it takes: "pid start" (the pid alone where there is no /proc). */
function ownLine(): string {
  const start = processStartTicks(process.pid);
  return start === undefined ? String(process.pid) : `${process.pid} ${start}`;
}

function mtimeOf(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

/**
 * The pid of the live process that holds the lock at `path` (this one included), -1 for one being
 * made right now, undefined if none holds it.
 */
export function processLockHolder(path: string): number | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  // Empty: made by a troupe from before 2026-12-06 (an exclusive open, then a write), between the two
  // or killed there (then it is old). Locks are now made with their content (exclusive-create.ts).
  if (!text.trim()) return Date.now() - mtimeOf(path) < 10_000 ? -1 : undefined;
  const [pidText, start] = text.trim().split(' ');
  const pid = Number(pidText);
  return Number.isInteger(pid) && pid > 0 && isSameProcessAlive(pid, start) ? pid : undefined;
}

/**
 * Takes the lock at `path`; returns its release. A live holder makes it throw `refused(holder)`
 * (holder: its pid, -1 while its maker writes it, undefined if it could not be taken at all).
 * `ownIsStale`: a lock naming this very process is left over (a process that takes its lock once,
 * and whose pid came round again), not held.
 */
export function takeProcessLock(path: string, refused: (holder: number | undefined) => Error, { ownIsStale = false } = {}): () => void {
  const line = ownLine();
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      // Never empty, even for a moment: an empty lock reads as one being made, and holds others off.
      createExclusive(path, line);
      return () => {
        // Only our own: after a takeover (we were taken for dead) the lock is another's.
        try {
          if (readFileSync(path, 'utf8') === line) rmSync(path, { force: true });
        } catch {
          // Gone already.
        }
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = processLockHolder(path);
      if (holder !== undefined && !(ownIsStale && holder === process.pid)) throw refused(holder);
      rmSync(path, { force: true });
    }
  }
  throw refused(undefined);
}
