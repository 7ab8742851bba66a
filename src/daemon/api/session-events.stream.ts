/**
 * `GET /v1/sessions/:id/events`: a session's log as SSE, `id: <seq>-<mark>` (event-mark.ts); replays
 * from the cursor, then goes live; says `replay_gap` plainly, also to a reader whose last event is
 * not the log's any more. A HEAD gets GET's status and headers, and no feed is opened
 * for it. spec/daemon.md §Management API.
 */
import { isTroupeError } from '../../core/errors.js';
import type { EventWatcher } from '../../core/ports.js';
import type { RouteRequest, RouteResponse } from '../http/route.types.js';
import { feedEventId } from '../event-mark.js';
import { feedResume } from '../http/sse-cursor.js';
import type { SseStream } from '../http/sse-stream.js';

/**
 * Opens the session's feed after `cursor` (the first of a session scans its log, the daemon's loop
 * serving others meanwhile). Rejects with `session_not_found` (unknown or deleted) and
 * `invalid_cursor` (beyond the latest seq) before anything is sent. With `mark`, the watcher first
 * checks that the event at `cursor` is still the one the reader had (else its iteration throws
 * `replay_gap`).
 */
export type OpenFeed = (cursor: number, mark?: string) => Promise<EventWatcher>;

/** Rejects as `OpenFeed` would, without opening the feed (which reads the session's log). */
export type CheckFeed = (cursor: number) => Promise<void>;

export async function streamSessionEvents(req: RouteRequest, res: RouteResponse, open: OpenFeed, check: CheckFeed): Promise<void> {
  const { cursor: after, mark } = feedResume(req, true);
  if (req.method === 'HEAD') {
    // Until 2026-12-06 a HEAD opened the feed as GET does, scanning the whole log for nothing.
    await check(after);
    res.sse(); // the headers, and the response ends (503 at --max-streams, as GET)
    return;
  }
  const watcher = await open(after, mark);
  // A client gone while the feed opened: no stream for it, and its watcher goes now.
  if (req.signal.aborted) return watcher.close();
  let sse: SseStream;
  try {
    sse = res.sse();
  } catch (err) {
    watcher.close();
    throw err;
  }
  const closeWatcher = () => watcher.close();
  sse.onClose(closeWatcher);
  req.signal.addEventListener('abort', closeWatcher, { once: true });
  try {
    // A watcher whose live queue overflows goes on from the log by itself (feed-watcher.ts).
    for await (const event of watcher) {
      if (sse.closed) break;
      const json = JSON.stringify(event);
      await sse.send(json, { id: feedEventId(event.seq, json), event: 'event' });
    }
  } catch (err) {
    const code = isTroupeError(err) ? err.code : 'internal_error';
    const message = err instanceof Error ? err.message : String(err);
    // A gap from a rewind of the log (feed-watcher.ts) says through which seq what the reader has is
    // still the log's: where the log ends now, the stream having sent events past it that the log
    // lost; or 0, for a reader whose last event the log holds no more (its mark is another's).
    const lastSeq = isTroupeError(err) && code === 'replay_gap' ? err.data?.lastSeq : undefined;
    if (!sse.closed) await sse.send(JSON.stringify({ code, message, after, ...(typeof lastSeq === 'number' ? { lastSeq } : {}) }), { event: code === 'replay_gap' ? 'replay_gap' : 'error' });
  } finally {
    watcher.close();
    sse.close();
  }
}
