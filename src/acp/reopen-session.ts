/**
 * Opening an existing session in this process from its log file, the truth (the index may lag behind
 * a daemon's writes): its engine folded from its events, a turn its crashed process left open ended,
 * and its index entry caught up.
 */
import { TroupeError } from '../core/errors.js';
import { isValidSessionId } from '../core/ids.js';
import type { Logger } from '../core/ports.js';
import { SessionEngine } from '../actors/session-engine.js';
import type { FileEventLog } from '../store/index.js';
import type { SessionCatalog } from './session-catalog.js';
import type { SessionReporter } from './control-channel.js';
import type { SessionLogs } from './session-logs.js';
import type { engineDeps } from './session-engine-deps.js';
import type { LiveSession } from './session-host.js';
import { transitionReport } from './transition-report.js';

/** What an open needs of its host (SessionHost). */
export interface SessionParts {
  readonly logs: SessionLogs;
  readonly index: SessionCatalog;
  readonly logger: Logger;
  readonly reporter: SessionReporter | undefined;
  /** The engine's dependencies (session-engine-deps.ts), on the host's client and MCP tools. */
  deps(sessionId: string, log: FileEventLog, cwd: string, initialDirectories: readonly string[]): ReturnType<typeof engineDeps>;
  /** Projects and reports every event from now on (SessionHost.track). */
  track(engine: SessionEngine, log: FileEventLog, reportFrom: number, stopInspecting: () => void): Promise<LiveSession>;
}

export interface ReopenParts extends SessionParts {
  /** Why sessions that stopped by themselves did: an open takes its session's. */
  readonly stoppedWith: Map<string, TroupeError>;
  deletedForGood(sessionId: string): boolean;
}

/** Opens a session from its log file, the truth (the index may lag behind a daemon's writes). */
export async function reopenSession(host: ReopenParts, sessionId: string, indexedSeq: number | undefined): Promise<LiveSession> {
  if (!isValidSessionId(sessionId)) throw new TroupeError('session_not_found', `no session ${sessionId}`, { sessionId });
  // Until 2026-12-07 an old copy of a deleted session's log put back opened, and took prompts.
  if (host.deletedForGood(sessionId)) throw new TroupeError('session_not_found', `session ${sessionId} was deleted`, { sessionId });
  const log = await host.logs.open(sessionId);
  // Whatever fails from here on (a read, the repair that cannot be written, log_write_failed),
  // the file and its lock are let go, so that the next request can try again. A log left open
  // here kept its session locked for the life of the process.
  let engine: SessionEngine | undefined;
  const transitions = transitionReport(host.reporter, sessionId);
  try {
    // The cwd is fixed at creation: read it from the first event (the engine folds the directories).
    const first = (await log.readAfter(0, { limit: 1 })).events[0];
    if (first?.type !== 'session_created') throw new TroupeError('session_not_found', `session ${sessionId} has no history`, { sessionId });
    const before = log.lastSeq();
    const { deps, bind } = host.deps(sessionId, log, first.cwd, first.additionalDirectories);
    // A turn that a stop left open (its log failed) ends with the stop's error, not as a crash.
    const stopped = host.stoppedWith.get(sessionId);
    engine = await SessionEngine.open(deps, sessionId, stopped && { code: stopped.code, message: stopped.message }, transitions);
    host.stoppedWith.delete(sessionId);
    bind(engine);
    // The entry catches up with the log (a crash may have kept the index from a title, a close).
    // The index can be rebuilt from the logs: a failure to update it does not fail the open.
    await host.index.catchUp(sessionId, log, { heldSeq: before, ...(indexedSeq === undefined ? {} : { indexedSeq }) }).catch((err) => host.logger.error('index update failed', { sessionId, error: String(err) }));
    host.logger.info('session opened from its log', { sessionId, lastSeq: log.lastSeq() });
    const live = await host.track(engine, log, before, transitions.stop);
    if (log.lastSeq() > before) live.repaired = { after: before, through: log.lastSeq() };
    return live;
  } catch (err) {
    await engine?.dispose().catch(() => undefined);
    // The session leaves this process as an unloaded one does (its detach): the report of its
    // machines ends here too, so that nothing its engine tells after this reaches the daemon as
    // this process running the session. What the daemon was told stays (the session machine's
    // `init`), as after an unload, which reports nothing when a session leaves (spec/daemon.md,
    // current machine states).
    transitions.stop();
    await log.close().catch(() => undefined);
    throw err;
  }
}
