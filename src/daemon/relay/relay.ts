/**
 * The relay: the daemon's agent side of the ACP transport. It answers `initialize` itself, gives
 * each session its own supervised `troupe acp` child (from the warm pool), routes every message by
 * session, answers `session/list` from the session index, and tells clients plainly when a child
 * crashed (`agent_crashed`) or a session failed for good (`session_failed`). spec/daemon.md.
 */
import type { AgentEvent } from '../../core/events.js';
import type { Logger } from '../../core/ports.js';
import type { ReportedEvents } from '../../wire/control-messages.js';
import { isTroupeError, TroupeError } from '../../core/errors.js';
import type { ChildExit } from '../../actors/child-process.actor.js';
import type { ChildPool } from '../../actors/child-pool.actor.js';
import { isFinallyDeleted, type SessionIndex } from '../../store/index.js';
import { AGENT_REQUEST_METHODS } from '../../acp/agent-methods.js';
import { DAEMON_STOPPING } from '../../acp/troupe-meta.js';
import { withTroupeMeta } from './child-wire.js';
import type { AcpAgentSide, AcpClientChannel, AcpCloseReason, JsonRpcRequest } from '../http/acp/acp.types.js';
import type { RelayContext, RelayOptions } from './relay-context.js';
import { RelayConnection } from './relay-connection.js';
import { RelaySession } from './relay-session.js';
import { errorResponse, isRequest, rpcError, type JsonRpcMessage } from './rpc.js';
import { oncePerKey } from '../../core/once-per-key.js';
import { NO_PROCESS_STATES } from '../machine-hub.js';
import { sessionNotFound } from '../quoted-id.js';
import { REVIVED_STATE } from '../../machines/child.machine.js';
import { ForkUnloads } from './fork-unloads.js';
import { SessionStarts } from './session-starts.js';
import { OpeningSessions } from './opening-sessions.js';
import { tailOf } from '../../core/text-cut.js';

export interface RelayObserver {
  /** Durable events of a session; read `reported.events` only when needed (it decodes the burst). */
  events?(sessionId: string, reported: ReportedEvents): void;
  transition?(sessionId: string | undefined, machine: 'session' | 'turn' | 'child', state: string, event: string, at: number): void;
  heartbeat?(sessionId: string | undefined, hb: { rss: number; heapUsed: number; events: number }): void;
  exited?(sessionId: string | undefined, exit: ChildExit, info: { crashed: boolean; willRestart: boolean; failed: boolean }): void;
  slowChild?(sessionId: string | undefined): void;
  /** A client's request was answered, by its session's process or the daemon itself; `method`: one the agent answers, or `other`. */
  answered?(method: string, seconds: number, ok: boolean): void;
  /** The session was deleted: whatever else the daemon keeps of it can go. */
  deleted?(sessionId: string): void;
  /**
   * The session's log holds less than its index entry said (cut while the session rested, found by
   * the process that opened it again): through `heldSeq`. What the daemon heard of beyond it is gone.
   */
  rewound?(sessionId: string, heldSeq: number): void;
}

export interface RelayDeps {
  options: RelayOptions;
  pool: ChildPool;
  index: SessionIndex;
  logger: Logger;
  version: string;
  /** The `initialize` result (the same as a child's, see src/acp/capabilities.ts). */
  initializeResult: Record<string, unknown>;
  observer?: RelayObserver;
}

/** A failed session's refusal: of its ACP requests, and of the management API's cancel and steer. */
const sessionFailed = (sessionId: string) => new TroupeError('session_failed', `session ${sessionId} crashed too often and is no longer restarted`, { sessionId });
const failedResponse = (id: JsonRpcMessage['id'], sessionId: string): JsonRpcMessage => ({ jsonrpc: '2.0', id, error: sessionFailed(sessionId).toRpc() });

/** Methods that may bring a stored session back into a child. */
const REVIVING = new Set(['session/load', 'session/resume']);

export class Relay implements AcpAgentSide, RelayContext {
  readonly sessions = new Map<string, RelaySession>();
  readonly connections = new Set<RelayConnection>();
  /**
   * The MCP servers of sessions released at rest (kept in memory only, like a live session's: their
   * `env` and `headers` may hold secrets), until the session comes back or is deleted.
   */
  private readonly restingServers = new Map<string, unknown[]>();
  /**
   * What the children of sessions released after they failed for good had come to (in this daemon
   * run), until the session is deleted or revived: their listing still shows their restarts (a few
   * numbers each; a failed session is not started again until an operator revives it, so nothing
   * else holds them).
   */
  private readonly failedChildren = new Map<string, { restarts: number; wakes: number }>();
  /** Sessions whose `session/new` is in flight (opening-sessions.ts). */
  private readonly opening: OpeningSessions;
  /**
   * Sessions being deleted: a request for one is answered session_not_found at once. Forwarded, it
   * would wait in a child that is stopping for good, or start a new one that takes the log from
   * under the tombstone.
   */
  private readonly deleting = new Map<string, Promise<void>>();
  /** Forks just made, until their source's process has unloaded them (fork-unloads.ts): a message for one waits for that, a delete too. */
  private readonly forks: ForkUnloads;
  readonly options: RelayOptions;
  readonly pool: ChildPool;
  readonly logger: Logger;
  readonly version: string;
  /** The session index (`session/list` is answered from it, session-list.answer.ts). */
  readonly index: SessionIndex;
  private shuttingDown = false;

  constructor(private readonly deps: RelayDeps) {
    this.options = deps.options;
    this.pool = deps.pool;
    this.logger = deps.logger;
    this.version = deps.version;
    this.index = deps.index;
    this.forks = new ForkUnloads(deps.index, deps.logger);
    this.opening = new OpeningSessions(deps.index, deps.logger);
  }

  async open(channel: AcpClientChannel, initialize: JsonRpcRequest): Promise<RelayConnection> {
    const at = performance.now();
    const params = (initialize.params ?? {}) as { protocolVersion?: unknown; clientCapabilities?: Record<string, unknown> };
    const response: JsonRpcMessage =
      typeof params.protocolVersion === 'number' && Number.isInteger(params.protocolVersion)
        ? { jsonrpc: '2.0', id: initialize.id, result: this.deps.initializeResult }
        : errorResponse(initialize.id, 'invalid_params', 'initialize needs an integer protocolVersion');
    const conn = new RelayConnection(this, channel, response, params.clientCapabilities ?? {});
    this.connections.add(conn);
    // Answered here, and counted as every answer is (the transport sends it).
    this.answered('initialize', (performance.now() - at) / 1000, response.error === undefined);
    return conn;
  }

  /** Sessions waiting to start, one per turn of the loop (session-starts.ts). */
  private readonly starts = new SessionStarts();

  /**
   * `on`: the session the request came on (an HTTP client may send session/new with a header), where
   * its answer goes. Settles once it started: the connection's later messages wait for it, as they
   * did when it started at once, and a failure reaches the transport as any message's does.
   */
  newSession(conn: RelayConnection, msg: JsonRpcMessage, on?: string): Promise<void> {
    return this.starts.inItsTurn(conn, () => this.startSession(conn, msg, on));
  }

  private startSession(conn: RelayConnection, msg: JsonRpcMessage, on?: string): void {
    if (this.refuseCapacity(conn, msg, on)) return;
    const cwd = String((msg.params as { cwd?: unknown })?.cwd ?? '');
    const session = new RelaySession(this, { cwd, caps: conn.capabilities });
    this.opening.add(session);
    session.forward(conn, msg, on);
  }

  /**
   * Any message naming a session: to its child, reviving the session from its log if needed (then
   * settles once the revival started: the connection's later messages wait for it, as for session/new).
   */
  toSession(conn: RelayConnection, sessionId: string, msg: JsonRpcMessage, itsTurn = false): void | Promise<void> {
    // A message for a fork not yet unloaded from its source's process waits for that, and so do its
    // connection's later messages (the transport hands over the next once this settles), as behind a
    // session/new: in the order they came, and a `$/cancel_request` sent meanwhile finds the request
    // (queued for the fork's own process) and withdraws it (-32800). Until 2026-12-07 only the fork's
    // own messages waited: the others overtook it, and such a cancel found nothing to withdraw.
    const fork = this.forks.pending(sessionId);
    if (fork) return fork.then(() => this.toSession(conn, sessionId, msg));
    const request = isRequest(msg);
    // A cancel for a session whose request waits for its turn to start a process goes in its turn
    // behind that request: now it would find no child, and be dropped, and the prompt it was sent to
    // cancel would run to its end (until 2026-12-07).
    if (!request && !itsTurn && this.starts.waiting(sessionId)) return this.starts.inItsTurn(conn, () => this.toSession(conn, sessionId, msg, true));
    if (this.deleting.has(sessionId)) {
      if (request) void conn.answer(msg, errorResponse(msg.id, 'session_not_found', `session ${sessionId} is being deleted`, { sessionId, deleted: true }), sessionId);
      return;
    }
    let session = this.sessions.get(sessionId);
    const entry = session ? undefined : this.index.get(sessionId);
    if (!session) {
      if (!entry || entry.status === 'deleted') {
        if (request) void conn.answer(msg, errorResponse(msg.id, 'session_not_found', `no session ${sessionId}`, { sessionId }), sessionId);
        return;
      }
      if (!request) return; // a notification (cancel) for a session with no child: nothing runs
      if (this.refuseUnknownMethod(conn, sessionId, msg)) return;
      // Failed for good, in this daemon run or an earlier one: never started again (until revived).
      if (entry.status === 'failed') return void conn.answer(msg, failedResponse(msg.id, sessionId), sessionId);
      if (this.refuseCapacity(conn, msg, sessionId)) return;
    } else if (session.child.failed) {
      if (request) void conn.answer(msg, failedResponse(msg.id, sessionId), sessionId);
      return;
    } else if (request && msg.method === 'session/close' && session.closeFor(conn, msg, sessionId)) {
      // Another connection stays attached: the close is this connection's only, answered here (no
      // child is woken or sent it: RelaySession.closeFor). A request of this connection that waits to
      // start the session's process came before it and has started by now: the connection's later
      // messages wait for that (newSession, startInItsTurn), so the close withdraws it.
      return;
    } else if (!session.live && request && (this.refuseUnknownMethod(conn, sessionId, msg) || this.refuseCapacity(conn, msg, sessionId))) return;
    // A request that starts a process (a stored session's revival, or a wake of one held with no
    // child: stopped idle or closed, a client still attached) does so in its turn, where all of this
    // is checked again: a delete, a failure, the capacity or another request that started it (the
    // turns keep the order they came in) may come first. Clients come back in bursts: every client of
    // a restarted daemon reloads its sessions, and clients return to their idle ones at once.
    if (request && !session?.live && !itsTurn) return this.starts.startInItsTurn(conn, sessionId, () => this.toSession(conn, sessionId, msg, true));
    if (!session) {
      // A session released at rest had servers its client named: a request that names none (the CLI's
      // resume) gets them back, as it would from a child that had stayed (spec/tools.md §7).
      const servers = this.restingServers.get(sessionId);
      const named = Array.isArray((msg.params as { mcpServers?: unknown } | undefined)?.mcpServers);
      const resumeOnStart = !REVIVING.has(String(msg.method)) || (servers !== undefined && !named);
      session = new RelaySession(this, { cwd: entry!.cwd, sessionId, caps: conn.capabilities, resumeOnStart, ...(servers ? { mcpServers: servers } : {}) });
      this.restingServers.delete(sessionId);
      this.sessions.set(sessionId, session);
    }
    // A notification (cancel) for a session whose child was stopped: nothing runs there to act on,
    // and waking a child for it would also pass --max-sessions, which only requests are checked against.
    if (!request) return void (session.live && session.deliver(msg));
    // The process this request starts (a wake, or the next one of a session stopping idle or closed)
    // serves the capabilities of its connection, as a revival serves its reviver's. Until 2026-12-07
    // it served those of the client that had made the session: an editor that read files through its
    // buffers made it and went, and a client that reads none woke it; the reads were asked of that
    // client, and failed.
    if (!session.live || session.child.state === 'stopping') session.caps = conn.capabilities;
    // On trial only for a load or resume (PendingRequests.ended): a prompt (or any other request)
    // from a connection that never loaded the session keeps it attached even if it fails, with the
    // crash catch-up of a prompt lost to a crash (review of 2026-12-07: a failed prompt detached it).
    const joins = REVIVING.has(String(msg.method)) && !session.attached.has(conn);
    session.attach(conn, msg.method === 'session/load');
    session.forward(conn, msg, sessionId, joins);
  }

  /** `$/cancel_request` of `conn` for its session/new in flight (OpeningSessions.withdraw); `on`: only one sent on that session's stream. */
  withdrawNew(conn: RelayConnection, requestId: unknown, on?: string): void {
    this.opening.withdraw(conn, requestId, on);
  }

  /** The session/news of `conn` under `requestId` in flight (OpeningSessions.holding), each to be withdrawn alone with `withdrawFrom`. */
  newSessionsHolding(conn: RelayConnection, requestId: unknown) {
    return this.opening.holding(conn, requestId).map(({ session, on }) => ({ on, withdraw: () => this.opening.withdrawFrom(session, conn, requestId, on) }));
  }

  /**
   * A request no child answers but with -32601 is answered so here when the session has no child:
   * starting one (a process, its memory, a slot under --max-sessions) would be for nothing.
   */
  private refuseUnknownMethod(conn: RelayConnection, sessionId: string, msg: JsonRpcMessage): boolean {
    if (AGENT_REQUEST_METHODS.has(String(msg.method))) return false;
    void conn.answer(msg, errorResponse(msg.id, 'method_not_found', `method not found: ${String(msg.method)}`, { method: msg.method }), sessionId);
    return true;
  }

  /**
   * Stops the session's child and tombstones it. Unknown ids succeed (ACP session/delete). The
   * clients attached to it are told (`_troupe/session_deleted`): a client that only follows it
   * (troupe attach) would otherwise wait for updates that never come.
   */
  deleteById(sessionId: string): Promise<void> {
    // A second delete of the same session (two clients, or a retry) is the first one's.
    return oncePerKey(this.deleting, sessionId, () => this.deleteNow(sessionId));
  }

  private async deleteNow(sessionId: string): Promise<void> {
    await this.forks.pending(sessionId);
    const session = this.sessions.get(sessionId);
    const attached = session ? [...session.attached.keys()] : [];
    if (session) {
      session.beginDelete();
      await session.child.stop('deleted');
      if (this.sessions.get(sessionId) === session) this.sessions.delete(sessionId);
      // What waited for the stopping child (sent before the delete began) goes nowhere now.
      session.refuseWaiting(rpcError('session_not_found', `session ${sessionId} was deleted`, { sessionId, deleted: true }));
      session.child.dispose();
    }
    this.restingServers.delete(sessionId);
    this.failedChildren.delete(sessionId);
    const entry = this.index.get(sessionId);
    // One deleted because its log was gone is deleted for good now: it does not come back with its log.
    if (entry && !isFinallyDeleted(entry)) await this.index.tombstone(sessionId);
    // After that notice, nothing of the session comes again: its stream on each of them keeps nothing
    // for resume, and goes once its client leaves it (as the deleting client's does). Until
    // 2026-12-07 it kept the session's output until the connection ended.
    for (const conn of attached) {
      void conn.send({ jsonrpc: '2.0', method: '_troupe/session_deleted', params: { sessionId } });
      conn.channel.releaseSession(sessionId);
    }
    this.deps.observer?.deleted?.(sessionId);
  }

  /**
   * An operator's revive of a session that failed for good (management API, spec/daemon.md
   * §Supervision): its failed status is cleared, in the index and in its child if the daemon holds
   * it, with its restart window. Nothing starts now: its next message starts it from its log, as
   * after an idle stop. Throws session_not_found, or session_not_failed for one that has not failed.
   */
  async revive(sessionId: string): Promise<void> {
    if (this.deleting.has(sessionId)) throw new TroupeError('session_not_found', `session ${sessionId} is being deleted`, { sessionId, deleted: true });
    // An editor's own agent on this home may have written the index since.
    await this.index.refreshIfChanged();
    const entry = this.index.get(sessionId);
    const session = this.sessions.get(sessionId);
    // The management API's revive: its id comes from a URL, of any length (quoted-id.ts).
    if (!session && (!entry || entry.status === 'deleted')) throw sessionNotFound(sessionId);
    if (!this.failed(sessionId)) throw new TroupeError('session_not_failed', `session ${sessionId} has not failed (its process is ${session?.child.state ?? 'not running'})`, { sessionId });
    await this.index.clearFailed(sessionId);
    // Checked again: a delete may have come while the index was written, or the session been released.
    if (session && this.sessions.get(sessionId) === session) session.child.revive();
    // Released after it failed, its machine is gone: its REVIVE is told here, or the hub's states (the
    // API, the inspector) said `child: failed` until its next message (until 2026-12-07).
    else if (this.failedChildren.has(sessionId)) this.transition(sessionId, 'child', REVIVED_STATE, 'REVIVE', Date.now());
    this.failedChildren.delete(sessionId);
    this.logger.info('session revived by an operator', { sessionId });
  }

  /** Whether the session failed for good (until revived): its child's machine says while held, else its index status. */
  failed(sessionId: string): boolean {
    const session = this.sessions.get(sessionId);
    return session ? session.child.failed : this.index.get(sessionId)?.status === 'failed';
  }

  /** Throws session_failed for a failed session: what acts on its process is refused, as its ACP requests are. */
  refuseFailed(sessionId: string): void {
    if (this.failed(sessionId)) throw sessionFailed(sessionId);
  }

  /**
   * `POST /v1/sessions/:id/cancel`: a turn of the session runs (`running`, its machine's state) or a
   * client's prompt waits for one (taken and not answered: queued for a process that starts, a wake
   * or a restart, or sent before the process said it runs), looked at once the requests waiting for
   * their turn to start its process have started; then `session/cancel` goes to its process behind
   * them, as a client's would. Until 2026-12-07 the route asked the machine alone: a cancel while a
   * prompt woke an idle-stopped session was answered `cancelled: false`, and the prompt ran to its end.
   */
  async cancelTurn(sessionId: string, running: () => boolean): Promise<boolean> {
    if (this.starts.waiting(sessionId)) await this.starts.afterWaiting();
    const session = this.sessions.get(sessionId);
    if (!session?.live || !(running() || session.prompted)) return false;
    session.deliver({ jsonrpc: '2.0', method: 'session/cancel', params: { sessionId } });
    return true;
  }

  /** `sessions`: the ones the connection was attached to, now detached. */
  connectionClosed(conn: RelayConnection, reason: AcpCloseReason, sessions: readonly RelaySession[]): void {
    this.connections.delete(conn);
    for (const s of sessions) this.release(s);
    this.logger.debug('client connection closed', { connectionId: conn.channel.id, reason });
  }

  /** Cancels every running turn, then stops every child (stdin end → SIGTERM → SIGKILL). */
  async shutdown(): Promise<void> {
    this.shuttingDown = true;
    // Marked as the daemon's own: the turn it cuts off says the daemon shut down, not the user.
    for (const [sessionId, s] of this.sessions) if (s.live) s.deliver({ jsonrpc: '2.0', method: 'session/cancel', params: withTroupeMeta({ sessionId }, { [DAEMON_STOPPING]: true }) });
    // The pool closes first: while the children stop, each one's exit frees a spawn slot, and an
    // open pool would spawn a child for a session/new already given up, which nothing then waits for.
    const pool = this.pool.close(this.options.childSpec.shutdownMs);
    await Promise.all([...this.sessions.values(), ...this.opening.all()].map((s) => s.child.stop('shutdown')));
    await pool;
  }

  /**
   * Forgets a session at rest (RelaySession.resting): the daemon outlives its sessions, and one kept
   * for every session ever closed or idle-stopped would grow it without bound. The next message that
   * names it brings it back from the index and its log (toSession), as after a daemon restart.
   */
  private release(session: RelaySession): void {
    const id = session.sessionId;
    if (!id || this.sessions.get(id) !== session || !session.resting) return;
    this.sessions.delete(id);
    if (session.mcpServers.length) this.restingServers.set(id, session.mcpServers);
    if (session.child.failed) this.failedChildren.set(id, { restarts: session.child.restarts, wakes: session.child.wakes });
    session.child.dispose();
  }

  /**
   * A session's child as the management API lists it: the live one's, or what the child of a session
   * released after it failed came to (its pid gone); undefined for a session no child holds.
   */
  childOf(sessionId: string): { state: string; pid: number | null; restarts: number; wakes: number } | undefined {
    const child = this.sessions.get(sessionId)?.child;
    // The pid only while a process runs the session: a dead child's may be another process's by now,
    // and an operator reading it off `troupe sessions show` would signal that one.
    if (child) return { state: child.state, pid: NO_PROCESS_STATES.has(child.state) ? null : (child.pid ?? null), restarts: child.restarts, wakes: child.wakes };
    const failed = this.failedChildren.get(sessionId);
    return failed && { state: 'failed', pid: null, ...failed };
  }

  liveCount(): number {
    let n = 0;
    for (const s of this.sessions.values()) if (s.live) n++;
    return n;
  }

  // ── RelayContext ───────────────────────────────────────────────────────────────────────────────

  registered(session: RelaySession, sessionId: string, result: Record<string, unknown>): void {
    this.opening.delete(session);
    session.named(sessionId);
    this.sessions.set(sessionId, session);
    this.opening.adopt(session, sessionId, result);
  }

  /** A fork is a session of its own, with the servers the fork named; its source's process unloads it first (fork-unloads.ts). */
  forked(source: RelaySession, sessionId: string, mcpServers: unknown[]): void {
    if (mcpServers.length) this.restingServers.set(sessionId, mcpServers);
    this.forks.unload(source, sessionId);
  }

  unregistered(session: RelaySession): void {
    this.opening.giveUp(session);
  }

  events(_session: RelaySession, sessionId: string, reported: ReportedEvents): void {
    // The index changes at these events only (the child names them: the burst is not decoded for
    // them); writing it for every streamed chunk would rewrite the whole file (every session's
    // entry) hundreds of times a second.
    if (reported.indexed.length) void this.index.applyEvents(reported.indexed).catch((err) => this.logger.error('index update failed', { sessionId, error: String(err) }));
    this.deps.observer?.events?.(sessionId, reported);
  }

  indexedSeq(sessionId: string): number | undefined {
    return this.index.get(sessionId)?.lastSeq;
  }

  indexed(sessionId: string, events: AgentEvent[], rewound?: number): void {
    // A stored session's log may hold what a daemon killed before its delayed index write never
    // wrote (a title, a close), or what a killed child appended and never reported; or less than
    // the entry says (`rewound`: a machine crash, a damaged tail cut), and the entry follows it.
    const index = this.index;
    if (rewound !== undefined) this.deps.observer?.rewound?.(sessionId, rewound);
    void index.follow(sessionId, { events, ...(rewound === undefined ? {} : { rewound }) }).catch((err) => this.logger.error('index update failed', { sessionId, error: String(err) }));
  }

  transition(sessionId: string | undefined, machine: 'session' | 'turn' | 'child', state: string, event: string, at: number): void {
    this.deps.observer?.transition?.(sessionId, machine, state, event, at);
  }

  heartbeat(session: RelaySession, hb: { rss: number; heapUsed: number; events: number }): void {
    this.deps.observer?.heartbeat?.(session.sessionId, hb);
  }

  slowChild(session: RelaySession): void {
    this.deps.observer?.slowChild?.(session.sessionId);
  }

  answered(method: string, seconds: number, ok: boolean): void {
    // A bounded label set: any other method a client sends is one series.
    this.deps.observer?.answered?.(AGENT_REQUEST_METHODS.has(method) ? method : 'other', seconds, ok);
  }

  exited(session: RelaySession, exit: ChildExit, info: { crashed: boolean; willRestart: boolean; failed: boolean }): void {
    const sessionId = session.sessionId;
    // With its last words: a child that cannot start (or fails an assertion) says why on stderr only.
    if (info.crashed) this.logger.warn('session child crashed', { sessionId, pid: session.child.pid, code: exit.code, signal: exit.signal, reason: exit.reason, willRestart: info.willRestart, ...(exit.stderrTail ? { stderr: tailOf(exit.stderrTail, 500) } : {}) });
    if (info.failed && sessionId) {
      this.logger.error('session failed: restart intensity exceeded', { sessionId });
      void this.index.setStatus(sessionId, 'failed').catch(() => undefined);
      for (const conn of session.attached.keys()) void conn.send({ jsonrpc: '2.0', method: '_troupe/session_failed', params: { sessionId, reason: 'restart intensity exceeded' } });
    }
    this.deps.observer?.exited?.(sessionId, exit, info);
    // A child that died in its session/new (answered agent_crashed) serves no session anyone knows:
    // it is not restarted to wait for nothing (a session it made is in the index and revives). One
    // that died before the session/new reached it (while it booted) is restarted for it, as for any
    // queued request; stopped, it would leave that request unanswered for good.
    if (!sessionId && (info.failed || !session.awaitsAnswers) && this.opening.delete(session)) {
      session.abandon();
      queueMicrotask(() => void session.child.stop('deleted'));
    }
    // Closed, idle-stopped or failed, with no client: nothing is left to hold (a restart is not at rest).
    queueMicrotask(() => this.release(session));
  }

  /** `sessionId`: the session the request was sent on (none for session/new), where the refusal goes. */
  private refuseCapacity(conn: RelayConnection, msg: JsonRpcMessage, sessionId?: string): boolean {
    if (this.shuttingDown) {
      void conn.answer(msg, errorResponse(msg.id, 'capacity_exceeded', 'the daemon is shutting down'), sessionId);
      return true;
    }
    if (this.liveCount() + this.opening.size < this.options.maxLiveSessions) return false;
    void conn.answer(msg, errorResponse(msg.id, 'capacity_exceeded', `the daemon already runs ${this.options.maxLiveSessions} live session${this.options.maxLiveSessions === 1 ? '' : 's'} (--max-sessions)`, { limit: this.options.maxLiveSessions }), sessionId);
    return true;
  }
}
