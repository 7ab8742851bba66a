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
import type { SessionEngine } from '../actors/session-engine.js';
import type { EngineLimits } from '../actors/engine-core.js';
import { INDEXED_EVENT_TYPES, isFinallyDeleted, recheckInBackground, SessionIndex, sessionsDir, type BackgroundRecheck, type FileEventLog } from '../store/index.js';
import { nextTurn } from '../core/next-turn.js';
import type { mcpServersOf } from '../tools/index.js';
import { usableDefaultModel } from '../providers/registry.js';
import type { TroupeConfig } from '../providers/config.js';
import type { ProjectionCaps } from './update.projection.js';
import { clientOffer, type ClientOffer } from './client-offer.js';
import { SessionUpdates } from './session-updates.js';
import { engineDeps } from './session-engine-deps.js';
import { daemonOwnedCatalog, type SessionCatalog } from './session-catalog.js';
import type { SessionReporter } from './control-channel.js';
import { SessionMcp } from './session-mcp.js';
import { unlessWithdrawn } from './withdrawn-request.js';
import { SessionLogs } from './session-logs.js';
import { settledHistory } from './fork-history.js';
import { commandsUpdate, SLASH_COMMANDS } from './session-options.js';
import { IdleUnload } from './idle-unload.js';
import { reopenSession, type ReopenParts } from './reopen-session.js';
import { makeSession, type MakeParts, type NewSession, type NewSessionMcp } from './make-session.js';

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
  /** The idle-unload sweep (idle-unload.ts), when idleUnloadMs asks for one. */
  private readonly idle?: IdleUnload;
  private readonly mcp: SessionMcp;
  /** What the client is sent of the sessions: live updates, replays, what an open appended. */
  readonly updates: SessionUpdates;
  /** Why sessions that stopped by themselves (SessionEngine.onStop) did, until they are opened again. */
  private readonly stoppedWith = new Map<string, TroupeError>();
  /** Set as the shutdown begins: no session is made (create) or opened (get) from then on. */
  private stopping = false;
  /** The session/new (and forks) being served: the shutdown waits for them to be refused. */
  private readonly creating = new Set<Promise<unknown>>();
  /** What making (make-session.ts) and reopening (reopen-session.ts) a session use of this host. */
  private readonly parts: MakeParts & ReopenParts;

  private constructor(
    private readonly opts: HostOptions,
    readonly index: SessionCatalog,
  ) {
    this.logs = new SessionLogs(opts.home, opts.logger, index);
    this.mcp = new SessionMcp(opts.logger, opts.env, (sessionId) => this.announceCommands(sessionId));
    this.updates = new SessionUpdates({ client: () => this.client, caps: () => this.projectionCaps, ...(opts.updateLines ? { lines: opts.updateLines } : {}) });
    const idleMs = opts.idleUnloadMs ?? 0;
    if (idleMs > 0) {
      this.idle = new IdleUnload(idleMs, {
        live: () => this.live,
        inUse: (sessionId) => this.opening.has(sessionId) || this.mcpStarting(sessionId),
        unload: (sessionId) => this.unload(sessionId, { keepMcp: true }),
      }, opts.logger);
    }
    this.parts = {
      logs: this.logs,
      index,
      logger: opts.logger,
      reporter: opts.reporter,
      env: opts.env,
      config: opts.config,
      mcp: this.mcp,
      stoppedWith: this.stoppedWith,
      deps: (sessionId, log, cwd, dirs) => this.deps(sessionId, log, cwd, dirs),
      track: (engine, log, reportFrom, stopInspecting) => this.track(engine, log, reportFrom, stopInspecting),
      refuseWhileStopping: () => this.refuseWhileStopping(),
      defaultModel: () => this.defaultModel(),
      deletedForGood: (sessionId) => this.deletedForGood(sessionId),
      useMcpServers: (sessionId, cwd, servers, signal, dirs) => this.useMcpServers(sessionId, cwd, servers, signal, dirs),
    };
  }

  /** The session was used now (only counted when idle sessions are unloaded). */
  private touch(sessionId: string): void {
    this.idle?.touch(sessionId);
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

  /** The model of a new session that names none: refused when no turn could use it (usableDefaultModel). */
  defaultModel(): string {
    return usableDefaultModel(this.opts.env, this.opts.config);
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
    init: NewSession,
    history: readonly AgentEvent[] = [],
    mcp?: NewSessionMcp,
  ): Promise<LiveSession> {
    const made = makeSession(this.parts, init, history, mcp);
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
        .then(() => reopenSession(this.parts, sessionId, indexedSeq))
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
  cancel(sessionId: string, cause?: string): void {
    this.live.get(sessionId)?.engine.cancel(cause);
  }

  /**
   * The client's input has ended (request-gate.ts): every session's turn is cancelled and
   * its queued prompts with it, and MCP servers still starting are not waited for, so that the
   * requests in flight are answered soon and the agent exits.
   */
  endOfInput(): void {
    for (const live of this.live.values()) live.engine.cancel('the agent is stopping: its input ended');
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
  async fork(sourceId: string, cwd: string, additionalDirectories: string[], mcp?: NewSessionMcp): Promise<LiveSession> {
    const source = await this.get(sourceId);
    const { history, through } = await settledHistory(source);
    const conv = source.engine.conversation;
    return this.create({ cwd, additionalDirectories, model: conv.model, mode: conv.mode, forkedFrom: { sessionId: sourceId, throughSeq: through } }, history, mcp);
  }

  /**
   * Unloads a session (ACP session/close): cancels its work and frees it, its MCP servers too; it
   * can be loaded again. `keepMcp` (an idle unload): its servers start again when it is reopened.
   */
  async unload(sessionId: string, { keepMcp = false, cause }: { keepMcp?: boolean; cause?: string } = {}): Promise<void> {
    const live = this.live.get(sessionId) ?? (await this.opening.get(sessionId)?.catch(() => undefined));
    if (live) {
      this.live.delete(sessionId);
      this.idle?.forget(sessionId);
      const closed = (async () => {
        try {
          // First the engine: a running MCP call is cancelled as such, then its server stops.
          await live.engine.dispose(cause);
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
    this.idle?.stop();
    await this.recheck?.stop();
    await this.logs.removeSpare();
    // The sessions being made are refused and their logs removed (create) before the process exits;
    // their MCP servers still starting are not waited for.
    this.mcp.endStarts();
    await Promise.allSettled([...this.creating]);
    // The sessions still opening too: each is closed once opened (unload waits for it).
    await Promise.all([...new Set([...this.live.keys(), ...this.opening.keys()])].map((id) => this.unload(id, { cause: 'the agent is shutting down' })));
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

  /**
   * Projects and reports every event from now on; `reportFrom`: events already appended the reporter
   * has not seen. `stopInspecting` ends the report of its transitions (transition-report.ts).
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
