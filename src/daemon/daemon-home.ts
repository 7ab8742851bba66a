/**
 * The daemon's files in $TROUPE_HOME: the bearer token (0600, made on first start), the lock that
 * keeps one daemon per home, and the state file (pid, url, version) that clients use to find it.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TroupeError } from '../core/errors.js';
import type { Logger } from '../core/ports.js';
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

const stateText = (state: DaemonState) => JSON.stringify(state, null, 2) + '\n';

/** Written to a temporary file and renamed, so a reader never sees half of it. */
export function writeState(home: string, state: DaemonState): void {
  const tmp = `${statePath(home)}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, stateText(state), { mode: 0o600 });
    renameSync(tmp, statePath(home));
  } catch (err) {
    // A full disk: no half-written temp file is left behind, one per failed try.
    rmSync(tmp, { force: true });
    throw err;
  }
}

/** How often a running daemon looks at its state file (spec/daemon.md §Files). */
export const STATE_CHECK_MS = 1_000;

/**
 * Keeps the state file saying what `state` says while the daemon runs: a file removed (a stray
 * `rm`), cut short or edited (an editor, a full disk) is written again at the next look, so clients
 * find the daemon again without anyone killing it. Clients wait that long for it (src/cli).
 *
 * A look every second rather than fs.watch: one small read a second costs nothing measurable, and
 * it works wherever the home is (fs.watch misses changes on network file systems, fails once the
 * inotify watches run out, and goes deaf when the directory is replaced), with nothing to re-arm.
 * Returns the stop, called before the daemon removes its file on the way out.
 */
export function keepStateFile(home: string, state: DaemonState, logger: Logger, everyMs = STATE_CHECK_MS): () => void {
  const wanted = stateText(state);
  let failing = false;
  const look = () => {
    let found: string | undefined;
    try {
      found = readFileSync(statePath(home), 'utf8');
    } catch {
      // Missing, or unreadable (its mode changed): written again below, as the daemon's own file.
    }
    if (found === wanted) return;
    try {
      writeState(home, state);
      failing = false;
      logger.warn(`${statePath(home)} was ${found === undefined ? 'gone' : 'changed'}; written again`);
    } catch (err) {
      // Said once per run of failures (a full disk fails every second), and tried again at each look.
      if (!failing) logger.warn(`${statePath(home)} is ${found === undefined ? 'gone' : 'changed'} and cannot be written again; clients cannot find this daemon until it is`, { error: String(err) });
      failing = true;
    }
  };
  const timer = setInterval(look, everyMs);
  timer.unref();
  return () => clearInterval(timer);
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
