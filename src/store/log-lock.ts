/**
 * The writer's lock on a session log: `<id>.log.lock` next to it, a process lock (process-lock.ts).
 * A session log has one writer at a time (its records are appended at offsets the writer alone
 * tracks): two editors' `troupe acp` processes on one `TROUPE_HOME`, or an editor and the daemon,
 * would otherwise both append to it, and one turn would silently disappear from the session. The
 * second writer is refused (`session_locked`) before it reads, repairs or writes anything.
 */
import { TroupeError } from '../core/errors.js';
import { processLockHolder, takeProcessLock } from './process-lock.js';

export const logLockPath = (logPath: string) => `${logPath}.lock`;

/** The pid of the live process that holds the log's lock, this one included; undefined if none does. */
export function logLockHolder(logPath: string): number | undefined {
  return processLockHolder(logLockPath(logPath));
}

/** Takes the lock of the log of `sessionId` at `logPath`; returns its release. */
export function lockLogForWriting(logPath: string, sessionId: string): () => void {
  return takeProcessLock(logLockPath(logPath), (holder) => {
    if (holder === undefined) return new TroupeError('session_locked', `could not take the lock of session ${sessionId}`, { sessionId });
    const who = holder === process.pid ? 'this process' : holder > 0 ? `another troupe process (pid ${holder})` : 'another troupe process';
    return new TroupeError('session_locked', `session ${sessionId} is open for writing in ${who}: close it there first`, { sessionId, ...(holder > 0 ? { pid: holder } : {}) });
  });
}
