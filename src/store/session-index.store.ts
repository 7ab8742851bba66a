/**
 * The session index: one JSON file next to the logs listing every session ever created, including
 * tombstones of deleted ones, so that an id is never reused. Writes are atomic; a missing or
 * damaged index is rebuilt from the logs, which stay the source of truth. Format: spec/event-log.md §6.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { AgentEvent } from '../core/events.js';
import type { Clock, EventLog, Logger } from '../core/ports.js';
import { silentLogger, systemClock } from '../core/ports.js';
import { isTroupeError, TroupeError } from '../core/errors.js';
import { isValidSessionId } from '../core/ids.js';
import { nextTurn } from '../core/next-turn.js';
import { writeFileAtomic } from './atomic-write.js';
import { writeFailed } from './write-failed.js';
import { withFileLock } from './file-lock.js';
import { fileIdentity, sameFile, type FileIdentity } from './file-identity.js';
import { removeDeadWritersTemps } from './stale-temps.js';
import { makeDirs, sessionIndexPath } from './paths.js';
import { privateSessionsDir } from './private-modes.js';
import { isFinallyDeleted, newer, parseIndex } from './session-index.codec.js';
import { listOrder, listPage, type SessionListOptions, type SessionListPage } from './session-index.list.js';
import { entryAsLogSays, foldEvent, rewoundEntry, type SessionEntry, type SessionStatus } from './session-summary.js';
import { entryFromLog, logCatchUp, sessionLogIds, type LogCatchUp } from './session-log-entry.js';
import { writeTombstoneLog } from './session-tombstone.js';
import { IndexFileBytes } from './session-index.bytes.js';

export interface SessionIndexOptions {
  clock?: Clock;
  logger?: Logger;
  /**
   * Gather the changes of this many milliseconds into one write (default 0: write at once). A busy
   * daemon creates sessions in bursts, and each write reads, merges and rewrites the whole file.
   */
  writeDelayMs?: number;
  /** Awaited between slices of a log read while the process serves (a fork adopted, a revive, a delete): default the loop's next turn. */
  pause?: () => Promise<void>;
}

export class SessionIndex {
  readonly path: string;
  /**
   * Every session by id. Ids are only ever added, or the whole map is replaced (load, rebuild):
   * the sorted ids below count on it. Entries change through `put` only.
   */
  private entries = new Map<string, SessionEntry>();
  /** The ids in list order (`before`), kept between lists: sorting 10,000 of them took 2 to 20 ms per list. */
  private readonly listOrder = listOrder();
  private dirty = false;
  private chain: Promise<void> = Promise.resolve();
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly pause: () => Promise<void>;
  /** 0 while opening (a rebuild is written at once), then the configured delay. */
  private writeDelayMs = 0;
  /** Why the index was rebuilt from the logs when it was opened, if it was. */
  rebuiltBecause: 'missing' | 'damaged' | undefined;
  /** The file the index was loaded from (not rebuilt) at its open: logs changed since may say more (session-log-recheck.ts). */
  loadedFrom: FileIdentity | undefined;

  private constructor(
    readonly dir: string,
    options: SessionIndexOptions,
  ) {
    this.path = sessionIndexPath(dir);
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger ?? silentLogger;
    this.pause = options.pause ?? nextTurn;
  }

  /** Loads the index of a sessions directory (creating the directory), rebuilding it if it is missing or damaged, and adding any log it does not know. */
  static async open(dir: string, options: SessionIndexOptions = {}): Promise<SessionIndex> {
    makeDirs(dir, 0o700);
    const index = new SessionIndex(dir, options);
    // One found open to others (made by another umask, a copy) is made 0700, its files 0600.
    privateSessionsDir(dir, index.logger);
    // One listing more (a few ms for 10,000 sessions): until 2026-12-06 these stayed for good.
    await removeDeadWritersTemps(dir, index.logger);
    await index.loadOrRebuild();
    index.writeDelayMs = options.writeDelayMs ?? 0;
    return index;
  }

  /** Reads the file, or rebuilds it from the logs when it is missing or damaged. */
  private async loadOrRebuild(): Promise<void> {
    let text: string | undefined;
    let identity: FileIdentity | undefined;
    try {
      identity = await fileIdentity(this.path);
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    if (text === undefined) {
      this.rebuiltBecause = 'missing';
      return this.rebuild();
    }
    if (!this.load(text)) {
      this.logger.warn('session index is damaged; rebuilding it from the logs', { path: this.path });
      this.rebuiltBecause = 'damaged';
      return this.rebuild();
    }
    this.loadedFrom = identity;
    // Unchanged while it was read: the next write need not read and merge it again (every write
    // replaces the file, so another process's write would show as another identity).
    if (sameFile(identity, await fileIdentity(this.path))) this.lastWritten = identity;
    await this.adoptUnknownLogs();
  }

  private load(text: string): boolean {
    const parsed = parseIndex(text);
    if (!parsed) return false;
    this.entries = parsed;
    return true;
  }

  /** The index as another process last wrote it, or `undefined` if it is missing or damaged. */
  private async readDisk(): Promise<Map<string, SessionEntry> | undefined> {
    try {
      return parseIndex(await readFile(this.path, 'utf8'));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  private mergeFrom(disk: Map<string, SessionEntry>): void {
    for (const [id, theirs] of disk) {
      const ours = this.entries.get(id);
      this.put(ours ? newer(ours, theirs) : theirs);
    }
  }

  /** Picks up what other processes wrote to the index since it was opened. */
  async refresh(): Promise<void> {
    await this.chain;
    const disk = await this.readDisk();
    if (disk) this.mergeFrom(disk);
  }

  /**
   * The same, for a list that must show what another process added (an editor's agent on this
   * home): one stat when nobody else wrote the file since this process last wrote or read it. A
   * file that cannot be read (a failing disk, something else in its place) is what others wrote
   * lost for now, not a reason to refuse: it is logged, and memory answers. Until 2026-12-07 the
   * errno error itself reached the list or the revive that asked, as a 500 `internal_error`; a
   * revive now goes on to its write, which the same cause refuses `index_write_failed`.
   */
  async refreshIfChanged(): Promise<void> {
    await this.chain;
    const before = await fileIdentity(this.path);
    if (!before || sameFile(before, this.lastWritten)) return;
    const disk = await this.readDisk().catch((err: unknown) => {
      this.logger.warn('session index cannot be read; going on with what this process knows', { path: this.path, error: (err as Error).message });
      return undefined;
    });
    if (!disk) return;
    this.mergeFrom(disk);
    // Unchanged while it was read: what it holds is in memory now, and the next write need not merge it.
    if (sameFile(before, await fileIdentity(this.path))) this.lastWritten = before;
  }

  private async adoptUnknownLogs(): Promise<void> {
    let added = false;
    for (const id of await sessionLogIds(this.dir)) {
      if (this.entries.has(id)) continue;
      const entry = await entryFromLog(this.dir, id, this.logger);
      if (entry) {
        this.put(entry);
        added = true;
      }
    }
    if (added) await this.persistOrLeave();
  }

  /**
   * Adds the entry of a session another process just made (a fork, made by a daemon's child), read
   * from its log, unless the index already has one.
   */
  async adoptLog(id: string): Promise<void> {
    if (this.entries.has(id)) return;
    const entry = await entryFromLog(this.dir, id, this.logger, this.pause);
    if (!entry || this.entries.has(id)) return;
    this.put(entry);
    await this.persist();
  }

  /**
   * Brings a session's entry up to date with its open log, the truth (spec/event-log.md §6): folds
   * the indexed events the log holds after the entry's `lastSeq`, which a process killed before its
   * index write kept from it (a title, a close). Done when a session is opened, not at every start
   * for 10,000 logs; a daemon's child does it for its daemon (`follow`). `heldSeq`: the log's last
   * seq once opened, before the session appended to it; below `lastSeq`, the log lost events.
   */
  async catchUp(id: string, log: Pick<EventLog, 'readAfter' | 'lastSeq'>, { heldSeq = log.lastSeq() }: { heldSeq?: number } = {}): Promise<void> {
    const entry = this.entries.get(id);
    if (!entry || entry.status === 'deleted') return;
    await this.follow(id, await logCatchUp(log, { entrySeq: entry.lastSeq, heldSeq }));
  }

  /**
   * Makes a session's entry follow what its open log told (logCatchUp: here, or reported by a
   * daemon's child): with `rewound`, the log holds less than the entry says, and the entry is made
   * again from `events`, every indexed event the log holds (rewoundEntry); otherwise the events
   * newer than the entry are folded. Never backwards: events folded meanwhile (a reopened session's
   * process reports what it appends) are newer than those read, whose older title or mode must not
   * undo them.
   */
  async follow(id: string, { events, rewound }: LogCatchUp): Promise<void> {
    if (rewound !== undefined) {
      await this.replaceByLog(id, (entry) => (rewound < entry.lastSeq ? rewoundEntry(entry, events, rewound, this.clock.now()) : undefined));
      return;
    }
    const entry = this.entries.get(id);
    if (!entry || entry.status === 'deleted') return;
    const unseen = events.filter((e) => e.sessionId === id && e.seq > entry.lastSeq);
    if (unseen.length) await this.applyEvents(unseen);
  }

  /**
   * Makes an entry what its log says (`fromLog`, entryFromLog; `undefined`: the log is gone), read
   * again because the log changed while no process here had it open (session-log-recheck.ts), unless
   * the entry changed since `seen` (a copy from `get`) was taken: then a process that opened the log
   * told it more. Whether it changed. An entry deleted because its log was gone (`gone`) follows its
   * log too, once the log is back; one deleted by a delete never does.
   */
  followLog(id: string, seen: SessionEntry, fromLog: SessionEntry | undefined): Promise<boolean> {
    return this.replaceByLog(id, (entry) => (JSON.stringify(entry) === JSON.stringify(seen) ? entryAsLogSays(entry, fromLog, this.clock.now()) : undefined), { gone: true });
  }

  /** Replaces a not deleted entry (with `also.gone`, or one deleted because its log was gone) with what `next` makes of it, unless that is `undefined` or the same. */
  private async replaceByLog(id: string, next: (entry: SessionEntry) => SessionEntry | undefined, also: { gone?: boolean } = {}): Promise<boolean> {
    const entry = this.entries.get(id);
    const made = entry && (entry.status !== 'deleted' || (also.gone && entry.gone)) ? next(entry) : undefined;
    if (!made || JSON.stringify(made) === JSON.stringify(entry)) return false;
    if (made.cwd) made.cwd = resolve(made.cwd);
    this.put(made);
    await this.persist();
    return true;
  }

  /** Rebuilds the whole index from the logs and writes it. Tombstones survive (they are logs too). */
  async rebuild(): Promise<void> {
    const next = new Map<string, SessionEntry>();
    for (const id of await sessionLogIds(this.dir)) {
      const entry = await entryFromLog(this.dir, id, this.logger);
      if (entry) next.set(id, entry);
    }
    this.entries = next;
    await this.persistOrLeave();
  }

  /**
   * Adds or replaces an entry (never changed in place: the file's bytes are cached by identity). A
   * `createdAt` can change: an entry the daemon adopts when a session registers has the daemon's
   * time, and the session_created folded later the child's. The list order must hear of that.
   */
  private put(entry: SessionEntry): void {
    const old = this.entries.get(entry.id);
    if (old && old.createdAt !== entry.createdAt) this.listOrder.moved(entry.id);
    this.entries.set(entry.id, entry);
  }

  get(id: string): SessionEntry | undefined {
    const e = this.entries.get(id);
    return e ? { ...e } : undefined;
  }

  /** Whether an id was ever used here (live, closed, failed or deleted). */
  isUsed(id: string): boolean {
    return this.entries.has(id);
  }

  /** How many sessions are not deleted (without sorting or copying, for health checks and metrics). */
  count(): number {
    let n = 0;
    for (const e of this.entries.values()) if (e.status !== 'deleted') n++;
    return n;
  }

  list(options: SessionListOptions = {}): SessionListPage {
    return listPage(this.entries, this.listOrder, options);
  }

  /** Adds a new session. Throws `invalid_params` if the id was ever used (tombstones included). */
  async create(entry: Omit<SessionEntry, 'status' | 'lastSeq' | 'updatedAt'> & Partial<Pick<SessionEntry, 'status' | 'lastSeq' | 'updatedAt'>>): Promise<SessionEntry> {
    if (!isValidSessionId(entry.id)) throw new TroupeError('invalid_params', `not a valid session id: ${entry.id}`);
    // Another process may have used the id since we loaded the index.
    if (!this.entries.has(entry.id)) await this.refresh();
    if (this.entries.has(entry.id)) throw new TroupeError('invalid_params', `session id ${entry.id} was already used`, { sessionId: entry.id });
    const full: SessionEntry = { status: 'active', lastSeq: 0, updatedAt: entry.createdAt, ...entry, cwd: resolve(entry.cwd) };
    this.put(full);
    await this.persist();
    return { ...full };
  }

  /**
   * Adds an entry for a session this process knows was just created (a daemon's child made it),
   * unless the index already has one. Unlike `create`, it does not re-read the file: the id is new.
   */
  async adopt(entry: Omit<SessionEntry, 'status' | 'lastSeq' | 'updatedAt'>): Promise<void> {
    if (this.entries.has(entry.id)) return;
    this.put({ status: 'active', lastSeq: 0, updatedAt: entry.createdAt, ...entry, cwd: resolve(entry.cwd) });
    await this.persist();
  }

  /** Folds events into their sessions' entries (a `session_created` adds the session) and saves. */
  async applyEvents(events: readonly AgentEvent[]): Promise<void> {
    let changed = false;
    for (const e of events) {
      const cur = this.entries.get(e.sessionId);
      if (e.type === 'session_created' && cur && cur.lastSeq >= e.seq) continue;
      const before = cur && JSON.stringify(cur);
      const next = foldEvent(cur && { ...cur }, e);
      if (next) {
        if (next.cwd) next.cwd = resolve(next.cwd);
        // Reopening a session folds events the index already holds: no write when nothing changed.
        if (before === JSON.stringify(next)) continue;
        this.put(next);
        changed = true;
      }
    }
    if (changed) await this.persist();
  }

  /** Marks a session active, closed or failed (deleting goes through `tombstone`). */
  async setStatus(id: string, status: Exclude<SessionStatus, 'deleted'>): Promise<void> {
    if (!this.entries.has(id)) await this.refresh();
    const e = this.entries.get(id);
    if (!e) throw new TroupeError('session_not_found', `no session ${id}`, { sessionId: id });
    if (e.status === 'deleted') throw new TroupeError('session_not_found', `session ${id} was deleted`, { sessionId: id });
    // Entries are replaced, never changed in place: their serialized form is cached by identity.
    this.put({ ...e, status, updatedAt: Math.max(e.updatedAt, this.clock.now()) });
    await this.persist();
  }

  /**
   * Clears a session's `failed` status (an operator revived it): it gets back the status its log
   * says, as a rebuild from the logs would give it (`active`, or `closed` if a client closed it last).
   * Nothing changes for a session that is not failed. The index says so in memory only once its
   * file does: while the write is under way the session is still failed to everyone who asks (a
   * message for it is refused, not started), and a write that fails (a full disk) leaves it failed,
   * in memory as on disk, the error thrown (`index_write_failed`). Until 2026-12-07 it was `active`
   * in memory during the write, and a message that came then started a process for a session the
   * index went back to calling failed.
   */
  async clearFailed(id: string): Promise<void> {
    if (this.entries.get(id)?.status !== 'failed') return;
    const fromLog = await entryFromLog(this.dir, id, this.logger, this.pause).catch((err: unknown) => {
      this.logger.warn("reading a revived session's log for its status", { sessionId: id, error: String(err) });
      return undefined;
    });
    const status = fromLog?.status === 'closed' ? 'closed' : 'active';
    // Made from the entry as it is when the write runs (a merge with another process's index may
    // have changed it meanwhile); none if the session is not failed then (a delete came first).
    await this.write((e) => (e?.status === 'failed' ? { ...e, status, updatedAt: Math.max(e.updatedAt, this.clock.now()) } : undefined), id);
  }

  /**
   * Deletes a session: its log is replaced by a tombstone log (session-tombstone.ts), and the index
   * marks it `deleted`. The session's log must not be open for writing. The id stays used forever.
   * A session deleted because its log was gone (`gone`) is deleted so too: its tombstone takes the
   * place of the log, which then never brings it back.
   */
  async tombstone(id: string): Promise<void> {
    if (!this.entries.has(id)) await this.refresh();
    const e = this.entries.get(id);
    if (!e) throw new TroupeError('session_not_found', `no session ${id}`, { sessionId: id });
    if (isFinallyDeleted(e)) return;
    const now = this.clock.now();
    const lastSeq = await writeTombstoneLog(this.dir, e, now, this.pause);
    // Its damaged content is gone with the rest: the tombstone log opens (as the deleted session it is).
    const { damaged: _lost, gone: _back, ...kept } = this.entries.get(id)!;
    this.put({ ...kept, status: 'deleted', lastSeq, updatedAt: now });
    // The session is deleted once its tombstone is in place (a rebuild finds it there).
    await this.persistOrLeave();
  }

  /**
   * Serializes every entry now, so that the first write does not have to: a daemon starting on
   * 10,000 sessions does it before it serves rather than in its first burst of `session/new`s,
   * where the ~45 ms of serializing (a block per turn) and the collection of its garbage (~60 ms
   * in a burst, measured) held its loop. The list's order is made now too, for the same reason: the
   * first `session/list` would otherwise sort every entry (3–4 ms with 10,000).
   */
  prepareWrites(): Promise<void> {
    this.listOrder.of(this.entries);
    return this.queued('session index serialization failed', async () => void (await this.bytes.of(this.entries)));
  }

  /** Runs `work` after every write so far; a failure is logged (and rejects the promise returned). */
  private queued(failure: string, work: () => Promise<void>): Promise<void> {
    const p = this.chain.then(work);
    this.chain = p.catch((err) => this.logger.error(failure, { error: (err as Error).message }));
    return p;
  }

  /** Waits until every change so far is on disk. */
  flush(): Promise<void> {
    const delayed = this.delayed;
    if (!delayed) {
      // A change whose write failed (a full disk) is still to be written: try again now.
      if (this.dirty) void this.write().catch(() => undefined);
      return this.chain;
    }
    clearTimeout(delayed.timer);
    delayed.start();
    // The write starts on a later turn of the loop: `chain` does not hold it yet. (A write that
    // fails is logged by `chain`; flushing does not fail for it.)
    return delayed.done.then(
      () => this.chain,
      () => this.chain,
    );
  }

  /** A write waiting for `writeDelayMs` to pass. */
  private delayed?: { timer: NodeJS.Timeout; start: () => void; done: Promise<void> };

  private persist(): Promise<void> {
    this.dirty = true;
    if (this.writeDelayMs > 0) {
      if (this.delayed) return this.delayed.done;
      let start!: () => void;
      const gate = new Promise<void>((resolve) => (start = resolve));
      const done = gate.then(() => {
        this.delayed = undefined;
        return this.write();
      });
      this.delayed = { timer: setTimeout(start, this.writeDelayMs), start, done };
      this.delayed.timer.unref();
      return done;
    }
    return this.write();
  }

  /** The identity of the file as this process last wrote it, or read it whole. */
  private lastWritten?: FileIdentity;
  /** The file's bytes, kept between writes (one write at a time: `chain`). */
  private readonly bytes = new IndexFileBytes();

  /**
   * Writes the index. With `change`, the entry of `id` it makes (from the entry in memory once the
   * file is locked and merged) is written in that entry's place, and put in memory only once the
   * file holds it: a change that is refused while the write fails (clearFailed). Without one, or
   * when it makes none, only what is changed in memory is written.
   */
  private write(change?: (e: SessionEntry | undefined) => SessionEntry | undefined, id?: string): Promise<void> {
    return this.queued('session index write failed', async () => {
      if (!this.dirty && !change) return;
      const wasDirty = this.dirty;
      this.dirty = false;
      let changed: SessionEntry | undefined;
      let base: SessionEntry | undefined;
      try {
        // Other processes write the index too: merge their version under a lock, then replace it.
        await withFileLock(this.path + '.lock', async () => {
          // Reading and parsing a big index is most of a write's CPU (~20 ms for 10,000 sessions, on
          // the daemon's loop): skip it when the file is still the one this process wrote last.
          if (!sameFile(await fileIdentity(this.path), this.lastWritten)) {
            const disk = await this.readDisk();
            if (disk) this.mergeFrom(disk);
          }
          base = this.entries.get(id!);
          changed = change?.(base);
          if (!changed && !wasDirty) return;
          await writeFileAtomic(this.path, await this.bytes.of(this.entries, changed));
          this.lastWritten = await fileIdentity(this.path);
        });
      } catch (err) {
        // Not written (a full disk): the changes are still only in memory. The next write, or a
        // flush, writes them. Until 2026-12-06 they were forgotten: a daemon that marked a session
        // `failed` (which no rebuild recovers) while its disk was full, and exited once it was not,
        // left the index without it.
        this.dirty = true;
        // Typed, as the log's own write failures are: until 2026-12-06 the errno error itself
        // (ENOSPC, EFBIG) reached a revive or a delete, answered 500 internal_error.
        throw err instanceof TroupeError ? err : writeFailed('index_write_failed', 'the session index', err);
      }
      // Unless the entry changed while the file was written (a delete's tombstone: its own write,
      // queued after this one, writes it over the change).
      if (changed && this.entries.get(id!) === base) this.put(changed);
    });
  }

  /**
   * `persist`, for changes that are what the logs say (a rebuild, an adopted log, a deletion whose
   * tombstone is in place): a write that fails (logged) leaves them in memory for the next write,
   * and the caller goes on. A full disk does not keep an index from opening, or a delete done.
   */
  private async persistOrLeave(): Promise<void> {
    await this.persist().catch((err: unknown) => {
      if (!isTroupeError(err, 'index_write_failed')) throw err;
    });
  }
}
export { INDEX_FORMAT_VERSION } from './session-index.codec.js';

