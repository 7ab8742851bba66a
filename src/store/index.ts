/**
 * The store: durable per-session event logs, the session index and the cursor broker.
 * Curated exports (no wildcard re-exports); see spec/event-log.md.
 */
export { makeDirs, resolveTroupeHome, sessionsDir, unusableHomeMessage, sessionLogPath, sessionIndexPath, SESSION_INDEX_FILE, LOG_FILE_EXT } from './paths.js';
export { MemoryEventLog, type MemoryEventLogOptions } from './memory-event-log.store.js';
export { FileEventLog, type FileEventLogOptions } from './file-event-log.store.js';
export { EventBroker, checkFeedCursor, type ColdSource, type RetentionOptions, type BrokerOptions, DEFAULT_QUEUE_LIMIT } from './event-broker.js';
export { QueueBudget } from './queue-budget.js';
export { COLD_BATCH, COLD_BATCH_BYTES, type BrokerWatcher } from './event-watcher.js';
export { BARRIER_EVENT_TYPES, isBarrierEvent, type DurabilityOptions, type SyncPolicy } from './durability.js';
export { readLogFile, readLogFilePaged, readLogFrom, scanLogFile, scanLogFilePaced, scanFd, scanFdPaced, SCAN_SLICE_BYTES, decodeLogBuffer, readEventRange, readEventRangeFd, type LogScan, type LogWarning, type LogContents, type LogPosition, type LogGrowth } from './log-file.reader.js';
export { LogCheckpoints } from './log-checkpoints.js';
export { type LogHeader, LOG_FORMAT_VERSION } from './log-record.codec.js';
export { projectStrictJson, resolveMaxEventBytes, DEFAULT_MAX_EVENT_BYTES, MIN_MAX_EVENT_BYTES, MAX_MAX_EVENT_BYTES } from './strict-json.codec.js';
export { SessionIndex, type SessionIndexOptions } from './session-index.store.js';
export { isFinallyDeleted } from './session-index.codec.js';
export type { SessionListOptions, SessionListPage } from './session-index.list.js';
export { recheckChangedLogs, recheckInBackground, type BackgroundRecheck, type LogRecheckOptions, type LogRecheckCounts } from './session-log-recheck.js';
export { type SessionEntry, type SessionStatus, SESSION_STATUSES, INDEXED_EVENT_TYPES } from './session-summary.js';
export { writeFileAtomic } from './atomic-write.js';
export { isProcessAlive, isSameProcessAlive, processStartTicks } from './process-alive.js';
export { takeProcessLock, type LockHolder } from './process-lock.js';
export { DAEMON_STATE_CHECK_MS, chatHistoryPath, daemonLockHolder, daemonLockPath, daemonLogPath, daemonStatePath, daemonStateText, daemonTokenPath, parseDaemonState, type DaemonState } from './daemon-files.js';
export { privateHome } from './private-modes.js';
