/**
 * The session index file format (spec/event-log.md §6): parsing and validation, the merge rule
 * between processes, the list order and the opaque list cursor.
 */
import { TroupeError } from '../core/errors.js';
import { isValidSessionId } from '../core/ids.js';
import { SESSION_STATUSES, type SessionEntry, type SessionStatus } from './session-summary.js';

export const INDEX_FORMAT_VERSION = 1;

export function validEntry(v: unknown): v is SessionEntry {
  if (!v || typeof v !== 'object') return false;
  const e = v as Record<string, unknown>;
  return (
    isValidSessionId(e.id) &&
    typeof e.cwd === 'string' &&
    typeof e.model === 'string' &&
    typeof e.mode === 'string' &&
    (e.title === undefined || typeof e.title === 'string') &&
    (e.additionalDirectories === undefined || (Array.isArray(e.additionalDirectories) && e.additionalDirectories.every((d) => typeof d === 'string'))) &&
    Number.isSafeInteger(e.createdAt) &&
    Number.isSafeInteger(e.updatedAt) &&
    Number.isSafeInteger(e.lastSeq) &&
    (e.damaged === undefined || validDamage(e.damaged)) &&
    (e.gone === undefined || (e.gone === true && e.status === 'deleted')) &&
    SESSION_STATUSES.includes(e.status as SessionStatus)
  );
}

function validDamage(v: unknown): boolean {
  const d = v as Record<string, unknown> | null;
  return !!d && typeof d === 'object' && d.code === 'log_corrupt' && Number.isSafeInteger(d.offset) && (d.offset as number) >= 0;
}

/**
 * Which of two versions of an entry wins when several processes wrote the index: a tombstone
 * always wins (deletion is final), otherwise the more recently updated one. An entry deleted
 * because its log was gone (`gone`) is no tombstone: the session comes back with its log, and an
 * older copy of it gone must not undo that.
 */
export function newer(ours: SessionEntry, theirs: SessionEntry): SessionEntry {
  if (isFinallyDeleted(ours) !== isFinallyDeleted(theirs)) return isFinallyDeleted(ours) ? ours : theirs;
  if (theirs.updatedAt !== ours.updatedAt) return theirs.updatedAt > ours.updatedAt ? theirs : ours;
  return theirs.lastSeq > ours.lastSeq ? theirs : ours;
}

/** Deleted for good: by a delete (its log a tombstone), not because its log was gone. */
export function isFinallyDeleted(e: SessionEntry): boolean {
  return e.status === 'deleted' && !e.gone;
}

/** Newest first; ties broken by id so that the order is total and paging is stable. */
export function before(a: SessionEntry, b: SessionEntry): number {
  return b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
}

export function encodeCursor(e: SessionEntry): string {
  return Buffer.from(JSON.stringify([e.createdAt, e.id])).toString('base64url');
}

export function decodeCursor(cursor: string): [number, string] {
  try {
    const v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(v) && v.length === 2 && Number.isSafeInteger(v[0]) && isValidSessionId(v[1])) return v as [number, string];
  } catch {
    // fall through
  }
  throw new TroupeError('invalid_cursor', 'not a session list cursor', { cursor });
}

export function parseIndex(text: string): Map<string, SessionEntry> | undefined {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return undefined;
  }
  const d = doc as { version?: unknown; sessions?: unknown };
  if (!d || d.version !== INDEX_FORMAT_VERSION || !Array.isArray(d.sessions) || !d.sessions.every(validEntry)) return undefined;
  return new Map((d.sessions as SessionEntry[]).map((e) => [e.id, e]));
}
