/**
 * The replays behind `GET /v1/sessions/:id/replay` (docs/inspector.md §The replay while a session
 * runs). A page showing a running session asks about once a second; replaying the whole log for
 * each ask cost the daemon time in proportion to the log. So the daemon keeps, for the few
 * sessions being watched, the replay fold (src/machines/replay.ts) and where its log read stopped:
 * each ask reads and folds only what the log gained, and a page that has the replay up to seq N
 * (of this fold: `replayId`) gets only the transitions after N.
 *
 * Exact by construction: a kept fold equals a replay of the log it has read (ReplayFold), and a
 * fold that learns it decided wrongly (`stale`), or whose log file was replaced, is dropped and
 * replayed anew with a new `replayId`, so a page that built on the old one gets the whole answer
 * again. Bounded: at most `maxHeld` folds, each dropped after `idleMs` without an ask, and each
 * keeping its newest `keep` transitions to answer pages a little behind. Nothing stays once the
 * pages go away.
 */
import { randomBytes } from 'node:crypto';
import { TroupeError } from '../../core/errors.js';
import { ReplayFold, replaySessionInSlices, type ReplayedTransition } from '../../machines/replay.js';
import type { AgentEvent } from '../../core/events.js';
import { readLogFrom, type LogPosition } from '../../store/index.js';

export interface ReplayAnswer {
  /** The fold these transitions come from: pass it back (`since`) to get only what follows. */
  replayId: string;
  /** The transitions are those after this seq (0: all of them, replacing what the page has). */
  after: number;
  /** The log seq the replay has reached. */
  lastSeq: number;
  transitions: ReplayedTransition[];
}

export interface SessionReplaysOptions {
  logPath(sessionId: string): string;
  /** Awaited between slices of a long read or replay, so that the loop serves others meanwhile. */
  pause(): Promise<void>;
  /** Told of every read: the log bytes read and the events folded (for /metrics and tests). */
  onRead?(bytes: number, events: number): void;
  maxHeld?: number;
  idleMs?: number;
  keep?: number;
  now?(): number;
}

interface Held {
  replayId: string;
  fold: ReplayFold;
  position: LogPosition;
  /** Every transition after `recentAfter` (whole seqs), up to `keep` of them. */
  recent: ReplayedTransition[];
  recentAfter: number;
  usedAt: number;
}

export class SessionReplays {
  private readonly held = new Map<string, Held>();
  /** One ask at a time per session: the fold is advanced across awaits. */
  private readonly queues = new Map<string, Promise<unknown>>();
  private readonly boot = randomBytes(4).toString('hex');
  private made = 0;
  /** Rewinds heard of (of any session: they are rare): a read they came during is done again. */
  private rewinds = 0;
  /**
   * Deletes (`forget`) of sessions with asks under way, by session, while it has any: an ask that one
   * came during (its session known when it was made) keeps nothing and answers `session_not_found`.
   */
  private readonly deletes = new Map<string, number>();
  private readonly maxHeld: number;
  private readonly idleMs: number;
  private readonly keep: number;
  private readonly now: () => number;
  private sweeper: NodeJS.Timeout | undefined;

  constructor(private readonly opts: SessionReplaysOptions) {
    this.maxHeld = opts.maxHeld ?? 8;
    this.idleMs = opts.idleMs ?? 30_000;
    this.keep = opts.keep ?? 512;
    this.now = opts.now ?? Date.now;
  }

  /** Sessions whose fold is kept (for /metrics). */
  get size(): number {
    return this.held.size;
  }

  /** The replay of `sessionId`'s log, or only what follows `since.after` if `since` is of the kept fold. */
  replay(sessionId: string, since?: { replayId: string; after: number }): Promise<ReplayAnswer> {
    const before = this.queues.get(sessionId) ?? Promise.resolve();
    const asked = this.deletes.get(sessionId) ?? 0;
    const deleted = () => this.deleted(sessionId, asked);
    const run = before.then(
      () => this.answer(sessionId, since, deleted),
      () => this.answer(sessionId, since, deleted),
    );
    this.queues.set(sessionId, run);
    const done = () => {
      if (this.queues.get(sessionId) !== run) return;
      this.queues.delete(sessionId);
      this.deletes.delete(sessionId);
    };
    run.then(done, done);
    return run;
  }

  /**
   * A deleted session: its fold goes at once, and the asks under way keep nothing of it. Until
   * 2026-12-07 an ask that was reading the log when the session was deleted kept its fold (for a
   * session no route names any more, until 30 s without an ask), and one waiting behind it read the
   * tombstone that took the log's place and answered that as the session's machines.
   */
  forget(sessionId: string): void {
    if (this.queues.has(sessionId)) this.deletes.set(sessionId, (this.deletes.get(sessionId) ?? 0) + 1);
    this.drop(sessionId);
  }

  /** Throws for an ask made before its session was deleted (`asked`: the session's deletes then). */
  private deleted(sessionId: string, asked: number): void {
    if ((this.deletes.get(sessionId) ?? 0) !== asked) throw new TroupeError('session_not_found', `session ${sessionId} was deleted while its replay was read`, { sessionId, deleted: true });
  }

  /**
   * A session whose log was found holding less than before (a damaged tail cut, a machine crash:
   * spec/daemon.md §Control channel, `rewound`). Its fold goes, and a new fold whose read this came
   * during is not kept: the log is read again from its start. Until 2026-12-07 the fold went on reading the
   * cut file from where it had stopped, which new records had taken: it answered with the events the
   * log lost, and nothing after them, until nobody asked for 30 s.
   */
  rewound(sessionId: string): void {
    this.rewinds++;
    this.drop(sessionId);
  }

  /** Drops the folds nobody asked about for `idleMs`. */
  sweep(): void {
    const now = this.now();
    for (const [id, h] of this.held) if (now - h.usedAt >= this.idleMs) this.drop(id);
  }

  close(): void {
    for (const id of [...this.held.keys()]) this.drop(id);
  }

  private async answer(sessionId: string, since: { replayId: string; after: number } | undefined, deleted: () => void): Promise<ReplayAnswer> {
    this.sweep();
    deleted();
    const h = await this.advanced(sessionId);
    if (!h) return this.fresh(sessionId, deleted);
    h.usedAt = this.now();
    const lastSeq = h.fold.lastSeq;
    if (since && since.replayId === h.replayId && since.after >= h.recentAfter && since.after <= lastSeq) {
      return { replayId: h.replayId, after: since.after, lastSeq, transitions: h.recent.slice(firstAfter(h.recent, since.after)) };
    }
    // A page new to this fold: the whole replay, of exactly what the fold has read, so that the
    // page and the fold agree up to `lastSeq` and the page's next ask can be answered from here.
    const read = await this.read(sessionId, lastSeq);
    const transitions = await replaySessionInSlices(read.events, this.opts.pause);
    deleted();
    return { replayId: h.replayId, after: 0, lastSeq, transitions };
  }

  /** The kept fold, brought up to the log's end; undefined (and dropped) if it cannot be. */
  private async advanced(sessionId: string): Promise<Held | undefined> {
    const h = this.held.get(sessionId);
    if (!h) return undefined;
    try {
      const grown = await readLogFrom(this.opts.logPath(sessionId), h.position, this.opts.pause);
      if (grown) this.opts.onRead?.(grown.bytes, grown.events.length);
      if (this.held.get(sessionId) !== h) return undefined;
      const added = grown ? await h.fold.appendInSlices(grown.events, this.opts.pause) : [];
      if (!grown || h.fold.stale) return void this.drop(sessionId);
      h.position = grown.position;
      this.remember(h, added);
      return h;
    } catch (err) {
      this.drop(sessionId);
      throw err;
    }
  }

  /** A new fold of the whole log, kept; the answer holds all its transitions. */
  private async fresh(sessionId: string, deleted: () => void): Promise<ReplayAnswer> {
    deleted(); // (a kept fold found gone: perhaps its session deleted, its log now a tombstone)
    const rewinds = this.rewinds;
    const read = await this.read(sessionId);
    const fold = new ReplayFold();
    const transitions = await fold.appendInSlices(read.events, this.opts.pause);
    try {
      deleted();
    } catch (err) {
      fold.stop();
      throw err;
    }
    // A log cut while it was read may have given events it no longer holds.
    if (this.rewinds !== rewinds) {
      fold.stop();
      return this.fresh(sessionId, deleted);
    }
    const h: Held = { replayId: `${this.boot}.${++this.made}`, fold, position: read.position, recent: [], recentAfter: 0, usedAt: this.now() };
    this.remember(h, transitions);
    this.drop(sessionId);
    this.held.set(sessionId, h);
    while (this.held.size > this.maxHeld) this.drop(this.held.keys().next().value!);
    this.sweeper ??= setInterval(() => this.sweep(), this.idleMs).unref();
    return { replayId: h.replayId, after: 0, lastSeq: fold.lastSeq, transitions };
  }

  /** The log from its start (through `through`, if given). */
  private async read(sessionId: string, through = Infinity): Promise<{ events: AgentEvent[]; position: LogPosition }> {
    const grown = (await readLogFrom(this.opts.logPath(sessionId), undefined, this.opts.pause))!;
    this.opts.onRead?.(grown.bytes, grown.events.length);
    // A tombstone: the session deleted, its index entry not marked yet (or deleted by another process
    // on this home, the daemon not told). Until 2026-12-07 its one event was answered as the
    // session's machines, and kept as its fold. A fold kept of the log it replaced goes too.
    if (grown.header?.tombstone) {
      this.drop(sessionId);
      throw new TroupeError('session_not_found', `session ${sessionId} was deleted; its log is a tombstone`, { sessionId, deleted: true });
    }
    const cut = grown.events.findIndex((e) => e.seq > through);
    return { events: cut < 0 ? grown.events : grown.events.slice(0, cut), position: grown.position };
  }

  /** Adds `added` to the kept transitions, dropping the oldest whole seqs beyond `keep`. */
  private remember(h: Held, added: ReplayedTransition[]): void {
    if (added.length === 0) return;
    h.recent = h.recent.concat(added);
    if (h.recent.length <= this.keep) return;
    const cutSeq = h.recent[h.recent.length - this.keep - 1]!.seq;
    h.recent = h.recent.slice(firstAfter(h.recent, cutSeq));
    h.recentAfter = Math.max(h.recentAfter, cutSeq);
  }

  private drop(sessionId: string): void {
    this.held.get(sessionId)?.fold.stop();
    this.held.delete(sessionId);
    if (this.held.size === 0 && this.sweeper) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
  }
}

/** Index of the first transition with a seq above `seq` (the list is in seq order). */
function firstAfter(list: readonly ReplayedTransition[], seq: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (list[mid]!.seq <= seq) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
