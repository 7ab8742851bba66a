/**
 * A watcher of a session's event feed (session-feeds.ts) that follows a rewind of the session's log
 * (spec/daemon.md §Management API, `/v1/sessions/:id/events`). When the process that opens a log
 * again finds it holding less than its feed has (a damaged tail cut, a machine crash), the feed
 * ends. A watcher that was handed nothing past what the log still holds has lost nothing: it goes
 * on through the session's feed opened again (a scan of the log as it is now), its reader none the
 * wiser. One that was handed events the log lost ends with `replay_gap` whose `data.lastSeq` is what
 * the log holds: its reader learns that what it has after that seq is gone. Until 2026-12-07 both
 * ended as a deleted session's stream ends, and one still catching up read the cut file with the
 * offsets of the scan before the cut, and could fail `log_corrupt`. A watcher whose live queue
 * overflows (a burst, a slow reader) goes on the same way, from the last event it handed on: the
 * log has every event, so its reader loses nothing.
 */
import type { AgentEvent } from '../core/events.js';
import type { EventWatcher } from '../core/ports.js';
import { isTroupeError, TroupeError } from '../core/errors.js';
import type { BrokerWatcher } from '../store/index.js';
import { eventMark } from './event-mark.js';

/** A watcher of one feed as it was opened. */
export interface FeedView {
  watcher: BrokerWatcher;
  /** The seq the feed's log holds only through, once its feed ended for a rewind. */
  rewoundTo(): number | undefined;
  /** Closes the watcher and lets its feed go (with its last watcher). */
  close(): void;
}

const DONE: IteratorResult<AgentEvent> = { value: undefined, done: true };

export class FeedWatcher implements EventWatcher, AsyncIterator<AgentEvent> {
  private position: number;
  private closed = false;
  /** Settles once the last `next()` called has (never rejects): the next one waits for it. */
  private pending: Promise<void> = Promise.resolve();

  constructor(
    private view: FeedView,
    cursor: number,
    /** The session's feed from `cursor`, opened again (rejects as the first opening would). */
    private readonly reopen: (cursor: number) => Promise<FeedView>,
    /**
     * The event the reader had at `cursor + 1`, by its mark (event-mark.ts): the first event read is
     * checked against it and not handed on; another mark ends the watcher with `replay_gap`.
     */
    private expected?: { seq: number; mark: string },
  ) {
    this.position = cursor;
  }

  [Symbol.asyncIterator](): AsyncIterator<AgentEvent> {
    return this;
  }

  /** Events the current feed's watcher has read ahead from the log and not handed on (what its catch-up holds). */
  readAhead(): number {
    return this.view.watcher.readAhead();
  }

  /**
   * One `next()` at a time, in the order they were called, as the broker's watcher serves them
   * (spec/event-log.md §4.4). The stream's `for await` never overlaps two, but a watcher is an
   * iterator anyone may hold: until 2026-12-07 two at once both took the mark to check (the second
   * compared the event after it, and ended the watcher with a false `replay_gap`), and both reopened
   * a feed after a rewind or an overflow (one of the two views was never closed, and the session's
   * feed, with its log file open, was kept for good).
   */
  next(): Promise<IteratorResult<AgentEvent>> {
    const run = this.pending.then(() => this.step());
    this.pending = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  private async step(): Promise<IteratorResult<AgentEvent>> {
    const expected = this.expected;
    if (expected === undefined) return this.pull();
    const r = await this.pull();
    this.expected = undefined;
    if (r.done) return r;
    // The log cut back and grown again past the reader's cursor while it was away: the seq it had
    // names another event now. Until 2026-12-07 it was served the events after it as if nothing had
    // happened. Where its events and the log's part is not known: none of its events is vouched for,
    // so `lastSeq` (through which seq what the reader has is still the log's) is 0, not the log's end.
    if (r.value.seq !== expected.seq || eventMark(JSON.stringify(r.value)) !== expected.mark) {
      this.close();
      throw new TroupeError('replay_gap', `the session's log holds another event at seq ${expected.seq} than the one this reader had (cut back and written again since: a damaged tail cut, a machine crash, an older copy put back); read it again from the start`, { cursor: expected.seq, lastSeq: 0 });
    }
    return this.pull();
  }

  /** The next event of the feed, across rewinds and overflows. */
  private async pull(): Promise<IteratorResult<AgentEvent>> {
    for (;;) {
      if (this.closed) return DONE;
      const view = this.view;
      const before = view.rewoundTo();
      // Past the seq the log holds, the old feed has only lost events (or a cut file) to give.
      if (before === undefined || this.position < before) {
        let r: IteratorResult<AgentEvent>;
        try {
          r = await view.watcher.next();
        } catch (err) {
          // Its live queue overflowed (events came faster than its reader took them): the log has
          // every one, so it goes on from the last event handed on, through the feed opened again.
          if (!isTroupeError(err) || err.code !== 'event_overflow') throw err;
          if (!(await this.reopenAt(view))) return DONE;
          continue;
        }
        const held = view.rewoundTo();
        if (held === undefined || (!r.done && r.value.seq <= held)) {
          if (!r.done) this.position = r.value.seq;
          return r;
        }
      }
      if (this.closed) return DONE;
      const held = view.rewoundTo()!;
      if (this.position > held) {
        this.close();
        throw new TroupeError('replay_gap', `the session's log holds events through seq ${held} only (cut short: a damaged tail or a machine crash); the events after it that were sent, through seq ${this.position}, are gone`, { cursor: this.position, lastSeq: held });
      }
      if (!(await this.reopenAt(view))) return DONE;
    }
  }

  /**
   * Goes on from `position` through the session's feed opened again, the one way both a rewind and
   * an overflow do (until 2026-12-07 the stream reopened after an overflow by a way of its own).
   * False once this watcher is done: closed meanwhile, or the session deleted (refused
   * `session_not_found`), which ends it as a deleted session's stream ends.
   */
  private async reopenAt(view: FeedView): Promise<boolean> {
    let next: FeedView;
    try {
      next = await this.reopen(this.position);
    } catch (err) {
      this.close();
      if (isTroupeError(err) && err.code === 'session_not_found') return false;
      throw err;
    } finally {
      // Closed after the new one is open: the last watcher's close would drop the session's feed,
      // and reopening it would scan its log file again.
      view.close();
    }
    if (this.closed) {
      next.close();
      return false;
    }
    this.view = next;
    return true;
  }

  return(): Promise<IteratorResult<AgentEvent>> {
    this.close();
    return Promise.resolve(DONE);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.view.close();
  }
}
