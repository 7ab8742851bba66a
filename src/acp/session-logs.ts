/**
 * The log files of one host's sessions: a new session's (drawn under a fresh id, or made ahead as a
 * spare) and an existing session's, opened from its file when a request asks for it.
 */
import { rm } from 'node:fs/promises';
import { isTroupeError, TroupeError } from '../core/errors.js';
import { newSessionId } from '../core/ids.js';
import type { Logger } from '../core/ports.js';
import { FileEventLog, sessionLogPath, sessionsDir } from '../store/index.js';
import type { SessionCatalog } from './session-catalog.js';

export interface NewSessionLog {
  sessionId: string;
  log: FileEventLog;
}

export class SessionLogs {
  /** A log made ahead for the next new session (prepareSpareLog); undefined once taken. */
  private spare?: Promise<NewSessionLog | undefined>;
  /** Set by removeSpare (the host's shutdown): no spare is made from then on. */
  private shutDown = false;

  constructor(
    private readonly home: string,
    private readonly logger: Logger,
    private readonly index: Pick<SessionCatalog, 'isUsed'>,
  ) {}

  /**
   * Makes the log of the next new session now, while nothing waits for it (a daemon's pooled child:
   * spec/daemon.md §Warm pool): creating a log file is an fdatasync of the file and an fsync of its
   * directory, most of a `session/new` on a slow disk. The spare is marked in its header, and is no
   * session until it holds an event (spec/event-log.md §6); an unused one is removed at shutdown.
   * After the shutdown it does nothing: a child stopped right after it booted (its stdin ended at
   * once) shut its host down before its warm-up asked for the spare, and until 2026-12-07 the spare
   * was made then, and left behind with its lock file when the process exited.
   */
  prepareSpareLog(): void {
    if (this.shutDown) return;
    this.spare ??= this.newLog().catch((err) => {
      this.logger.warn('could not make a spare log; the next session/new creates its own', { error: String(err) });
      return undefined;
    });
  }

  /**
   * The log of a new session: the spare if one was made, else one made now, marked a spare too: it is
   * no session until its first event, and the session's MCP servers start before that
   * (SessionHost.create). A process that dies meanwhile leaves a log the next index open removes,
   * not a session with no history.
   */
  async forNewSession(): Promise<NewSessionLog> {
    return (await this.takeSpare()) ?? (await this.newLog());
  }

  /** Closes and removes the log of a new session no client was given (its request failed, or was withdrawn). */
  async discard(log: FileEventLog): Promise<void> {
    await log.close().catch(() => undefined);
    await rm(log.path, { force: true }).catch(() => undefined);
  }

  /**
   * Removes the spare nobody took (at shutdown), one still being made included, and makes none from
   * now on: a spare is no session, and is not left behind.
   */
  async removeSpare(): Promise<void> {
    this.shutDown = true;
    const spare = await this.takeSpare();
    if (spare) await this.discard(spare.log);
  }

  private takeSpare(): Promise<NewSessionLog | undefined> | undefined {
    const spare = this.spare;
    this.spare = undefined;
    return spare;
  }

  /**
   * A log for a new session id (ids are random: one already used, in the index or on disk, is drawn
   * again), its header marked a spare: no session until it holds an event (spec/event-log.md §6).
   */
  private async newLog(): Promise<NewSessionLog> {
    for (let attempt = 0; ; attempt++) {
      const sessionId = newSessionId();
      if (this.index.isUsed(sessionId)) continue;
      try {
        return { sessionId, log: await FileEventLog.create(sessionLogPath(sessionsDir(this.home), sessionId), { sessionId, logger: this.logger, spare: true }) };
      } catch (err) {
        if (attempt < 3 && isTroupeError(err, 'invalid_params') && err.data.exists === true) continue;
        throw err;
      }
    }
  }

  /** Opens an existing session's log, repaired if a crash cut it. No such log: `session_not_found`. */
  async open(sessionId: string): Promise<FileEventLog> {
    let log: FileEventLog;
    try {
      // A log whose every event is damaged is refused as it is, never repaired into an empty one.
      log = await FileEventLog.forSession(sessionsDir(this.home), sessionId, { logger: this.logger, refuseRepairToNothing: true });
    } catch (err) {
      // A log that cannot be written (its lock, or its repair, on a full disk) is not a missing session.
      if (isTroupeError(err, 'session_locked') || isTroupeError(err, 'log_corrupt') || isTroupeError(err, 'log_write_failed')) throw err;
      throw new TroupeError('session_not_found', `session ${sessionId} cannot be opened: ${(err as Error).message}`, { sessionId });
    }
    for (const w of log.warnings) this.logger.warn('session log repaired on open', { sessionId, ...w });
    return log;
  }
}
