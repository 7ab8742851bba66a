/**
 * Where a numbered SSE feed (`/v1/sessions/:id/events`, `/v1/inspect/transitions`) starts: after the
 * `Last-Event-ID` a reconnecting client sends, else after `?after=`, else from the start.
 * spec/daemon.md §Management API.
 */
import { TroupeError } from '../../core/errors.js';
import type { RouteRequest } from './route.types.js';

/**
 * The cursor of a feed request. Throws `invalid_cursor` for one that is not decimal digits (empty,
 * negative, fractional, or what Number() would also take: '0x1', '1e0', ' 1'). An empty `after=` is
 * refused, not read as 0: a client that meant a cursor and lost it must not get the whole log. An
 * empty `Last-Event-ID` counts as none: EventSource sends the header only when the last id it saw is
 * not empty (WHATWG HTML §9.2, "reestablish the connection"), and the rest of the daemon reads it so.
 */
export function feedCursor(req: RouteRequest): number {
  const header = req.headers['last-event-id'];
  const fromHeader = header !== undefined && header !== '';
  const raw = fromHeader ? header : req.query.get('after');
  if (raw === null) return 0;
  if (!/^\d+$/.test(raw)) {
    const where = fromHeader ? 'Last-Event-ID' : 'after';
    throw new TroupeError('invalid_cursor', `${where} must be a seq (decimal digits), not ${JSON.stringify(raw.slice(0, 40))}`, { cursor: raw.slice(0, 40) });
  }
  return Number(raw);
}
