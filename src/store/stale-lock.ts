/**
 * Removing a stale lock without a race. Every contender that finds a lock left by a dead process
 * may try to remove it; a plain "read it, find its holder dead, unlink the name" lets two of them
 * remove it in turn, the second one removing the fresh lock the first has just made, and both then
 * hold it. So a lock is removed only as the very file that was judged stale (its inode, change
 * time and content: `LockSeen`), and only by the one process that made the "breaker" file named by
 * that identity (an exclusive create): the breaker holder checks, then unlinks, while no other
 * process can remove that file, and no other file can have that identity. A breaker whose maker
 * died is itself a stale lock, removed the same way.
 */
import { closeSync, fstatSync, openSync, readFileSync, rmSync } from 'node:fs';
import { createExclusive } from './exclusive-create.js';
import { isSameProcessAlive, processStartTicks } from './process-alive.js';

/** A lock file as read at one moment: fstat and content of one open file, so they agree. */
export interface LockSeen {
  /** The file's inode and change time: which file this is (a new file at the name has others). */
  key: string;
  text: string;
  mtimeMs: number;
}

/** The lock at `path` as it is now; undefined if there is none. */
export function readLock(path: string): LockSeen | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const st = fstatSync(fd, { bigint: true });
    return { key: `${st.ino}-${st.ctimeNs}`, text: readFileSync(fd, 'utf8'), mtimeMs: Number(st.mtimeMs) };
  } finally {
    closeSync(fd);
  }
}

/** This process's line in a lock it takes: "pid start" (the pid alone where there is no /proc). */
export function ownLockLine(): string {
  const start = processStartTicks(process.pid);
  return start === undefined ? String(process.pid) : `${process.pid} ${start}`;
}

/**
 * What a lock line (ownLockLine's) names: a pid, and its process's start time where the writer had
 * /proc to give it. Undefined for a line that names no pid.
 */
export function parseLockLine(text: string): { pid: number; start: string | undefined } | undefined {
  const [pidText, start] = text.trim().split(' ');
  const pid = Number(pidText);
  return Number.isInteger(pid) && pid > 0 ? { pid, start } : undefined;
}

/** The pid a lock line names, if that process (the same one: its start, where given) still runs. */
function liveHolderOf(text: string): number | undefined {
  const line = parseLockLine(text);
  return line && isSameProcessAlive(line.pid, line.start) ? line.pid : undefined;
}

/** The pid of the live process holding the lock `seen` (this one included), -1 for one being made, undefined if none. */
export function holderOf(seen: LockSeen | undefined): number | undefined {
  if (!seen) return undefined;
  // Empty: made by a troupe from before 2026-12-06 (an exclusive open, then a write), or where the file
  // system has no hard links (exclusive-create.ts), between the two or killed there (then it is old).
  if (!seen.text.trim()) return Date.now() - seen.mtimeMs < 10_000 ? -1 : undefined;
  return liveHolderOf(seen.text);
}

/** A breaker's breaker, and so on, at most this deep: each level needs a process killed within microseconds. */
const MAX_DEPTH = 3;

/**
 * Removes the lock at `path` if it is still the file `seen`. Returns false when another process is
 * removing it at this moment (the caller waits and looks again), true otherwise (removed, or
 * it was not `seen` any more: either way, the caller may try to take the lock now).
 */
export function removeLockIfStill(path: string, seen: LockSeen, depth = 0): boolean {
  const breaker = `${path}.${seen.key}.break`;
  try {
    createExclusive(breaker, ownLockLine());
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const other = readLock(breaker);
    // Its maker was killed before it removed it: nobody else could ever remove `seen`.
    if (other && depth < MAX_DEPTH && holderOf(other) === undefined) removeLockIfStill(breaker, other, depth + 1);
    return false;
  }
  try {
    const now = readLock(path);
    if (now?.key === seen.key && now.text === seen.text) rmSync(path, { force: true });
    return true;
  } finally {
    rmSync(breaker, { force: true });
  }
}
