/**
 * Where a numbered SSE feed (`/v1/sessions/:id/events`, `/v1/inspect/transitions`) starts: after the
 * `Last-Event-ID` a reconnecting client sends, else after `?after=`, else from the start.
 * spec/daemon.md §Management API.
 */
import { TroupeError } from '../../core/errors.js';
import { FEED_ID } from '../event-mark.js';
import type { RouteRequest } from './route.types.js';
import { headOf } from '../../core/text-cut.js';

/** A feed's cursor, with the mark of the event at it when the client sent one (event-mark.ts). */
export interface FeedResume {
  cursor: number;
  mark?: string;
}

/**
 * The cursor of a feed request. Throws `invalid_cursor` for one that is not decimal digits (empty,
 * negative, fractional, or what Number() would also take: '0x1', '1e0', ' 1'), or, where `marked`,
 * digits then `-` and an event's mark (the session events feed's ids); and for digits past the
 * largest safe integer, which no seq reaches (named as sent, not as Number() reads them). An empty
 * `after=` is refused, not read as 0: a client that meant a cursor and lost it must not get the whole log. An
 * empty `Last-Event-ID` counts as none: EventSource sends the header only when the last id it saw is
 * not empty (WHATWG HTML §9.2, "reestablish the connection"), and the rest of the daemon reads it so.
 * An `after` given more than once is refused too.
 */
export function feedResume(req: RouteRequest, marked: boolean): FeedResume {
  // Two cursors are no cursor: until 2026-12-07 the first was taken, the other ignored.
  const afters = req.query.getAll('after');
  if (afters.length > 1) throw new TroupeError('invalid_cursor', `after is given more than once (${afters.length} times)`, { cursor: afters.map((a) => headOf(a, 40)) });
  const header = req.headers['last-event-id'];
  const fromHeader = header !== undefined && header !== '';
  const raw = fromHeader ? header : req.query.get('after');
  if (raw === null) return { cursor: 0 };
  const where = fromHeader ? 'Last-Event-ID' : 'after';
  const m = FEED_ID.exec(raw);
  if (!m || (!marked && m[2] !== undefined)) {
    throw new TroupeError('invalid_cursor', `${where} must be a seq (decimal digits)${marked ? ', or an event id of this feed' : ''}, not ${JSON.stringify(headOf(raw, 40))}`, { cursor: headOf(raw, 40) });
  }
  const cursor = Number(m[1]);
  // Past 2^53 - 1 digits read as another number (99999999999999999999 as 1e20): until 2026-12-07 the
  // refusal named that one, and said it was not a non-negative integer.
  if (!Number.isSafeInteger(cursor)) {
    throw new TroupeError('invalid_cursor', `${where} ${headOf(raw, 40)} is beyond any seq (at most ${Number.MAX_SAFE_INTEGER})`, { cursor: headOf(raw, 40) });
  }
  return { cursor, ...(m[2] !== undefined ? { mark: m[2] } : {}) };
}

/** The cursor of a feed whose ids are bare seqs (`/v1/inspect/transitions`). */
export function feedCursor(req: RouteRequest): number {
  return feedResume(req, false).cursor;
}
