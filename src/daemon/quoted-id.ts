/**
 * How a refusal quotes a session id a client sent. A session id is at most MAX_SESSION_ID_CHARS
 * characters (the ACP transport refuses a longer one outright, acp.types.ts `maxIdLength`); the
 * management API and the inspector take the id from the URL (up to MAX_TARGET_CHARS, 8192), and
 * until 2026-12-07 a 404 repeated such an id in full, in its message and in its data. One that long
 * names no session: it is quoted by its start and its length.
 */
import { TroupeError } from '../core/errors.js';
import { headOf } from '../core/text-cut.js';

export const MAX_SESSION_ID_CHARS = 1024;

/** The characters of an over-long id a refusal repeats. */
const SHOWN_CHARS = 64;

/** The id as a message names it: whole when it could be a session's, else `<start>… (N characters)`. */
export function quotedId(id: string): string {
  const { sessionId, sessionIdLength } = idData(id);
  return sessionIdLength === undefined ? sessionId : `${sessionId} (${sessionIdLength} characters)`;
}

/** A refusal's `data` for the id: `sessionId` whole when it could be a session's, else its start and `sessionIdLength`. */
export function idData(id: string): { sessionId: string; sessionIdLength?: number } {
  return id.length <= MAX_SESSION_ID_CHARS ? { sessionId: id } : { sessionId: `${headOf(id, SHOWN_CHARS)}…`, sessionIdLength: id.length };
}

/** The 404 of a route that names no session by `id` (the management API's, the inspector's). */
export function sessionNotFound(id: string): TroupeError {
  return new TroupeError('session_not_found', `no session ${quotedId(id)}`, idData(id));
}
