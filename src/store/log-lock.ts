/**
 * The writer's lock on a session log: `<id>.log.lock` next to it, made with an exclusive create and
 * holding the writer's pid and process start time. A session log has one writer at a time (its
 * records are appended at offsets the writer alone tracks): two editors' `troupe acp` processes on
 * one `TROUPE_HOME`, or an editor and the daemon, would otherwise both append to it, and one turn
 * would silently disappear from the session. The second writer is refused (`session_locked`) before
 * it reads, repairs or writes anything. A lock whose process is gone (killed, or a reboot gave its pid
 * to another process) is taken over: there is no time limit, a session may stay open for days.
 */
import { closeSync, openSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import { TroupeError } from '../core/errors.js';
import { isSameProcessAlive, processStartTicks } from './file-lock.js';

export const logLockPath = (logPath: string) => `${logPath}.lock`;

/** This process's line in a lock it takes: "pid start" (the pid alone where there is no /proc). */
function ownLine(): string {
  const start = processStartTicks(process.pid);
  return start === undefined ? String(process.pid) : `${process.pid} ${start}`;
}

function mtimeOf(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

/** The pid of the live process that holds the log's lock, this one included; undefined if none does. */
export function logLockHolder(logPath: string): number | undefined {
  let text: string;
  try {
    text = readFileSync(logLockPath(logPath), 'utf8');
  } catch {
    return undefined;
  }
  // Empty: its maker is between its create and its write, or died there (then it is old).
  if (!text.trim()) return Date.now() - mtimeOf(logLockPath(logPath)) < 10_000 ? -1 : undefined;
  const [pidText, start] = text.trim().split(' ');
  const pid = Number(pidText);
  return Number.isInteger(pid) && pid > 0 && isSameProcessAlive(pid, start) ? pid : undefined;
}

/** Takes the lock of the log of `sessionId` at `logPath`; returns its release. */
export function lockLogForWriting(logPath: string, sessionId: string): () => void {
  const path = logLockPath(logPath);
  const line = ownLine();
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      try {
        writeSync(fd, line);
      } finally {
        closeSync(fd);
      }
      return () => {
        // Only our own: after a takeover (we were taken for dead) the lock is another's.
        try {
          if (readFileSync(path, 'utf8') === line) rmSync(path, { force: true });
        } catch {
          // Gone already.
        }
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = logLockHolder(logPath);
      if (holder !== undefined) {
        const who = holder === process.pid ? 'this process' : holder > 0 ? `another troupe process (pid ${holder})` : 'another troupe process';
        throw new TroupeError('session_locked', `session ${sessionId} is open for writing in ${who}: close it there first`, { sessionId, ...(holder > 0 ? { pid: holder } : {}) });
      }
      rmSync(path, { force: true });
    }
  }
  throw new TroupeError('session_locked', `could not take the lock of session ${sessionId}`, { sessionId });
}
