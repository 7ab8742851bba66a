/**
 * The daemon's files as a client sees them (spec/daemon.md §Files; their names and the state file's
 * shape are src/store/daemon-files.ts's): the state file that says where the daemon listens, the
 * token, and the log that `troupe daemon start` writes.
 */
import { readFileSync } from 'node:fs';
import { daemonStatePath, daemonTokenPath, parseDaemonState, type DaemonState } from '../store/index.js';
import { CliError } from './cli-io.js';
import { systemErrorReason } from './file-read-failed.js';

export { chatHistoryPath, daemonLogPath } from '../store/index.js';

/** The state file, or what is wrong with it (said after its path: "… is missing"). */
export function readDaemonStateFile(home: string): { state: DaemonState } | { state?: undefined; problem: string } {
  let text: string;
  try {
    text = readFileSync(daemonStatePath(home), 'utf8');
  } catch (err) {
    const errno = (err as NodeJS.ErrnoException).code;
    return { problem: errno === 'ENOENT' ? 'is missing' : `cannot be read: ${systemErrorReason(err)} (${errno})` };
  }
  const state = parseDaemonState(text);
  return state ? { state } : { problem: 'is not a valid state file (damaged or cut short)' };
}

/** The state file, or undefined when there is none (or it is half-written). */
export function readDaemonState(home: string): DaemonState | undefined {
  return readDaemonStateFile(home).state;
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
    t = readFileSync(daemonTokenPath(home), 'utf8').trim();
  } catch (err) {
    const errno = (err as NodeJS.ErrnoException).code;
    if (errno === 'ENOENT' || errno === undefined) return undefined;
    throw new CliError('daemon_unreachable', `cannot read the daemon's token ${daemonTokenPath(home)}: ${systemErrorReason(err)} (${errno}); run the CLI as the user who started the daemon`);
  }
  return t || undefined;
}

/** True while a process with this pid exists (EPERM means it exists but is not ours). */
export { isProcessAlive as pidAlive } from '../store/index.js';
