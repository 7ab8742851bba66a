/**
 * Folding a session's events into its index entry. The same fold serves live updates and the
 * rebuild from logs, so a rebuilt index says what the live one said (except `failed`, which only
 * the supervisor knows and no event records).
 */
import type { AgentEvent } from '../core/events.js';

export type SessionStatus = 'active' | 'closed' | 'failed' | 'deleted';
export const SESSION_STATUSES: readonly SessionStatus[] = ['active', 'closed', 'failed', 'deleted'];

/** One session in the index. Times are ms since the epoch. */
export interface SessionEntry {
  id: string;
  cwd: string;
  /** Its additional directories as last set; absent when none. */
  additionalDirectories?: string[];
  title?: string;
  model: string;
  mode: string;
  createdAt: number;
  updatedAt: number;
  status: SessionStatus;
  lastSeq: number;
  /**
   * Set when the index last read the session's log and found it damaged so that opening the session
   * fails `log_corrupt` (a record that does not decode, or no event surviving its damaged tail:
   * spec/event-log.md §2, §6): `offset` is the byte where the damage starts. `status` keeps its
   * meaning (what the log and the supervisor say of the session); this says that it cannot be opened.
   * Absent otherwise, and cleared by the next event folded (only a process that opened the log
   * appends one).
   */
  damaged?: LogDamage;
  /**
   * On a `deleted` entry only: deleted because its log was gone (no file at a recheck), not by a
   * delete, which puts a tombstone log in its place. Such a session comes back, as its log says, once
   * its log does (a restore from a backup, a move back); a deleted one never does. Absent otherwise.
   */
  gone?: true;
}

/** What keeps a session's log from opening (SessionEntry.damaged). */
export interface LogDamage {
  code: 'log_corrupt';
  offset: number;
}

export { INDEXED_EVENT_TYPES } from '../core/indexed-events.js';

/**
 * Applies one event to an entry (creating it on `session_created`); returns the entry, or `undefined`
 * if there is none yet. A status the log does not hold is kept: `deleted`, and `failed` (the daemon
 * marks it when a session's children crash too often; a dying child's last events, reported after
 * that, must not make it `active` again, or a daemon restart would start it).
 */
export function foldEvent(entry: SessionEntry | undefined, e: AgentEvent): SessionEntry | undefined {
  if (e.type === 'session_created') {
    entry = {
      id: e.sessionId,
      cwd: e.cwd,
      model: e.model,
      mode: e.mode,
      createdAt: e.ts,
      updatedAt: e.ts,
      status: entry?.status === 'deleted' || entry?.status === 'failed' ? entry.status : 'active',
      lastSeq: e.seq,
      ...(e.additionalDirectories.length ? { additionalDirectories: e.additionalDirectories } : {}),
      ...(entry?.title !== undefined ? { title: entry.title } : {}),
    };
    return entry;
  }
  if (!entry) return undefined;
  // An event folded comes from a process that opened the log: it is not (or no longer) damaged.
  delete entry.damaged;
  if (e.seq > entry.lastSeq) entry.lastSeq = e.seq;
  if (e.ts > entry.updatedAt) entry.updatedAt = e.ts;
  if (e.type === 'session_configured') {
    if (e.title !== undefined) entry.title = e.title;
    if (e.model !== undefined) entry.model = e.model;
    if (e.mode !== undefined) entry.mode = e.mode;
    if (e.additionalDirectories?.length) entry.additionalDirectories = e.additionalDirectories;
    else if (e.additionalDirectories) delete entry.additionalDirectories;
  } else if (e.type === 'session_closed') {
    entry.status = e.reason === 'deleted' ? 'deleted' : entry.status === 'deleted' || entry.status === 'failed' ? entry.status : 'closed';
  }
  return entry;
}

/**
 * A session's entry made again from its log, which holds less than the entry says: `heldSeq`, the
 * log's last seq once opened (and repaired), is below the entry's `lastSeq`. A machine crash kept
 * only what was synced, or a damaged tail was cut (spec/event-log.md §2, §3): the events the entry
 * folded beyond it are gone, and their seqs will be given to other events. `indexed`: every indexed
 * event the log holds, from its start (none when its prefix is lost: then only `lastSeq` comes
 * down). The entry is what a rebuild from the log gives, but for `failed`, which no log records, and
 * `updatedAt`, which does not go back (to `now` at least): merged with another process's copy of the
 * entry, the newer one wins. Until 2026-12-07 `lastSeq` never went down: the entry kept the title
 * and the seq of the lost events, and the events after the repair were folded only past that seq.
 */
export function rewoundEntry(entry: SessionEntry, indexed: readonly AgentEvent[], heldSeq: number, now: number): SessionEntry {
  let fromLog: SessionEntry | undefined;
  for (const e of indexed) if (e.sessionId === entry.id) fromLog = foldEvent(fromLog, e);
  const { damaged: _opened, ...kept } = entry;
  const next: SessionEntry = fromLog ?? { ...kept, lastSeq: heldSeq };
  if (entry.status === 'failed') next.status = 'failed';
  next.updatedAt = Math.max(entry.updatedAt, now);
  return next;
}

/**
 * A session's entry as its log says, read again because the log changed while no process of this
 * index had it open (session-log-recheck.ts): what a rebuild gives (`lastSeq`, title, `damaged`…),
 * but for `failed`, which no log records, and `updatedAt`, which does not go back (to `now` at least
 * when the log holds less than the entry said, as `rewoundEntry`). A log whose `session_created` did
 * not survive keeps the entry's own description, with the log's `lastSeq` if lower and its damage.
 * No log at all (`fromLog` undefined): `deleted`, as of `now` and after the entry's time (a rebuild
 * would not list it either; a clock behind that time would tie, and the merge keep the other copy),
 * and `gone`: its log back, the session is what the log says again, as of `now` at least, after the
 * time it went (so that another process's copy of it gone loses the merge, `newer`).
 */
export function entryAsLogSays(entry: SessionEntry, fromLog: SessionEntry | undefined, now: number): SessionEntry {
  const { damaged: _was, gone, ...kept } = entry;
  // No log (`undefined`): the session is gone, as a deleted one is, and its id stays used.
  if (!fromLog) return gone ? entry : { ...kept, status: 'deleted', gone: true, updatedAt: Math.max(entry.updatedAt + 1, now) };
  // A log without its `session_created` keeps the entry's description; a gone entry's status is the log's.
  const next: SessionEntry = fromLog.cwd === '' ? { ...kept, ...(gone ? { status: fromLog.status } : {}), lastSeq: Math.min(entry.lastSeq, fromLog.lastSeq) } : { ...fromLog };
  if (fromLog.damaged) next.damaged = fromLog.damaged;
  else delete next.damaged;
  if (entry.status === 'failed' && next.status !== 'deleted') next.status = 'failed';
  next.updatedAt = gone ? Math.max(entry.updatedAt + 1, now) : Math.max(entry.updatedAt, next.lastSeq < entry.lastSeq ? now : next.updatedAt);
  return next;
}
