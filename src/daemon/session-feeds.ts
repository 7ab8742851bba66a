/**
 * Event feeds for the management API: per session, a cursor broker fed with the durable events its
 * child reports, backed by the session's log file for older cursors. Gaps (a feed created while
 * events were already flowing) are filled from the file, which holds every durable event.
 */
import { closeSync, existsSync, fstatSync, openSync, statSync } from 'node:fs';
import type { AgentEvent } from '../core/events.js';
import type { EventWatcher } from '../core/ports.js';
import type { ReportedEvents } from '../wire/control-messages.js';
import { FeedWatcher, type FeedView } from './feed-watcher.js';
import { TroupeError } from '../core/errors.js';
import { DEFAULT_FEED_BUDGET_BYTES } from './serve-options.js';
import { nextTurn } from '../core/next-turn.js';
import { type BrokerWatcher, checkFeedCursor, COLD_BATCH, COLD_BATCH_BYTES, EventBroker, LogCheckpoints, QueueBudget, readEventRange, readEventRangeFd, scanFdPaced, scanLogFilePaced, sessionLogPath, sessionsDir } from '../store/index.js';

const RETENTION = { maxEvents: 2_000, maxBytes: 4 * 1024 * 1024 };
/**
 * How far one watcher's live queue may fall behind its events: beyond, its stream goes on from the
 * log file (src/daemon/api/session-events.stream.ts). Bytes as well as events: 4096 tool outputs of
 * a megabyte would be 4 GiB for one slow reader. 8 MiB is what an ACP stream keeps for resume.
 * Not an option (docs/daemon.md): memory is `--feed-queue-mb`'s, which caps any one queue too, and
 * a queue over this loses its reader nothing (an event larger than it waits alone; the stream goes
 * on from the log).
 */
export const FEED_QUEUE = { events: 4096, bytes: 8 * 1024 * 1024 };
export class SessionFeeds {
  /** Brokers of sessions someone watches, with how many watchers each has. */
  private readonly brokers = new Map<string, Feed>();
  /**
   * The latest durable seq this daemon has heard of, per session, with a feed or without (reports of
   * its children, scans of its log, rewinds): what a session with no feed keeps of its events (see
   * publish), and what an open feed's gap fill fills through. One record for both: until 2026-12-07
   * an open feed kept its own (`fillThrough`), handed over at its opening and closing. Never below
   * an open feed's broker: set to its first seq when it opens, raised before each event it publishes
   * (publish) and bounding what a fill publishes, so it alone says what the daemon knows.
   */
  private readonly reported = new Map<string, number>();

  private readonly budget: QueueBudget;
  /** close() was called: a feed whose scan ends after it is not opened. */
  private closed = false;
  /** Events, and their bytes, that gap fills read from the log (for /metrics). */
  readonly filled = { events: 0, bytes: 0 };

  constructor(
    private readonly home: string,
    budgetBytes = DEFAULT_FEED_BUDGET_BYTES,
    /** The session is deleted (the daemon's index says so), whatever its log file holds: an old log put back does not bring its feed back. */
    private readonly deleted: (sessionId: string) => boolean = () => false,
  ) {
    this.budget = new QueueBudget(budgetBytes);
  }

  /**
   * What a child reported of a session: its events are read (the burst decoded) only for an open
   * feed. Events that cannot be decoded (a bug: the records are the log's, checked when written)
   * are read from the log file instead, which holds every durable event.
   */
  report(sessionId: string, reported: ReportedEvents): void {
    this.heard(sessionId, reported.lastSeq);
    const feed = this.brokers.get(sessionId);
    if (!feed?.broker) return;
    let events: AgentEvent[];
    try {
      events = reported.events;
    } catch {
      if (!feed.filling && feed.broker.lastSeq() < this.reportedSeq(sessionId)) feed.filling = this.fillGap(sessionId, feed);
      return;
    }
    this.publish(sessionId, events);
  }

  /** A child said its session's events are durable through `seq` (none: it said no seq). */
  private heard(sessionId: string, seq: number | undefined): void {
    if (seq !== undefined && seq > (this.reported.get(sessionId) ?? 0)) this.reported.set(sessionId, seq);
  }

  /**
   * Events of a session. Until someone opens a feed on it, only its latest seq is kept: the log file
   * holds every durable event and a broker made later starts from it, so buffering every streamed
   * event of every session here (and reading its log to start a broker) would be work for nobody.
   */
  publish(sessionId: string, events: AgentEvent[]): void {
    this.heard(sessionId, events.at(-1)?.seq);
    const feed = this.brokers.get(sessionId);
    const broker = feed?.broker;
    // A feed still scanning its log has these in the file: its scan goes on to the file's end.
    if (!feed || !broker) return;
    for (const e of events) {
      if (e.seq <= broker.lastSeq()) continue;
      if (feed.filling || e.seq > broker.lastSeq() + 1) {
        // Durable, so in the log: the fill reads these from there too, in order after the gap.
        if (!feed.filling) feed.filling = this.fillGap(sessionId, feed);
        return;
      }
      broker.publish(e, eventBytes(e));
    }
  }

  /**
   * Publishes the durable events the feed was not told of, through the session's `reported` seq (which grows
   * with the events reported meanwhile), from the log file: in batches of a catch-up's size (512
   * events, about 4 MiB; one larger event alone), each published, and so let go but for what the
   * broker retains and its watchers' bounded queues take, before the next is read, with a turn of
   * the loop between two. Until 2026-12-06 the whole gap was read at once: a child whose reports
   * were lost after it wrote a few hundred tool outputs of a megabyte had the daemon hold them all
   * together. Until 2026-12-07 the batches were read one after the other inside `publish`: 200 MB
   * missed held the daemon's loop for 3.2 s, 1 GB for 79 s (each batch also walked the log from the
   * feed's last checkpoint: readEventRangeFd now notes checkpoints as it walks).
   */
  private async fillGap(sessionId: string, feed: Feed): Promise<void> {
    const broker = feed.broker!;
    try {
      // A turn of the loop before each batch, the first too: `publish` returns at once (and has set
      // `filling` before this settles).
      while ((await nextTurn(), this.brokers.get(sessionId) === feed && !broker.isClosed() && broker.lastSeq() < this.reportedSeq(sessionId))) {
        const after = broker.lastSeq();
        const batch = this.fromFile(sessionId, feed, after, Math.min(this.reportedSeq(sessionId), after + COLD_BATCH), COLD_BATCH_BYTES);
        // The log lacks events its child said were durable (cut under it, the rewind not told yet):
        // the feed ends as a rewind's does, its watchers going on from the feed opened on what the
        // log holds, not as a deleted session's.
        if (batch[0]?.seq !== after + 1) {
          feed.rewoundTo = after;
          return this.end(sessionId, feed);
        }
        let bytes = 0;
        for (const missed of batch) {
          const size = eventBytes(missed);
          bytes += size;
          broker.publish(missed, size);
        }
        this.filled.events += batch.length;
        this.filled.bytes += bytes;
      }
    } catch {
      // Nobody awaits the fill: a log that cannot be read on ends the feed, as it ends its streams.
      if (this.brokers.get(sessionId) === feed) this.end(sessionId, feed);
    } finally {
      feed.filling = undefined;
    }
  }

  /**
   * Replay after `cursor`, then live. Rejects with `session_not_found`, `invalid_cursor`; the
   * iterator may throw `replay_gap`, first of all when `mark` (the mark of the event the reader had
   * at `cursor`) is not that of the event the log holds there now. The first watcher of a session waits for the scan of its log
   * (paced: the daemon's loop serves others meanwhile), and so do those that come during it. When a
   * session's last watcher closes, its broker goes with what it retained: the log file serves the
   * next watcher's replay, so a feed opened once (the inspector looking at a session) does not keep
   * megabytes of events for the daemon's lifetime.
   */
  async subscribe(sessionId: string, cursor: number, mark?: string): Promise<EventWatcher> {
    // A rewind of the log, or a watcher's queue overflowing, ends its view; the watcher goes on
    // through the feed opened again, by this same `view`, which refuses a deleted session.
    const reopen = (from: number) => this.view(sessionId, from);
    if (mark === undefined || cursor === 0) return new FeedWatcher(await this.view(sessionId, cursor), cursor, reopen);
    // The reader says which event it had at the cursor: the watcher starts one before it, to read
    // that seq's event as the log holds it now and check it (event-mark.ts).
    return new FeedWatcher(await this.view(sessionId, cursor, cursor - 1), cursor - 1, reopen, { seq: cursor, mark });
  }

  /**
   * A watcher of the session's feed as it is now (opened for it if none is). The one way a watcher
   * gets a feed, its first and every later one: each refuses a deleted session (`present`, and a
   * tombstone found by the scan that opens a feed). Until 2026-12-07 a watcher whose feed ended for
   * a rewind reopened it with only the log file's existence checked, and a session deleted
   * meanwhile was served its tombstone's `session_closed` as the session's next event.
   */
  private async view(sessionId: string, cursor: number, from = cursor): Promise<FeedView> {
    this.present(sessionId);
    const feed = this.feed(sessionId);
    // Counted from now, not once the scan is done: a watcher refused meanwhile (a cursor beyond the
    // log) must not drop the feed that others are waiting for.
    feed.watchers++;
    let open = true;
    const release = () => {
      if (!open) return;
      open = false;
      if (--feed.watchers > 0) return;
      if (this.brokers.get(sessionId) === feed) this.drop(sessionId, feed);
      else closeLog(feed); // forgotten (deleted) while watched: its last watcher has read what it was to send
    };
    let watcher: BrokerWatcher;
    try {
      await feed.opened;
      // A cursor at an event reported during a gap's fill is taken once the fill has published it;
      // one the feed has already, at once.
      while (feed.filling && cursor > feed.broker!.lastSeq()) await feed.filling;
      // Refused as the cursor would be: one watching from before it is refused a cursor beyond the log too.
      if (from !== cursor) checkFeedCursor(cursor, feed.broker!.lastSeq());
      watcher = feed.broker!.subscribe(from, { queueLimit: FEED_QUEUE.events, queueMaxBytes: FEED_QUEUE.bytes, queueBudget: this.budget });
    } catch (err) {
      // A refused cursor, or a feed that could not open, leaves no feed behind.
      release();
      throw err;
    }
    return { watcher, rewoundTo: () => feed.rewoundTo, close: () => (watcher.close(), release()) };
  }

  /**
   * Throws what `subscribe` would (`session_not_found`, `invalid_cursor`) without opening a feed: a
   * HEAD of the feed's route. Opening one scans the session's log file, which a HEAD has no use for
   * while this daemon has seen the log hold the cursor: the events its children reported durable, or
   * a scan of the file. Only a cursor past those needs the file's own last seq, which is kept, so the
   * session's next HEADs read nothing. The session index's `lastSeq` is no such witness: a log
   * damaged after the index was written holds less than it says, and a GET (which scans) refuses a
   * cursor there. Until 2026-12-06 a HEAD trusted it, and answered 200 where its GET was 400.
   */
  async check(sessionId: string, cursor: number): Promise<void> {
    const path = this.present(sessionId);
    const feed = this.brokers.get(sessionId);
    // A feed's scan under way answers this HEAD too (no second scan of the same file).
    if (feed && !feed.broker) await feed.opened.catch(() => undefined);
    const open = feed?.broker;
    let last = this.reportedSeq(sessionId);
    if (!open && cursor > last && Number.isSafeInteger(cursor)) {
      const scan = await scanLogFilePaced(path, nextTurn);
      // Deleted while it was scanned (or before: its log a tombstone, the daemon not told yet): refused
      // as its GET is, and nothing of it kept. Until 2026-12-07 such a HEAD was answered 200, and the
      // deleted session's last seq kept for the daemon's lifetime.
      if (this.deleted(sessionId) || scan.header?.tombstone) throw new TroupeError('session_not_found', `no session ${sessionId}`, { sessionId });
      last = scan.lastSeq;
      // Never below what was seen while it scanned (a feed opened meanwhile keeps it itself).
      if (!this.brokers.has(sessionId)) this.reported.set(sessionId, Math.max(last, this.reportedSeq(sessionId)));
    }
    checkFeedCursor(cursor, last);
  }

  /** The latest durable seq heard of for the session (0 if none). */
  private reportedSeq(sessionId: string): number {
    return this.reported.get(sessionId) ?? 0;
  }

  /** The session's log path; throws `session_not_found` for a session with no log, or a deleted one. */
  private present(sessionId: string): string {
    const path = sessionLogPath(sessionsDir(this.home), sessionId);
    if (!existsSync(path) || this.deleted(sessionId)) throw new TroupeError('session_not_found', `no session ${sessionId}`, { sessionId });
    return path;
  }

  /** The latest durable seq this daemon has heard of for the session, without opening a feed for it. */
  knownLastSeq(sessionId: string): number | undefined {
    return this.reported.get(sessionId);
  }

  /** Sessions with a feed open (for /metrics). */
  get open(): number {
    return this.brokers.size;
  }

  /** Bytes of events waiting in watchers' live queues, of every feed (for /metrics). */
  get queuedBytes(): number {
    return this.budget.queuedBytes;
  }

  /** A deleted session: nothing of it is kept. */
  forget(sessionId: string): void {
    const feed = this.brokers.get(sessionId);
    // One still scanning its log is refused when the scan ends (`openFeed`).
    if (feed) this.end(sessionId, feed);
    this.reported.delete(sessionId);
  }

  /**
   * A session whose log holds only `heldSeq` now, less than this daemon heard of (cut while the
   * session rested; the process that opened it again says so before anything it appends). Its
   * known seq is the log's: until 2026-12-07 GET /v1/sessions kept showing the lost seq. An open
   * feed past it ends (it would skip the session's next events as ones it had, and its checkpoints
   * are the old file's): its watchers go on through the feed opened again, or end with
   * `replay_gap` if they were handed events the log lost (feed-watcher.ts). A feed still scanning
   * the log scans it again once that scan ends: what it scanned may be gone (until 2026-12-07 it
   * opened on the old view, past the log's end, and skipped the session's next events).
   */
  rewound(sessionId: string, heldSeq: number): void {
    const feed = this.brokers.get(sessionId);
    if (feed && !feed.broker) feed.rewinds++;
    // Past it with a fill under way too: what is left to fill is gone from the log.
    else if (feed?.broker && this.reportedSeq(sessionId) > heldSeq) {
      feed.rewoundTo = heldSeq;
      this.end(sessionId, feed);
    }
    if (!this.brokers.get(sessionId)?.broker) this.reported.set(sessionId, heldSeq);
  }

  /** Ends a feed: its streams end once they have sent what they had; its log closes with the last. */
  private end(sessionId: string, feed: Feed): void {
    this.brokers.delete(sessionId);
    feed.broker?.close();
    // Its watchers still catching up read the rest from the log they opened (a deleted session's: now a tombstone's name).
    if (feed.watchers === 0) closeLog(feed);
  }

  close(): void {
    this.closed = true;
    for (const f of this.brokers.values()) {
      f.broker?.close();
      if (f.watchers === 0) closeLog(f);
    }
  }

  /** Lets a feed go: its session keeps only its latest seq (in `reported`), as one never opened does. */
  private drop(sessionId: string, feed: Feed): void {
    this.brokers.delete(sessionId);
    closeLog(feed);
  }

  /** The session's feed: the open one, or one opened now, its log scanned in the background. */
  private feed(sessionId: string): Feed {
    const open = this.brokers.get(sessionId);
    if (open) return open;
    const path = sessionLogPath(sessionsDir(this.home), sessionId);
    // Kept open while the feed is: a session deleted while a watcher catches up (now in batches of a
    // few MiB, not all it had to send) has its log replaced by a tombstone, and the rest is read
    // from the file the feed opened.
    const feed: Feed = { broker: undefined, opened: Promise.resolve(), watchers: 0, checkpoints: new LogCheckpoints(), fd: openIfExists(path), filling: undefined, rewinds: 0, rewoundTo: undefined };
    this.brokers.set(sessionId, feed);
    feed.opened = this.openFeed(sessionId, feed, path);
    // Its watchers hear of a failure; nobody else awaits it.
    feed.opened.catch(() => undefined);
    return feed;
  }

  /**
   * Scans the feed's log and starts its broker. Frames and checksums only, no event decoded, in
   * slices with the loop's other work between them: until 2026-12-06 the scan ran in one go, and a
   * gigabyte of log (~300 ms of CRC) held every other session's traffic for as long.
   */
  private async openFeed(sessionId: string, feed: Feed, path: string): Promise<void> {
    let scan;
    try {
      // Again while a rewind came during the scan (`rewound`): the log it scanned was cut meanwhile.
      for (let rewinds = -1; rewinds !== feed.rewinds && !this.closed && this.brokers.get(sessionId) === feed; ) {
        // From the file at the log's path now: the one scanned may have been replaced (an older copy
        // put back by a rename), and its fd still reads the file that was. Until 2026-12-07 the scan
        // again read the same fd, and the feed opened on the replaced file's events.
        if (rewinds !== -1) {
          closeLog(feed);
          feed.fd = openIfExists(path);
        }
        rewinds = feed.rewinds;
        scan = feed.fd === undefined ? undefined : await scanFdPaced(feed.fd, path, nextTurn);
      }
    } catch (err) {
      if (this.brokers.get(sessionId) === feed) this.brokers.delete(sessionId);
      closeLog(feed);
      throw err;
    }
    // Deleted while it was scanned (or the daemon is closing), or before (its log a tombstone, the
    // daemon not told yet): nothing of it is kept.
    if (this.closed || this.brokers.get(sessionId) !== feed || scan?.header?.tombstone) {
      if (this.brokers.get(sessionId) === feed) this.brokers.delete(sessionId);
      closeLog(feed);
      throw new TroupeError('session_not_found', `no session ${sessionId}`, { sessionId });
    }
    const initial = scan?.lastSeq ?? 0;
    const first = scan?.firstSeq ?? initial + 1;
    if (scan) feed.checkpoints = scan.checkpoints;
    const broker = new EventBroker({
      retention: RETENTION,
      initialSeq: initial,
      // Never past what the daemon was told is durable: the file may end in a record being written.
      // Nor past a rewind: the file beyond is another one's, read with the old scan's checkpoints.
      cold: { firstSeq: () => first, read: async (after, max, maxBytes) => this.fromFile(sessionId, feed, after, Math.min(after + max, broker.lastSeq(), feed.rewoundTo ?? Infinity), maxBytes) },
    });
    feed.broker = broker;
    // Events reported while it scanned are in the file it scanned to its end; any beyond (a log
    // damaged there) come as a gap the next publish fills from the file, as for any feed: until
    // then, what the feed has is what the daemon knows (a HEAD refuses a cursor its GET would).
    this.reported.set(sessionId, initial);
  }

  /**
   * Durable events `(after, through]` from the log file, read from the checkpoint nearest before
   * them: a replay from the start of a long session reads each record once, not the whole file per
   * page. The file is the child's and may end in a record being written: `through` is durable, so
   * the read stops before that.
   */
  private fromFile(sessionId: string, feed: Feed, after: number, through: number, maxBytes?: number): AgentEvent[] {
    if (through <= after) return [];
    const path = sessionLogPath(sessionsDir(this.home), sessionId);
    if (feed.fd !== undefined) return readEventRangeFd(feed.fd, path, feed.checkpoints, after, through - after, fstatSync(feed.fd).size, maxBytes);
    return readEventRange(path, feed.checkpoints, after, through - after, statSync(path).size, maxBytes);
  }
}

interface Feed {
  /** Undefined while the log is scanned (`opened` pending), or if it could not be. */
  broker: EventBroker | undefined;
  /** Settles once the broker is there, or with why there will be none. */
  opened: Promise<void>;
  /** Watchers, and those waiting for the scan to become one. */
  watchers: number;
  /** Where the session's records start in its log file (from the scan that opened the feed). */
  checkpoints: LogCheckpoints;
  /** The log file, open while the feed is (undefined if it was not there yet, or once closed). */
  fd: number | undefined;
  /** The fill of a gap under way (`fillGap`), through the session's `reported` seq. */
  filling: Promise<void> | undefined;
  /** Rewinds heard of while the log was scanned: a scan they came during is done again. */
  rewinds: number;
  /** The seq the log was found to hold only through, once the feed ended for it (`rewound`). */
  rewoundTo: number | undefined;
}


function openIfExists(path: string): number | undefined {
  try {
    return openSync(path, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

function closeLog(feed: Feed): void {
  if (feed.fd === undefined) return;
  closeSync(feed.fd);
  feed.fd = undefined;
}

/**
 * An event's size for the feed's memory bounds, without serializing it: the characters of every
 * string in it plus a fixed overhead for the envelope. The bounds need an order of magnitude, not an
 * exact count; but every field counts, since any can be large (a prompt's image, a diff, a written
 * file's content in a tool call's input). Until 2026-12-06 only `text` and `output` counted.
 */
export function eventBytes(e: AgentEvent): number {
  return 256 + stringChars(e);
}

function stringChars(v: unknown): number {
  if (typeof v === 'string') return v.length;
  if (typeof v !== 'object' || v === null) return 0;
  let n = 0;
  for (const x of Array.isArray(v) ? v : Object.values(v)) n += stringChars(x);
  return n;
}
