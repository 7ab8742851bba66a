/**
 * Where the store keeps its files (DESIGN.md §5): the state directory, the sessions directory with
 * one `<id>.log` per session, and the session index next to the logs.
 */
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
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
