/**
 * The daemon's files in $TROUPE_HOME: the bearer token (0600, made on first start), the lock that
 * keeps one daemon per home, and the state file (pid, url, version) that clients use to find it.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TroupeError } from '../core/errors.js';
import { makeDirs, takeProcessLock } from '../store/index.js';

export interface DaemonState {
  pid: number;
  url: string;
  version: string;
  startedAt: number;
}

export const tokenPath = (home: string) => join(home, 'token');
export const statePath = (home: string) => join(home, 'daemon.json');
const lockPath = (home: string) => join(home, 'daemon.lock');

/** The token, created (0600) if there is none yet. */
export function ensureToken(home: string): string {
  makeDirs(home, 0o700);
  try {
    const existing = readFileSync(tokenPath(home), 'utf8').trim();
    if (existing.length >= 32) return existing;
  } catch {
    // No token yet: make one.
  }
  const token = randomBytes(32).toString('base64url');
  writeFileSync(tokenPath(home), token + '\n', { mode: 0o600 });
  return token;
}

/**
 * Takes the home's lock, or throws `daemon_running`. The lock names the daemon by its pid and, where
 * /proc tells it, the time its process started: a lock left by a dead process is taken over, and so
 * is one whose pid another process has since (a daemon killed hard, then a reboot or a restarted
 * container, where pids come round again).
 */
export function acquireLock(home: string): () => void {
  makeDirs(home, 0o700);
  // The daemon takes its lock once: one naming its own pid is an earlier life's.
  return takeProcessLock(
    lockPath(home),
    (pid) => (pid === undefined ? new TroupeError('daemon_running', `could not take the lock in ${home}`) : new TroupeError('daemon_running', `a daemon (pid ${pid}) already serves ${home}`, { pid })),
    { ownIsStale: true },
  );
}

/** Written to a temporary file and renamed, so a reader never sees half of it. */
export function writeState(home: string, state: DaemonState): void {
  const tmp = `${statePath(home)}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(state, null, 2) + '\n', { mode: 0o600 });
  renameSync(tmp, statePath(home));
}

export function readState(home: string): DaemonState | undefined {
  try {
    return JSON.parse(readFileSync(statePath(home), 'utf8')) as DaemonState;
  } catch {
    return undefined;
  }
}

export function removeState(home: string): void {
  rmSync(statePath(home), { force: true });
}
