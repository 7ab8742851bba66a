/**
 * The daemon's side of its files in $TROUPE_HOME (named, and the state file's shape given, in
 * src/store/daemon-files.ts): the bearer token (0600, made on first start), the lock that keeps one
 * daemon per home, and the state file (pid, url, version) that clients use to find it.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { TroupeError } from '../core/errors.js';
import type { Logger } from '../core/ports.js';
import {
  DAEMON_STATE_CHECK_MS,
  daemonLockHolder,
  daemonLockPath,
  daemonStatePath,
  daemonStateText,
  daemonTokenPath,
  makeDirs,
  takeProcessLock,
  type DaemonState,
} from '../store/index.js';

/** A token file's token, or undefined for none: missing, unreadable, or too short to be one (cut short). */
function tokenIn(home: string): string | undefined {
  try {
    const existing = readFileSync(daemonTokenPath(home), 'utf8').trim();
    return existing.length >= 32 ? existing : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The token, created (0600) if there is none yet. One that others may read (a copy, an editor, a
 * umask) is made 0600 again, and said: whoever reads it drives the sessions, commands included, as
 * the daemon's user (until 2026-12-07 it was taken as it was, say 0644 in a home of 0755).
 */
export function ensureToken(home: string, logger: Logger): string {
  makeDirs(home, 0o700);
  const existing = tokenIn(home);
  if (existing) {
    const path = daemonTokenPath(home);
    try {
      const mode = statSync(path).mode & 0o777;
      if ((mode & 0o077) !== 0) {
        chmodSync(path, 0o600);
        logger.warn(`${path} was open to others (mode ${mode.toString(8).padStart(4, '0')}): anyone who reads it drives the sessions; made 0600`);
      }
    } catch (err) {
      logger.warn(`${path} can be read by others and cannot be made 0600: anyone who reads it can drive this daemon's sessions`, { error: String(err) });
    }
    return existing;
  }
  const token = randomBytes(32).toString('base64url');
  writeFileSync(daemonTokenPath(home), token + '\n', { mode: 0o600 });
  return token;
}

/**
 * Keeps the token file holding the token this daemon accepts, as the state file (below): one removed
 * or cut short is written again (to a temporary file, renamed). Until 2026-12-07 it stayed gone, and
 * every command of the CLI, which reads it, was refused `forbidden` until the daemon was restarted.
 * Another token in its place is left: someone wrote it, meaning to change the token, which the daemon
 * takes only when it starts again; said once per change.
 */
function tokenKeeper(home: string, token: string, logger: Logger): () => void {
  let saidOther: string | undefined;
  let failing = false;
  return () => {
    const found = tokenIn(home);
    if (found === token) return void (saidOther = undefined);
    if (found !== undefined) {
      if (saidOther !== found) logger.warn(`${daemonTokenPath(home)} holds another token than the one this daemon accepts: clients reading it are refused until the daemon starts again (troupe daemon stop; its next start takes that token)`);
      saidOther = found;
      return;
    }
    const tmp = `${daemonTokenPath(home)}.${process.pid}.tmp`;
    try {
      writeFileSync(tmp, token + '\n', { mode: 0o600 });
      renameSync(tmp, daemonTokenPath(home));
      failing = false;
      logger.warn(`${daemonTokenPath(home)} was gone; written again`);
    } catch (err) {
      rmSync(tmp, { force: true });
      if (!failing) logger.warn(`${daemonTokenPath(home)} is gone and cannot be written again; clients of this home are refused until it is`, { error: String(err) });
      failing = true;
    }
  };
}

/** The daemon's hold on its home's lock. */
export interface DaemonLock {
  /**
   * Whether this daemon still holds the lock, taken again if it was removed meanwhile (a stray `rm`):
   * `retaken` then. Another daemon may have taken it in between (started while there was none):
   * `holder` is its pid, and the home is that daemon's now.
   */
  keep(): { held: true; retaken: boolean } | { held: false; holder: number };
  release(): void;
}

/**
 * Takes the home's lock, or throws `daemon_running`. The lock names the daemon by its pid and, where
 * /proc tells it, the time its process started: a lock left by a dead process is taken over, and so
 * is one whose pid another process has since (a daemon killed hard, then a reboot or a restarted
 * container, where pids come round again).
 */
export function acquireLock(home: string): DaemonLock {
  makeDirs(home, 0o700);
  // A lock naming this daemon's pid that it did not take (it looks for its own first, in keep()) is an earlier life's.
  const take = () =>
    takeProcessLock(
      daemonLockPath(home),
      (pid) => (pid === undefined ? new TroupeError('daemon_running', `could not take the lock in ${home}`) : new TroupeError('daemon_running', `a daemon (pid ${pid}) already serves ${home}`, { pid })),
      { ownIsStale: true },
    );
  let release = take();
  return {
    keep() {
      const holder = daemonLockHolder(home);
      if (holder?.pid === process.pid) return { held: true, retaken: false };
      if (holder) return { held: false, holder: holder.pid };
      try {
        release = take();
      } catch (err) {
        // Taken by another daemon between the look and the take.
        const pid = (err as TroupeError).data?.pid;
        if (typeof pid === 'number') return { held: false, holder: pid };
        throw err;
      }
      return { held: true, retaken: true };
    },
    release: () => release(),
  };
}

/** Written to a temporary file and renamed, so a reader never sees half of it. */
export function writeState(home: string, state: DaemonState): void {
  const tmp = `${daemonStatePath(home)}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, daemonStateText(state), { mode: 0o600 });
    renameSync(tmp, daemonStatePath(home));
  } catch (err) {
    // A full disk: no half-written temp file is left behind, one per failed try.
    rmSync(tmp, { force: true });
    throw err;
  }
}

/**
 * Keeps the state file saying what `state` says while the daemon runs: a file removed (a stray
 * `rm`), cut short or edited (an editor, a full disk) is written again at the next look, so clients
 * find the daemon again without anyone killing it. Clients wait that long for it (src/cli). The lock
 * too: one removed is taken again. While another daemon holds it (started in the moment there was
 * none), the state file is that daemon's: this one leaves it alone, rather than the two of them
 * writing it in turn every second, and says so once; it takes its home again if the other leaves.
 *
 * A look every second rather than fs.watch: a look (the lock, its holder's start in /proc, and this
 * file) takes 15–100 µs, about 0.01 % of a core, and it works wherever the home is (fs.watch misses changes on network file systems, fails once the
 * inotify watches run out, and goes deaf when the directory is replaced), with nothing to re-arm.
 * The token file too (tokenKeeper). Returns the stop, called before the daemon removes its file on the way out.
 */
export function keepStateFile(home: string, state: DaemonState, token: string, lock: DaemonLock, logger: Logger, everyMs = DAEMON_STATE_CHECK_MS): () => void {
  const wanted = daemonStateText(state);
  const keepToken = tokenKeeper(home, token, logger);
  let failing = false;
  let lockFailing = false;
  let supplanted = false;
  const look = () => {
    let kept: ReturnType<DaemonLock['keep']>;
    try {
      kept = lock.keep();
      lockFailing = false;
    } catch (err) {
      if (!lockFailing) logger.warn(`${daemonLockPath(home)} is gone and cannot be taken again; tried again every second`, { error: String(err) });
      lockFailing = true;
      return;
    }
    if (!kept.held) {
      if (!supplanted) {
        logger.error(`another daemon (pid ${kept.holder}) holds ${daemonLockPath(home)} now (it started while the lock was gone): clients find that one; this one (pid ${process.pid}) serves only the clients it has, and should be stopped (kill ${process.pid})`);
      }
      supplanted = true;
      return;
    }
    if (kept.retaken) logger.warn(`${daemonLockPath(home)} was gone; taken again`);
    supplanted = false;
    keepToken();
    let found: string | undefined;
    try {
      found = readFileSync(daemonStatePath(home), 'utf8');
    } catch {
      // Missing, or unreadable (its mode changed): written again below, as the daemon's own file.
    }
    if (found === wanted) return;
    try {
      writeState(home, state);
      failing = false;
      logger.warn(`${daemonStatePath(home)} was ${found === undefined ? 'gone' : 'changed'}; written again`);
    } catch (err) {
      // Said once per run of failures (a full disk fails every second), and tried again at each look.
      if (!failing) logger.warn(`${daemonStatePath(home)} is ${found === undefined ? 'gone' : 'changed'} and cannot be written again; clients cannot find this daemon until it is`, { error: String(err) });
      failing = true;
    }
  };
  const timer = setInterval(look, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** Removes the state file if it is this daemon's: another daemon's (one that took the home meanwhile) stays. */
export function removeState(home: string, state: DaemonState): void {
  try {
    if (readFileSync(daemonStatePath(home), 'utf8') !== daemonStateText(state)) return;
  } catch {
    return;
  }
  rmSync(daemonStatePath(home), { force: true });
}
