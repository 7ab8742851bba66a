/**
 * Where the store keeps its files (DESIGN.md §5): the state directory, the sessions directory with
 * one `<id>.log` per session, and the session index next to the logs.
 */
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { TroupeError } from '../core/errors.js';
import { isValidSessionId } from '../core/ids.js';

/** Name of the session index file inside the sessions directory. */
export const SESSION_INDEX_FILE = 'index.json';
/** Extension of a session log file. */
export const LOG_FILE_EXT = '.log';

/**
 * The troupe state directory: `$TROUPE_HOME`, else `$XDG_STATE_HOME/troupe`, else
 * `~/.local/state/troupe`. Relative values are ignored for XDG (the XDG spec says so) but honoured
 * for TROUPE_HOME, which is resolved against the current directory.
 */
export function resolveTroupeHome(env: NodeJS.ProcessEnv = process.env): string {
  const own = env.TROUPE_HOME;
  if (own && own.length > 0) return resolve(own);
  const xdg = env.XDG_STATE_HOME;
  if (xdg && isAbsolute(xdg)) return join(xdg, 'troupe');
  const home = env.HOME && env.HOME.length > 0 ? env.HOME : homedir();
  return join(home, '.local', 'state', 'troupe');
}

/**
 * What to say when `home` cannot be made or written (`err`): the CLI's `daemon start` and `troupe
 * serve` say it alike, with `daemon_start_failed`.
 */
export function unusableHomeMessage(home: string, err: unknown): string {
  return `cannot use the state directory ${home} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): set TROUPE_HOME to a directory you can write`;
}

/**
 * `mkdir -p` (each directory made with `mode`), one directory at a time: Node's recursive
 * mkdirSync never returns for a path it cannot make under /proc (TROUPE_HOME=/proc/nope: each
 * mkdir fails ENOENT, and it makes the parent, which exists, and tries again, at full CPU). A
 * path that exists and is not a directory fails EEXIST, as mkdir does.
 */
export function makeDirs(path: string, mode = 0o700): void {
  const target = resolve(path);
  const chain: string[] = [];
  for (let p = dirname(target); p !== dirname(p) && !existsSync(p); p = dirname(p)) chain.unshift(p);
  for (const dir of [...chain, target]) {
    try {
      mkdirSync(dir, { mode });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || !statSync(dir).isDirectory()) throw err;
    }
  }
}

/** `<home>/sessions`: the session logs and the index. */
export function sessionsDir(home: string): string {
  return join(home, 'sessions');
}

/** `<sessionsDir>/<id>.log`. Throws `invalid_params` for an id that is unsafe as a file name. */
export function sessionLogPath(dir: string, sessionId: string): string {
  if (!isValidSessionId(sessionId)) throw new TroupeError('invalid_params', `not a valid session id: ${JSON.stringify(sessionId)}`, { sessionId });
  return join(dir, sessionId + LOG_FILE_EXT);
}

/** `<sessionsDir>/index.json`. */
export function sessionIndexPath(dir: string): string {
  return join(dir, SESSION_INDEX_FILE);
}
