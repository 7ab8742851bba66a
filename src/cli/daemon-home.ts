/**
 * The daemon's files as a client sees them (spec/daemon.md §Files): the state file that says where
 * the daemon listens, the token, and the log that `troupe daemon start` writes.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CliError } from './cli-io.js';
import { systemErrorReason } from './file-read-failed.js';

/** The content of `$TROUPE_HOME/daemon.json`. */
export interface DaemonStateFile {
  pid: number;
  url: string;
  version: string;
  startedAt: number;
}

export const statePath = (home: string) => join(home, 'daemon.json');
export const tokenPath = (home: string) => join(home, 'token');
export const daemonLogPath = (home: string) => join(home, 'daemon.log');
export const chatHistoryPath = (home: string) => join(home, 'chat_history');

/** The state file, or undefined when there is none (or it is half-written). */
export function readDaemonState(home: string): DaemonStateFile | undefined {
  try {
    const s = JSON.parse(readFileSync(statePath(home), 'utf8')) as DaemonStateFile;
    return typeof s.url === 'string' && typeof s.pid === 'number' ? s : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The token, or undefined while there is none. One that is there but cannot be read (the daemon
 * was started by another user, whose 0600 file it is) is an error that says so: until 2026-12-06 it
 * was read as none, and the daemon "refused the token (forbidden)", or `daemon token` said there
 * was no token yet.
 */
export function readToken(home: string): string | undefined {
  let t: string;
  try {
    t = readFileSync(tokenPath(home), 'utf8').trim();
  } catch (err) {
    const errno = (err as NodeJS.ErrnoException).code;
    if (errno === 'ENOENT' || errno === undefined) return undefined;
    throw new CliError('daemon_unreachable', `cannot read the daemon's token ${tokenPath(home)}: ${systemErrorReason(err)} (${errno}); run the CLI as the user who started the daemon`);
  }
  return t || undefined;
}

/** True while a process with this pid exists (EPERM means it exists but is not ours). */
export { isProcessAlive as pidAlive } from '../store/index.js';
