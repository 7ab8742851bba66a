/**
 * The daemon's files in $TROUPE_HOME (spec/daemon.md §Files) as both sides know them: `troupe serve`
 * takes the lock and writes the state file and the token (src/daemon/daemon-home.ts), clients read
 * them to find it (src/cli/daemon-home.ts). Their names and the state file's shape are said here once.
 */
import { join } from 'node:path';
import { liveProcessLockHolder, type LockHolder } from './process-lock.js';

/** The content of `$TROUPE_HOME/daemon.json`: where the daemon listens, and which process it is. */
export interface DaemonState {
  pid: number;
  url: string;
  version: string;
  startedAt: number;
}

/** The bearer token (0600), made by the daemon on its first start. */
export const daemonTokenPath = (home: string) => join(home, 'token');
/** The state file (a DaemonState) that clients find the daemon by. */
export const daemonStatePath = (home: string) => join(home, 'daemon.json');
/** The lock that keeps one daemon per home (a process lock: process-lock.ts). */
export const daemonLockPath = (home: string) => join(home, 'daemon.lock');
/** The log of a daemon the CLI started (`troupe daemon start`): its stderr. */
export const daemonLogPath = (home: string) => join(home, 'daemon.log');
/** The CLI's history of the lines typed at its chat prompt (prompts: made 0600). */
export const chatHistoryPath = (home: string) => join(home, 'chat_history');

/**
 * How often a running daemon looks at its state file and lock, to write them again (spec/daemon.md
 * §Files): clients wait for that (src/cli/daemon-locate.ts), so both sides take it from here.
 */
export const DAEMON_STATE_CHECK_MS = 1_000;

/** The state file's text, as the daemon writes it (and compares it, to find it changed). */
export const daemonStateText = (state: DaemonState) => JSON.stringify(state, null, 2) + '\n';

/** The state a state file's text says, or undefined when it is not one (damaged, cut short, not JSON). */
export function parseDaemonState(text: string): DaemonState | undefined {
  try {
    const s = JSON.parse(text) as DaemonState;
    if (typeof s?.url === 'string' && Number.isInteger(s.pid) && s.pid > 0) return s;
  } catch {
    // Not JSON: not a state file.
  }
  return undefined;
}

/**
 * The daemon holding the home's lock (only `troupe serve` takes it), whatever its state file says:
 * its pid, when it took the lock, and whether the lock proves the pid is still that process.
 */
export function daemonLockHolder(home: string): LockHolder | undefined {
  return liveProcessLockHolder(daemonLockPath(home));
}
