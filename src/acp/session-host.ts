/**
 * The sessions of one `troupe acp` process: each a SessionEngine on a durable FileEventLog, wired to
 * the ACP client's capabilities (fs, terminal, permission prompts), with its events projected to
 * `session/update` as they happen and folded into the session index.
 */
import type * as acp from '@agentclientprotocol/sdk';
import { TroupeError } from '../core/errors.js';
import type { AgentEvent, ContentBlock } from '../core/events.js';
import { isValidSessionId } from '../core/ids.js';
import { oncePerKey } from '../core/once-per-key.js';
import type { Logger } from '../core/ports.js';
import { SessionEngine, type EngineOptions } from '../actors/session-engine.js';
import type { EngineLimits } from '../actors/engine-core.js';
import { INDEXED_EVENT_TYPES, isFinallyDeleted, recheckInBackground, SessionIndex, sessionsDir, type BackgroundRecheck, type FileEventLog } from '../store/index.js';
import { nextTurn } from '../core/next-turn.js';
import { DEFAULT_MODE_ID, mcpServersOf } from '../tools/index.js';
import { defaultModel, resolveModel } from '../providers/registry.js';
import type { TroupeConfig } from '../providers/config.js';
import type { ProjectionCaps } from './update.projection.js';
import { clientOffer, type ClientOffer } from './client-offer.js';
import { SessionUpdates } from './session-updates.js';
import { engineDeps } from './session-engine-deps.js';
import { daemonOwnedCatalog, type SessionCatalog } from './session-catalog.js';
import { assertDirectory, requestedDirectories, sessionCwd } from './session-directories.js';
import type { SessionReporter } from './control-channel.js';
import { SessionMcp } from './session-mcp.js';
import { unlessWithdrawn } from './withdrawn-request.js';
import { SessionLogs } from './session-logs.js';
import { settledHistory } from './fork-history.js';
import { commandsUpdate, SLASH_COMMANDS } from './session-options.js';

export interface HostOptions {
  home: string;
  env: NodeJS.ProcessEnv;
  config: TroupeConfig;
  logger: Logger;
  limits?: Partial<EngineLimits>;
  /** Supervised children report events and transitions to their daemon, which owns the index. */
  reporter?: SessionReporter;
  /**
   * Where live `session/update`s go as NDJSON text (`troupe acp`: its stdout writer), instead of one
   * SDK `notify` each, which costs several times the update itself.
   */
  updateLines?: (text: string) => void;
  /**
   * Unloads a session nothing has used for this long (ms; absent or 0: never), as `session/close`
   * does: the next request for it opens it again from its log. For a long-lived `troupe acp` (an
   * editor's), whose sessions would otherwise stay in memory until it exits.
   */
  idleUnloadMs?: number;
  /**
   * The session index to use, shared by every host of this process. Absent: the host opens its own.
   * A process that runs many hosts at once (one per connection, as an in-process server does) shares
   * one, rather than having each write the same file under its lock.
   */
  index?: SessionCatalog;
}

export interface LiveSession {
  engine: SessionEngine;
  log: FileEventLog;
  detach: () => void;
  /**
   * Seqs the open itself appended (`after` < seq <= `through`: the end of a turn its crashed process
   * left open), not sent to the client yet: `SessionUpdates.sendCatchUp` sends them, or a load's
   * replay shows them.
   */
  repaired?: { after: number; through: number };
}


export class SessionHost {
  private readonly live = new Map<string, LiveSession>();
  private readonly opening = new Map<string, Promise<LiveSession>>();
  /** Deletes in progress, by session (see delete). */
  private readonly deleting = new Map<string, Promise<void>>();
  /** Sessions being unloaded: their log is still open (and locked) until its close completes. */
  private readonly unloading = new Map<string, Promise<void>>();
  private client?: acp.AgentContext;
  /** What the client offers (client-offer.ts): its sessions' tools and updates follow it. */
  private offer: ClientOffer = clientOffer({});
  /** The sessions' log files: new ones (and the spare made ahead), and existing ones opened. */
  private readonly logs: SessionLogs;
  /** When each live session was last asked for, or ended a turn (ms since epoch), for idleUnloadMs. */
  private readonly lastUsed = new Map<string, number>();
  private readonly idleSweep?: NodeJS.Timeout;
  private readonly mcp: SessionMcp;
  /** What the client is sent of the sessions: live updates, replays, what an open appended. */
  readonly updates: SessionUpdates;
  /** Why sessions that stopped by themselves (SessionEngine.onStop) did, until they are opened again. */
  private readonly stoppedWith = new Map<string, TroupeError>();
  /** Set as the shutdown begins: no session is made (create) or opened (get) from then on. */
  private stopping = false;
  /** The session/new (and forks) being served: the shutdown waits for them to be refused. */
  private readonly creating = new Set<Promise<unknown>>();

  private constructor(
    private readonly opts: HostOptions,
    readonly index: SessionCatalog,
  ) {
    this.logs = new SessionLogs(opts.home, opts.logger, index);
    this.mcp = new SessionMcp(opts.logger, opts.env, (sessionId) => this.announceCommands(sessionId));
    this.updates = new SessionUpdates({ client: () => this.client, caps: () => this.projectionCaps, ...(opts.updateLines ? { lines: opts.updateLines } : {}) });
    const idleMs = opts.idleUnloadMs ?? 0;
    if (idleMs > 0) {
      // A sweep a few times per idle period: a session goes at most a quarter of it late.
      this.idleSweep = setInterval(() => this.unloadIdle(idleMs), Math.max(50, Math.min(idleMs / 4, 60_000)));
      this.idleSweep.unref();
    }
  }

  /** The session was used now (only counted when idle sessions are unloaded). */
  private touch(sessionId: string): void {
    if (this.idleSweep) this.lastUsed.set(sessionId, Date.now());
  }

  private unloadIdle(idleMs: number): void {
    const now = Date.now();
    for (const [sessionId, live] of this.live) {
      // Not while a request is opening it or its MCP servers start (slow servers can take longer than
      // the idle time): the request that asked for them uses the session next.
      if (now - (this.lastUsed.get(sessionId) ?? now) < idleMs || !live.engine.idle || this.opening.has(sessionId) || this.mcpStarting(sessionId)) continue;
      this.opts.logger.info('unloading a session idle for a while; a request opens it again from its log', { sessionId, idleMs });
      void this.unload(sessionId, { keepMcp: true }).catch((err) => this.opts.logger.error('idle unload failed', { sessionId, error: String(err) }));
    }
  }

  static async open(opts: HostOptions): Promise<SessionHost> {
    if (opts.reporter) return new SessionHost(opts, daemonOwnedCatalog(opts.reporter));
    if (opts.index) return new SessionHost(opts, opts.index);
    const index = await SessionIndex.open(sessionsDir(opts.home), { logger: opts.logger });
    const host = new SessionHost(opts, index);
    // Logs changed while no agent ran (cut by a crash, written on by another process, removed) are
    // read again as the daemon does, in the background (spec/event-log.md §6, Recheck).
    host.recheck = recheckInBackground(index, { isOpen: (id) => host.isOpen(id), pause: nextTurn, logger: opts.logger });
    return host;
  }

  private recheck?: BackgroundRecheck;

  /** Settles once the logs changed while no agent ran are read again (only of an index this host opened): `session/list` waits for it. */
  logsRechecked(): Promise<void> {
    return this.recheck?.done ?? Promise.resolve();
  }

  /**
   * The connection's client and what it advertised (at `initialize`, or in a daemon's
   * `_meta.troupe.clientCapabilities`): from now on for every session, the open ones too.
   */
  attach(client: acp.AgentContext, caps: unknown): void {
    this.client = client;
    this.offer = clientOffer(caps);
  }

  get projectionCaps(): ProjectionCaps {
    return this.offer;
  }

  defaultModel(): string {
    return defaultModel(this.opts.env, this.opts.config);
  }

  /**
   * A new session; `mcp`: the MCP servers its request named, started before its first event. Withdrawn
   * meanwhile (`mcp.signal`), it rejects `request_cancelled` and leaves no session, nor its log file.
   * Once the shutdown has begun it rejects `capacity_exceeded` (as the daemon refuses what comes while
   * it shuts down), one already being made included, and leaves no log: a session made then would be
   * one whose process is exiting. (One already durable when the shutdown begins, reading its first
   * events back, is answered, and closed by the shutdown with the others.) Until 2026-12-07 a session/new whose servers were starting as
   * SIGTERM came was answered a session made after the shutdown had closed the others, its log and
   * lock left behind.
   */
  async create(
    init: { cwd: string; additionalDirectories: string[]; model?: string; mode?: string; forkedFrom?: { sessionId: string; throughSeq: number } },
    history: readonly AgentEvent[] = [],
    mcp?: { servers: ReturnType<typeof mcpServersOf>; signal?: AbortSignal },
  ): Promise<LiveSession> {
    const made = this.make(init, history, mcp);
    this.creating.add(made);
    try {
      return await made;
    } finally {
      this.creating.delete(made);
    }
  }

  private refuseWhileStopping(): void {
    if (this.stopping) throw new TroupeError('capacity_exceeded', 'the agent is shutting down: it makes or opens no session now; ask again once it has started again');
  }

  private async make(
    init: Parameters<SessionHost['create']>[0],
    history: readonly AgentEvent[],
    mcp: Parameters<SessionHost['create']>[2],
  ): Promise<LiveSession> {
    this.refuseWhileStopping();
    assertDirectory(init.cwd, 'cwd');
    const cwd = sessionCwd(init.cwd);
    const additionalDirectories = requestedDirectories(cwd, init.additionalDirectories);
    const model = init.model ?? this.defaultModel();
    resolveModel(model, this.opts.env, this.opts.config);
    const mode = init.mode ?? DEFAULT_MODE_ID;
    const { sessionId, log } = await this.logs.forNewSession();
    // While the log holds no event it is no session (a spare: SessionLogs), listed nowhere. Until
    // 2026-12-07 the servers started once the session was made, and a `$/cancel_request` of the
    // session/new was not heeded until they had started or their start timeout had passed.
    try {
      this.refuseWhileStopping();
      if (mcp) await this.useMcpServers(sessionId, cwd, mcp.servers, mcp.signal, additionalDirectories);
    } catch (err) {
      await this.logs.discard(log);
      throw err;
    }
    const { deps, bind } = this.deps(sessionId, log, cwd, additionalDirectories);
    const transitions = transitionReport(this.opts.reporter, sessionId);
    const engine = SessionEngine.create(deps, { sessionId, cwd, additionalDirectories, model, mode, ...(init.forkedFrom ? { forkedFrom: init.forkedFrom } : {}) }, history, transitions);
    bind(engine);
    // session_created is a barrier (spec/event-log.md §3): the session is reported once it is durable,
    // as a turn's result is, so that no crash after the answer can lose a session a client was given.
    // Synced on this thread: the request has nothing else to wait for, and a small write and an
    // fdatasync take less than the two thread-pool round trips they would otherwise cost.
    try {
      log.syncNow();
      await log.whenDurable(log.lastSeq());
      // The shutdown began meanwhile (its MCP servers' start ended by it, say): undone as a failed write is.
      this.refuseWhileStopping();
    } catch (err) {
      await engine.dispose().catch(() => undefined);
      // Nothing its engine tells from now on reaches the daemon as a session of this process.
      transitions.stop();
      // No client was given this session (a full disk, say): its log is not left behind, nor its servers.
      await this.logs.discard(log);
      void this.mcp.stop(sessionId, { forget: true }).catch(() => undefined);
      throw err;
    }
    // The log is the truth and the index can be rebuilt from it: session/new does not wait for it.
    const created = (await log.readAfter(0)).events;
    void this.index.applyEvents(created).catch((err) => this.opts.logger.error('index update failed', { sessionId, error: String(err) }));
    this.opts.logger.info('session created', { sessionId, cwd, model, mode });
    return this.track(engine, log, 0, transitions.stop);
  }

  /** Makes the log of the next new session ahead of its request (SessionLogs.prepareSpareLog). */
  prepareSpareLog(): void {
    this.logs.prepareSpareLog();
  }

  /**
   * The live session, opening it from its log if needed. Unknown or deleted: `session_not_found`.
   * `indexedSeq`: where the daemon's index entry stands (INDEXED_SEQ), for an open to report beyond.
   */
  async get(sessionId: string, indexedSeq?: number): Promise<LiveSession> {
    // Waited for before anything else: registered as opening meanwhile, this request would hold up
    // the delete's unload, which would wait for it.
    const deleting = this.deleting.get(sessionId);
    if (deleting) await deleting.catch(() => undefined);
    const live = this.live.get(sessionId);
    if (live) {
      this.touch(sessionId);
      return live;
    }
    let pending = this.opening.get(sessionId);
    if (!pending) {
      // No session opens once the shutdown has begun: it would be one whose process is exiting.
      this.refuseWhileStopping();
      // MCP servers stopped by an idle unload start again with their session. Used as of when it is
      // handed over: restarting them may take longer than the idle time, and the sweep must not
      // unload the session before the request that opened it has used it.
      // One being unloaded (the idle sweep, a close) is opened again once its log is closed.
      pending = (this.unloading.get(sessionId) ?? Promise.resolve())
        .then(() => this.reopen(sessionId, indexedSeq))
        .then(async (opened) => (await this.mcp.restart(sessionId), this.touch(sessionId), opened))
        .finally(() => this.opening.delete(sessionId));
      this.opening.set(sessionId, pending);
    }
    const opened = await pending;
    // The shutdown began while it opened: the shutdown closes it (unload waits for an opening), and
    // the request is refused. Until 2026-12-07 it was left open, its log locked, as the process exited.
    this.refuseWhileStopping();
    return opened;
  }

  /** Cancels the running turn and the queued prompts of a session open in this process (ACP session/cancel). */
  cancel(sessionId: string): void {
    this.live.get(sessionId)?.engine.cancel();
  }

  /**
   * The client's input has ended (request-gate.ts): every session's turn is cancelled and
   * its queued prompts with it, and MCP servers still starting are not waited for, so that the
   * requests in flight are answered soon and the agent exits.
   */
  endOfInput(): void {
    for (const live of this.live.values()) live.engine.cancel();
    this.mcp.endStarts();
  }

  /** The session, if it is open here and busy (a turn runs or waits): what a steer acts on at once. */
  busy(sessionId: string): LiveSession | undefined {
    const live = this.live.get(sessionId);
    return live && !live.engine.idle ? live : undefined;
  }

  /** Whether `sessionId` is open in this process or being opened: its replay goes through its log here. */
  isOpen(sessionId: string): boolean {
    return this.live.has(sessionId) || this.opening.has(sessionId) || this.unloading.has(sessionId);
  }

  /** A new session holding a copy of `sourceId`'s completed turns (ACP session/fork): its settled history (fork-history.ts). */
  async fork(sourceId: string, cwd: string, additionalDirectories: string[], mcp?: Parameters<SessionHost['create']>[2]): Promise<LiveSession> {
    const source = await this.get(sourceId);
    const { history, through } = await settledHistory(source);
    const conv = source.engine.conversation;
    return this.create({ cwd, additionalDirectories, model: conv.model, mode: conv.mode, forkedFrom: { sessionId: sourceId, throughSeq: through } }, history, mcp);
  }

  /**
   * Unloads a session (ACP session/close): cancels its work and frees it, its MCP servers too; it
   * can be loaded again. `keepMcp` (an idle unload): its servers start again when it is reopened.
   */
  async unload(sessionId: string, { keepMcp = false } = {}): Promise<void> {
    const live = this.live.get(sessionId) ?? (await this.opening.get(sessionId)?.catch(() => undefined));
    if (live) {
      this.live.delete(sessionId);
      this.lastUsed.delete(sessionId);
      const closed = (async () => {
        try {
          // First the engine: a running MCP call is cancelled as such, then its server stops.
          await live.engine.dispose();
        } finally {
          live.detach();
          // The file is closed and its lock released in any case; a log that failed earlier says so
          // again here, which is old news to whoever unloads it (the session was answered with it).
          await live.log.close().catch((err) => {
            if (err !== live.log.failure()) throw err;
          });
        }
      })();
      this.unloading.set(sessionId, closed.catch(() => undefined));
      try {
        await closed;
      } finally {
        this.unloading.delete(sessionId);
      }
    } else {
      // Already being unloaded (a close, the idle sweep): done once its log is closed, not before.
      await this.unloading.get(sessionId);
    }
    await this.mcp.stop(sessionId, { forget: !keepMcp });
  }

  /**
   * The MCP servers a client named for a session (`mcpServers` of session/new, load or resume, read
   * by `mcpServersOf`): they replace the ones it had, and are started before this resolves (one
   * that fails to start is left out, and logged). Stdio, HTTP and SSE servers only (spec/tools.md §7).
   */
  async useMcpServers(
    sessionId: string,
    cwd: string,
    servers: ReturnType<typeof mcpServersOf>,
    signal?: AbortSignal,
    additionalDirectories = this.live.get(sessionId)?.engine.conversation.additionalDirectories,
  ): Promise<void> {
    for (const s of servers.skipped) this.opts.logger.warn('an MCP server is left out', { sessionId, server: s.name, reason: s.reason });
    // Withdrawn while they start (`signal`): rejected at once, and they are stopped in the background
    // (none outlives the agent: SessionMcp.stopAll), not waited for until started or timed out.
    const stop = () => void this.mcp.stop(sessionId, { forget: true }).catch((e) => this.opts.logger.error('cannot stop MCP servers', { sessionId, error: String(e) }));
    await unlessWithdrawn(this.mcp.use(sessionId, cwd, servers.servers, additionalDirectories, signal), signal, stop, 'withdrawn while its MCP servers started; they are stopped', { sessionId });
  }

  /**
   * Makes `dirs` (checked by `requestedDirectories`) the session's additional directories, as a
   * client's session/load or resume asks: recorded in its log when they change, and used by its
   * tools and told to its MCP servers from then on.
   */
  useDirectories(live: LiveSession, dirs: string[]): void {
    const conv = live.engine.conversation;
    if (dirs.length === conv.additionalDirectories.length && dirs.every((d, i) => d === conv.additionalDirectories[i])) return;
    live.engine.configure({ additionalDirectories: dirs });
    this.mcp.setRoots(live.engine.sessionId, conv.cwd, dirs);
    this.opts.logger.info('session directories changed', { sessionId: live.engine.sessionId, additionalDirectories: dirs });
  }

  /** The slash commands of a session: troupe's own, then its MCP servers' prompts. */
  commands(sessionId: string): acp.AvailableCommand[] {
    return [...SLASH_COMMANDS, ...this.mcp.commands(sessionId)];
  }

  /** Tells the client the session's slash commands (again: its MCP servers' prompts changed). */
  announceCommands(sessionId: string): void {
    void this.client?.notify('session/update', commandsUpdate(sessionId, this.commands(sessionId))).catch(() => undefined);
  }

  /** What one of the session's MCP commands makes of its input: the content of a turn. */
  expandMcpCommand(sessionId: string, command: string, input: string, signal?: AbortSignal): Promise<ContentBlock[]> {
    return this.mcp.expand(sessionId, command, input, signal);
  }

  private mcpStarting(sessionId: string): boolean {
    return this.mcp.status(sessionId).some((s) => s.state === 'starting');
  }

  /** The session's MCP servers and what they came to (`_troupe/session_state`). */
  mcpStatus(sessionId: string): ReturnType<SessionMcp['status']> {
    return this.mcp.status(sessionId);
  }

  /**
   * Deletes a session: ends it, tombstones its log, keeps its id used forever. Unknown ids succeed.
   * A request for the session that comes meanwhile waits for the delete (then finds it deleted):
   * opened again between the unload and the tombstone, it would make the delete fail.
   */
  delete(sessionId: string): Promise<void> {
    return oncePerKey(this.deleting, sessionId, () => this.deleteNow(sessionId));
  }

  private async deleteNow(sessionId: string): Promise<void> {
    // Made by another process on this home, perhaps since the index was read.
    if (!this.index.get(sessionId) && isValidSessionId(sessionId)) await this.index.refresh();
    // One deleted because its log was gone is deleted for good now: it does not come back with its log.
    if (!this.index.get(sessionId) || this.deletedForGood(sessionId)) return;
    await this.unload(sessionId);
    await this.index.tombstone(sessionId);
    this.stoppedWith.delete(sessionId);
    this.opts.logger.info('session deleted', { sessionId });
  }

  async shutdown(): Promise<void> {
    this.stopping = true;
    clearInterval(this.idleSweep);
    await this.recheck?.stop();
    await this.logs.removeSpare();
    // The sessions being made are refused and their logs removed (create) before the process exits;
    // their MCP servers still starting are not waited for.
    this.mcp.endStarts();
    await Promise.allSettled([...this.creating]);
    // The sessions still opening too: each is closed once opened (unload waits for it).
    await Promise.all([...new Set([...this.live.keys(), ...this.opening.keys()])].map((id) => this.unload(id)));
    await this.mcp.stopAll();
    await this.index.flush();
  }

  /**
   * Whether the index says the session was deleted (by a delete, not because its log was gone):
   * final, whatever file is at its log's place, such as an old copy of the log put back from a
   * backup, which is not the session again (spec/event-log.md §6, Tombstones).
   */
  deletedForGood(sessionId: string): boolean {
    const entry = this.index.get(sessionId);
    return !!entry && isFinallyDeleted(entry);
  }

  /** Opens a session from its log file, the truth (the index may lag behind a daemon's writes). */
  private async reopen(sessionId: string, indexedSeq: number | undefined): Promise<LiveSession> {
    if (!isValidSessionId(sessionId)) throw new TroupeError('session_not_found', `no session ${sessionId}`, { sessionId });
    // Until 2026-12-07 an old copy of a deleted session's log put back opened, and took prompts.
    if (this.deletedForGood(sessionId)) throw new TroupeError('session_not_found', `session ${sessionId} was deleted`, { sessionId });
    const log = await this.logs.open(sessionId);
    // Whatever fails from here on (a read, the repair that cannot be written, log_write_failed),
    // the file and its lock are let go, so that the next request can try again. A log left open
    // here kept its session locked for the life of the process.
    let engine: SessionEngine | undefined;
    const transitions = transitionReport(this.opts.reporter, sessionId);
    try {
      // The cwd is fixed at creation: read it from the first event (the engine folds the directories).
      const first = (await log.readAfter(0, { limit: 1 })).events[0];
      if (first?.type !== 'session_created') throw new TroupeError('session_not_found', `session ${sessionId} has no history`, { sessionId });
      const before = log.lastSeq();
      const { deps, bind } = this.deps(sessionId, log, first.cwd, first.additionalDirectories);
      // A turn that a stop left open (its log failed) ends with the stop's error, not as a crash.
      const stopped = this.stoppedWith.get(sessionId);
      engine = await SessionEngine.open(deps, sessionId, stopped && { code: stopped.code, message: stopped.message }, transitions);
      this.stoppedWith.delete(sessionId);
      bind(engine);
      // The entry catches up with the log (a crash may have kept the index from a title, a close).
      // The index can be rebuilt from the logs: a failure to update it does not fail the open.
      await this.index.catchUp(sessionId, log, { heldSeq: before, ...(indexedSeq === undefined ? {} : { indexedSeq }) }).catch((err) => this.opts.logger.error('index update failed', { sessionId, error: String(err) }));
      this.opts.logger.info('session opened from its log', { sessionId, lastSeq: log.lastSeq() });
      const live = await this.track(engine, log, before, transitions.stop);
      if (log.lastSeq() > before) live.repaired = { after: before, through: log.lastSeq() };
      return live;
    } catch (err) {
      await engine?.dispose().catch(() => undefined);
      // The session leaves this process as an unloaded one does (its detach): the report of its
      // machines ends here too, so that nothing its engine tells after this reaches the daemon as
      // this process running the session. What the daemon was told stays (the session machine's
      // `init`), as after an unload, which reports nothing when a session leaves (spec/daemon.md,
      // current machine states).
      transitions.stop();
      await log.close().catch(() => undefined);
      throw err;
    }
  }

  /**
   * Projects and reports every event from now on; `reportFrom`: events already appended the reporter
   * has not seen. `stopInspecting` ends the report of its transitions (transitionReport).
   */
  private async track(engine: SessionEngine, log: FileEventLog, reportFrom: number, stopInspecting: () => void): Promise<LiveSession> {
    const sessionId = engine.sessionId;
    const reporter = this.opts.reporter;
    if (reporter && log.lastSeq() > reportFrom) {
      for (const e of (await log.readAfter(reportFrom, { limit: 100_000 })).events) reporter.event(log, e);
    }
    const stop = engine.observe((event) => {
      // Idle from the end of its last turn (not per event: this is the streaming path).
      if (event.type === 'turn_completed') this.touch(sessionId);
      reporter?.event(log, event);
      this.updates.emitted(sessionId, event);
      if (INDEXED_EVENT_TYPES.has(event.type)) void this.index.applyEvents([event]).catch((err) => this.opts.logger.error('index update failed', { sessionId, error: String(err) }));
    });
    const live: LiveSession = { engine, log, detach: () => (stop(), stopInspecting()) };
    this.live.set(sessionId, live);
    this.touch(sessionId);
    // A session that stopped by itself (its log failed, or one of its machines did) is unloaded at
    // once; the next request for it opens it again from its log (after a full disk, once it takes
    // writes again).
    engine.onStop((err) => {
      if (this.live.get(sessionId) !== live) return;
      this.stoppedWith.set(sessionId, err);
      this.opts.logger.warn('unloading a session that stopped; a request opens it again from its log', { sessionId, code: err.code });
      void this.unload(sessionId, { keepMcp: true }).catch((e) => this.opts.logger.error('unload failed', { sessionId, error: String(e) }));
    });
    return live;
  }

  /** The engine's dependencies (session-engine-deps.ts), on this host's client and MCP tools. */
  private deps(sessionId: string, log: FileEventLog, cwd: string, initialDirectories: readonly string[]) {
    const { env, config, logger, limits } = this.opts;
    return engineDeps({ sessionId, log, cwd, initialDirectories, env, config, logger, limits, client: this.requireClient(), offer: () => this.offer, mcpTools: () => this.mcp.tools(sessionId) });
  }

  private requireClient(): acp.AgentContext {
    if (!this.client) throw new TroupeError('internal_error', 'no ACP client is attached yet');
    return this.client;
  }
}

/**
 * What reports a session's machine transitions to the daemon (supervised children only), handed to
 * the engine as it is made: so the daemon is told the machines' first state too. Added once the
 * engine had started, it missed the session machine's `init`, and a session reopened after its
 * process crashed mid-turn still showed there as running that turn. `stop` ends the reports.
 */
function transitionReport(reporter: SessionReporter | undefined, sessionId: string): EngineOptions & { stop(): void } {
  if (!reporter) return { stop: () => undefined };
  let reporting = true;
  return { inspect: (ev) => reporting && reporter.transition(sessionId, ev), stop: () => void (reporting = false) };
}
