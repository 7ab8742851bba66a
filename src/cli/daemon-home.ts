/**
 * The daemon's files as a client sees them (spec/daemon.md §Files): the state file that says where
 * the daemon listens, the token, and the log that `troupe daemon start` writes.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

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

export function readToken(home: string): string | undefined {
  try {
    const t = readFileSync(tokenPath(home), 'utf8').trim();
    return t || undefined;
  } catch {
    return undefined;
  }
}

/** True while a process with this pid exists (EPERM means it exists but is not ours). */
export { isProcessAlive as pidAlive } from '../store/index.js';
