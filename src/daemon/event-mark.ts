/**
 * The mark of a session's event in its feed's SSE ids: `id: <seq>-<mark>` (spec/daemon.md
 * §Management API, `/v1/sessions/:id/events`). A log can be cut back (a damaged tail cut, a machine
 * crash, an older copy put back) and grow again past where a reader was: its seqs then name other
 * events. A reader that comes back with `Last-Event-ID: <seq>-<mark>` is checked: the daemon reads
 * the event at that seq from the log as it is, and a mark that is not its own says the reader's
 * events are not the log's any more (`replay_gap`), where a bare seq would have been served the
 * events after it as if nothing had happened. The mark is taken from the event's content, not kept
 * anywhere: it holds across daemon restarts, and for a log changed while no daemon ran.
 */
import { createHash } from 'node:crypto';

/** Hex digits of the event's SHA-256 kept: 48 bits, so two different events share a mark once in 2^48. */
const MARK_DIGITS = 12;

/** An SSE id of the feed: a seq, and optionally the mark of the event at it. */
export const FEED_ID = new RegExp(`^(\\d+)(?:-([0-9a-f]{${MARK_DIGITS}}))?$`);

/**
 * The mark of an event, from its JSON as the feed sends it (`JSON.stringify` of the event as
 * decoded: the same for an event read from the log as for one its process reported, their keys in
 * the order it wrote them). SHA-256 is native: about 0.6 ms per MB, as much as encoding it to send.
 */
export function eventMark(json: string): string {
  return createHash('sha256').update(json).digest('hex').slice(0, MARK_DIGITS);
}

/** The SSE id of the event at `seq` whose JSON is `json`. */
export function feedEventId(seq: number, json: string): string {
  return `${seq}-${eventMark(json)}`;
}
