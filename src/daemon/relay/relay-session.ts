/**
 * One session as the relay sees it: its supervised child, the connections attached to it, and the
 * id maps that make one child look like one agent to many clients. Requests from clients get child-
 * side ids (so two clients' `id: 1` never collide); requests from the child get connection-unique
 * ids; updates go to every attached connection that has not had them yet (update-fan-out.ts).
 */
import type { TroupeError } from '../../core/errors.js';
import type { ControlMessage } from '../../wire/control-messages.js';
import type { ChildExit, ChildProcessHandle } from '../../actors/child-process.actor.js';
import { SupervisedChild, type BootKind } from '../../actors/supervised-child.actor.js';
import type { RelayContext } from './relay-context.js';
import type { RelayConnection } from './relay-connection.js';
import { rpcError, type JsonRpcMessage } from './rpc.js';
import { REPLAY_STARTED } from '../../acp/troupe-meta.js';
import { childInitializeParams, childResumeParams, OPENING, tagged, untaggedEcho, withClientCaps } from './child-wire.js';
import { CrashCatchUp } from './crash-catch-up.js';
import { UnnamedTransitions } from './unnamed-transitions.js';
import { UpdateFanOut } from './update-fan-out.js';
import { OwnRequests } from './own-requests.js';
import { ChildRequests } from './child-requests.js';
import { ClientAsks } from './client-asks.js';
import { ChildOffer } from './child-offer.js';
import { CloseStop } from './close-stop.js';
import { PendingRequests, serversAfter } from './pending-requests.js';
import { TerminalViews } from './terminal-views.js';

export class RelaySession {
  sessionId?: string;
  cwd: string;
  /** What its process reports before the session has its id (unnamed-transitions.ts). */
  private readonly unnamed = new UnnamedTransitions();
  /** Who is sent which update: the attached connections and their marks. */
  private readonly fanOut: UpdateFanOut;
  /** Whose client terminal each terminal id is: only that client is sent it (terminal-views.ts). */
  private readonly terminals = new TerminalViews();
  /** The client requests as the child has them: in turn, withdrawn, refused (child-requests.ts). */
  private readonly requests: ChildRequests;
  private readonly pending = new PendingRequests(() => this.sessionId, (method, seconds, ok) => this.ctx.answered(method, seconds, ok), (conn) => this.unattach(conn));
  /** What a process replacing a crashed one is told (crash-catch-up.ts). */
  private readonly catchUp = new CrashCatchUp();
  private readonly internal = new OwnRequests();
  /** The process's requests to clients, until answered or withdrawn (client-asks.ts). */
  private readonly asked = new ClientAsks(this, () => [...this.requests.prompters(), ...[...this.attached.keys()].reverse()], (msg) => this.terminals.ownerFor(msg));
  private nextId = 1;
  /** The capabilities of the connection that created, revived or woke the session (Relay.toSession). */
  caps: Record<string, unknown> = {};
  /** What the process is told its clients offer: `caps`, with files and a terminal as those attached serve them. */
  private readonly offer = new ChildOffer(() => this.caps, () => this.attached.keys(), () => this.child);
  /**
   * The MCP servers the session's client named last (session/new, load or resume): a child started
   * again (after a crash or an idle stop) resumes the session with them, so its tools stay.
   */
  mcpServers: unknown[] = [];
  readonly child: SupervisedChild;
  /** The latest heartbeat of the process running the session (none while none does). */
  health?: { rss: number; heapUsed: number; events: number; at: number };
  /** Revived by a message other than load/resume (or by one withdrawn unsent): the first boot must resume the session too. */
  private resumeOnStart: boolean;

  constructor(
    private readonly ctx: RelayContext,
    init: { cwd: string; sessionId?: string; caps: Record<string, unknown>; resumeOnStart?: boolean; mcpServers?: unknown[] },
  ) {
    this.resumeOnStart = init.resumeOnStart === true;
    this.mcpServers = init.mcpServers ?? [];
    this.cwd = init.cwd;
    this.sessionId = init.sessionId;
    this.caps = init.caps;
    this.fanOut = new UpdateFanOut(() => this.sessionId, ctx.logger, this.terminals);
    this.child = new SupervisedChild({
      spec: ctx.options.childSpec,
      idleMs: ctx.options.idleMs,
      heartbeatTimeoutMs: ctx.options.heartbeatTimeoutMs,
      startupTimeoutMs: ctx.options.startupTimeoutMs,
      acquire: () => ctx.pool.take(),
      boot: (proc, kind) => this.boot(proc, kind),
      onMessage: (m) => this.fromChild(m),
      onUpdates: (batch) => this.fanOut.updates(batch, (prompter) => this.senderOf(prompter)),
      onControl: (c) => this.control(c),
      onExit: (e, info) => this.childExited(e, info),
      onSpawnFailed: (err) => this.spawnFailed(err),
      onTransition: (state, event, at) => {
        if (this.sessionId) ctx.transition(this.sessionId, 'child', state, event, at);
        else this.unnamed.holdChild(state, event, at);
      },
      onSlow: () => ctx.slowChild(this),
      quiet: () => this.pending.size === 0 && this.internal.size === 0,
      logger: ctx.logger,
    });
    this.requests = new ChildRequests(this.child, this.pending, this.fanOut, () => (this.resumeOnStart = true));
  }

  /** The session has its id (its session/new was answered). */
  named(sessionId: string): void {
    this.sessionId = sessionId;
    this.catchUp.historySent(0);
    this.unnamed.named(sessionId, (...t) => this.ctx.transition(...t));
  }

  /** The session/new failed: the session its process may have begun is told to no one. */
  abandon(): void {
    this.unnamed.abandon();
  }

  /**
   * Attaches a connection. With `replay` (session/load) it is sent every update again from seq 1;
   * otherwise only updates newer than what the session has already sent anyone.
   */
  attach(conn: RelayConnection, replay = false): void {
    // A connection gone before its session/new was answered: attached, it would hold the session forever.
    if (conn.isClosed) return;
    // Back before its close's withdrawn requests were all answered: its stream serves the session again.
    this.pending.back(conn);
    this.fanOut.attach(conn, replay);
    conn.sessions.add(this);
    this.offer.tell();
  }

  /** The connections attached, with the furthest update each has been sent. */
  get attached(): ReadonlyMap<RelayConnection, number> {
    return this.fanOut.attached;
  }

  detach(conn: RelayConnection): void {
    this.fanOut.detach(conn);
    this.pending.forget(conn);
    conn.sessions.delete(this);
    this.requests.forget(conn);
    this.terminals.forget(conn);
    this.offer.tell();
  }

  /**
   * `conn` uses the session no more (it closed it while another stays attached, or a request that
   * attached it did not succeed: PendingRequests.ended): detached, and what the process asked of it
   * is asked of another client (RelayConnection.leftSession).
   */
  private unattach(conn: RelayConnection): void {
    this.detach(conn);
    conn.leftSession(this);
  }

  /**
   * A `session/close` from `conn` (`msg`, answered on `answering`) while another open connection
   * stays attached: it ends `conn`'s use of the session only (spec/daemon.md §Relay, session/close is
   * per connection). `conn` is detached and answered `{}` here; its requests still in the child (a
   * running or queued prompt, a load) are withdrawn as its own `$/cancel_request` would withdraw them,
   * and answered to it as the child answers them (cancelled). The child is not sent the close: it
   * would cancel the running turn whoever started it, end the other clients' queued prompts and
   * unload the session under them. Until 2026-12-07 it was sent, and an editor tab closed on a
   * session a CLI ran cancelled the CLI's turn. False (nothing done) when `conn` is the last one
   * attached: the close goes to the child as before, which cancels, unloads, and stops (Close stop).
   */
  closeFor(conn: RelayConnection, msg: JsonRpcMessage, answering: string): boolean {
    if (![...this.attached.keys()].some((c) => c !== conn && !c.isClosed)) return false;
    this.unattach(conn);
    for (const [id, p] of this.pending) if (p.conn === conn) this.requests.withdraw(id, p);
    void conn.answer(msg, { jsonrpc: '2.0', id: msg.id, result: {} }, answering);
    // Its session stream goes once the answers of those are sent.
    this.pending.leave(conn);
    return true;
  }

  /** When a closed session's child stops (close-stop.ts). */
  private readonly closeStop = new CloseStop();

  private stopIfClosed(): void {
    if (this.closeStop.due(this.pending.size)) void this.child.stop('closed');
  }

  /**
   * Forwards a client request to the child under a child-side id. `answering`: the session the
   * client sent it on (none for a session/new without one), where its answer goes. `joined`: `conn`
   * was attached for it, not before (PendingRequests.ended).
   */
  forward(conn: RelayConnection, msg: JsonRpcMessage, answering: string | undefined, joined = false): void {
    const id = this.nextId++;
    this.closeStop.forwarded(id);
    const method = String(msg.method);
    const named = (msg.params as { mcpServers?: unknown } | undefined)?.mcpServers;
    this.pending.set(id, {
      conn,
      clientId: msg.id,
      answering,
      method,
      at: performance.now(),
      ...(method === 'session/fork' ? { forkServers: Array.isArray(named) ? named : [] } : {}),
      ...(OPENING.has(method) && Array.isArray(named) ? { opensWith: named } : {}),
    });
    if (joined) this.pending.joined(conn);
    const { turnId, ...tags } = tagged(method, msg.params, id, () => (answering === undefined ? undefined : this.ctx.indexedSeq(answering)));
    if (turnId) this.pending.get(id)!.turnId = turnId;
    const forChild = { ...msg, id, ...tags };
    this.requests.send(id, method, conn, forChild);
  }

  /**
   * `$/cancel_request` of a client, for its request with that id if it is still pending
   * (ChildRequests.withdraw); whether it was. `answering`: only one the client sent on that session's
   * stream (a session/new sent with another session's header; OpeningSessions.withdraw).
   */
  withdraw(conn: RelayConnection, clientId: unknown, answering?: string): boolean {
    let found = false;
    for (const [id, p] of this.pending) {
      if (p.conn !== conn || p.clientId !== clientId) continue;
      if (answering !== undefined && p.answering !== answering) continue;
      found = true;
      this.requests.withdraw(id, p);
    }
    return found;
  }

  /** Whether a request of `conn` with this client id is pending here, and the stream it was sent on (`on`: its session, none for a session/new sent without one). */
  pendingFrom(conn: RelayConnection, clientId: unknown): { on: string | undefined } | undefined {
    for (const p of this.pending.values()) if (p.conn === conn && p.clientId === clientId) return { on: p.answering };
    return undefined;
  }

  /** A client notification, or a client's answer to a child request (already re-identified). */
  deliver(msg: JsonRpcMessage): void {
    if (msg.method === 'session/cancel') this.requests.cancelQueuedPrompts();
    this.child.send(msg);
  }

  /** A request of the daemon's own (boot, management API); sent now if the child serves, else queued. */
  request(method: string, params: unknown, proc?: ChildProcessHandle): Promise<any> {
    const id = this.nextId++;
    const answer = this.internal.add(id);
    const msg = { jsonrpc: '2.0', id, method, params };
    if (proc) void proc.send(msg);
    else this.child.send(msg);
    return answer;
  }

  /** A client request of this session is still unanswered (one queued for the next process included). */
  get awaitsAnswers(): boolean {
    return this.pending.size > 0;
  }

  /** A client's prompt is unanswered: its turn runs, or waits in the process or for it (queued while it starts). */
  get prompted(): boolean {
    return this.requests.prompted;
  }

  get live(): boolean {
    const s = this.child.state;
    return s !== 'idleStopped' && s !== 'exited' && s !== 'failed';
  }

  /**
   * Nothing of the session runs or waits in the daemon: no process (stopped idle or closed, or
   * failed for good), no client attached, no request in flight. Its log and index entry are all it
   * is then (a failed one's index status answers `session_failed` from then on).
   */
  get resting(): boolean {
    return !this.live && this.attached.size === 0 && this.pending.size === 0 && this.internal.size === 0;
  }

  private async boot(proc: ChildProcessHandle, kind: BootKind): Promise<void> {
    // A pooled child was initialized while it waited, before any client was known: the first request
    // that opens the session in it carries the client's capabilities instead.
    const ahead = (await proc.initializedAhead) === true;
    if (!ahead) {
      const init = await this.request('initialize', childInitializeParams(this.offer.toStart(), this.ctx.version), proc);
      if (init?.protocolVersion !== 1) throw new Error('the child did not answer initialize with protocol 1');
    }
    // A fresh child for a session that exists resumes it from its log, without replay, with the
    // additional directories its log holds (no client asked to change them: src/acp/session-directories.ts).
    if ((kind !== 'start' || this.resumeOnStart) && this.sessionId) {
      // After a crash, with where its clients stand: the new process sends what its log holds beyond
      // (crash-catch-up.ts). Not otherwise: a clean stop sent everything.
      const sent = kind === 'restart' ? this.catchUp.resumeFields(this.fanOut.sentSeq) : {};
      const params = childResumeParams(this.sessionId, this.cwd, this.mcpServers, this.ctx.indexedSeq(this.sessionId), sent);
      this.catchUp.opened(await this.request('session/resume', ahead ? withClientCaps(params, this.offer.toStart()) : params, proc));
      this.catchUp.caughtUp();
    } else if (ahead) this.child.amendFirstQueued((m) => (OPENING.has(String(m.method)) ? { ...m, params: withClientCaps(m.params, this.offer.toStart()) } : undefined));
    // Connections that came or went while it booted: told once it serves (queued until then).
    const told = this.offer.changed();
    if (told) this.child.send(told);
  }

  /** The connection that sent the prompt of child-side id `prompter` (still unanswered, or lost in a crash). */
  private senderOf(prompter: number): RelayConnection | undefined {
    return this.pending.get(prompter)?.conn ?? this.catchUp.senderOf(prompter);
  }

  private fromChild(msg: JsonRpcMessage): void {
    const hasId = msg.id !== undefined && msg.id !== null;
    if (typeof msg.method === 'string') {
      if (hasId) this.requestToClient(msg);
      else this.notificationToClients(msg);
      return;
    }
    if (!hasId) return;
    const id = Number(msg.id);
    if (this.internal.answer(id, msg)) return;
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    this.pending.answered(p, msg.error === undefined);
    this.requests.settled(id, p.method);
    if (p.method === 'session/resume' && msg.result) msg = { ...msg, result: this.catchUp.opened(msg.result) };
    // The servers as the child has them now (serversAfter), to resume a later child with: those it
    // took, not those it refused (a bad list: the session keeps what it had), none after a request
    // withdrawn while they started. Until 2026-12-07 they were taken as the request went, and the
    // next child's resume with them was refused in turn: a boot failure each time, and the session
    // failed for good at its next wake or restart.
    this.mcpServers = serversAfter(p, msg, this.mcpServers);
    if (p.method === 'session/new') {
      const sid = (msg.result as { sessionId?: unknown } | undefined)?.sessionId;
      if (typeof sid === 'string') {
        this.ctx.registered(this, sid, msg.result as Record<string, unknown>);
        this.attach(p.conn, true);
      } else this.ctx.unregistered(this);
    }
    const closed = p.method === 'session/close' && !msg.error;
    if (closed) {
      // The client is done with the session: it no longer holds it (an editor's one long-lived
      // connection closes many sessions), and the session can rest once its child has stopped.
      this.detach(p.conn);
      this.closeStop.closed(id);
    }
    if (p.method === 'session/fork' && !msg.error) {
      const sid = (msg.result as { sessionId?: unknown } | undefined)?.sessionId;
      if (typeof sid === 'string') this.ctx.forked(this, sid, p.forkServers ?? []);
    }
    void p.conn.send({ ...msg, id: p.clientId }, p.answering);
    // After its answer is queued: the stream keeps nothing of a session its client is done with.
    if (closed && this.sessionId) p.conn.channel.releaseSession(this.sessionId);
    else this.pending.ended(p.conn, msg.error === undefined);
    this.stopIfClosed();
  }

  private requestToClient(msg: JsonRpcMessage): void {
    this.asked.ask(msg, this.child.proc, 'no client is attached to this session');
    this.terminals.asked(msg);
  }

  /** `conn` went away without answering the process's request `msg` (client-asks.ts). */
  askedGone(conn: RelayConnection, msg: JsonRpcMessage): void {
    this.asked.gone(conn, msg);
  }

  /**
   * `conn`'s answer (`msg`, under the process's id) to a request of the process: to the process that
   * asked, if it still waits for it from `conn`. Sent to that process only, never queued: a queued
   * answer would reach the next process, which may ask something under the same id. `method`: what
   * the process asked (a terminal it created is `conn`'s, terminal-views.ts).
   */
  clientAnswered(conn: RelayConnection, msg: JsonRpcMessage, method: string): void {
    // The process that asked, still running: it is the session's current one, as the requests of a
    // process that exited were withdrawn with it.
    const proc = this.asked.answered(msg.id, conn);
    if (!proc) return;
    const terminalId = method === 'terminal/create' ? (msg.result as { terminalId?: unknown } | undefined)?.terminalId : undefined;
    if (typeof terminalId === 'string') this.terminals.created(terminalId, conn);
    void proc.send(msg);
  }

  private notificationToClients(msg: JsonRpcMessage): void {
    if (msg.method === '$/cancel_request') {
      // The process is answered -32800 (ClientAsks.withdraw), the client asked told.
      const id = (msg.params as { requestId?: unknown } | undefined)?.requestId;
      this.asked.withdraw(id)?.cancelForwarded(this, id);
      return;
    }
    // The daemon's own (it asked for it: `tagged`); no client is sent it.
    if (msg.method === REPLAY_STARTED) {
      const through = (msg.params as { through?: unknown } | undefined)?.through;
      if (this.requests.loads.replaying && typeof through === 'number') {
        this.fanOut.replayStarted(through);
        this.catchUp.historySent(through);
      }
      return;
    }
    // A prompt's echo, parsed (its lines are relayed unparsed: UpdateFanOut.updates): not sent to its sender.
    const echo = untaggedEcho(msg);
    if (echo) this.fanOut.notification(echo.msg, this.senderOf(echo.prompter));
    else this.fanOut.notification(msg);
  }

  private control(c: ControlMessage): void {
    if (c.t === 'events') this.ctx.events(this, c.sessionId, c);
    else if (c.t === 'indexed') this.ctx.indexed(c.sessionId, c.events, c.rewound);
    // A transition is of the session the process names, as its events are: a new session's first
    // state comes before its id is known here (its session/new answer follows it: held until then,
    // see UnnamedTransitions), and a fork is made in its source's process (taken for the source's, the
    // fork's first state would reset the source's).
    else if (c.t === 'transition') {
      if (this.sessionId) this.ctx.transition(c.sessionId, c.machine, c.state, c.event, c.at);
      else this.unnamed.hold(c);
    }
    else if (c.t === 'hb') {
      this.health = { rss: c.rss, heapUsed: c.heapUsed, events: c.events, at: c.at };
      this.ctx.heartbeat(this, c);
    }
  }

  /** Set when the session is deleted (its child is stopped for it): what it still had is told so. */
  deleting = false;

  /**
   * The session is being deleted, and its process is about to be stopped: every request the process
   * was sent and has not answered is answered now, `session_not_found` (deleted). Not left to the
   * process's exit: stopped by the end of its stdin, a process answers its cancelled prompts
   * `cancelled` on its way out (docs/editors.md), which would tell a client that its turn was
   * cancelled rather than its session deleted. The answers that still come from it find nothing waiting.
   */
  beginDelete(): void {
    this.deleting = true;
    this.requests.refuseSent(this.deletedError(), this.child.queuedRequestIds());
  }

  private deletedError(): ReturnType<typeof rpcError> {
    return rpcError('session_not_found', `session ${this.sessionId} was deleted while this request ran`, { sessionId: this.sessionId, deleted: true });
  }

  private childExited(exit: ChildExit, info: { crashed: boolean; willRestart: boolean; failed: boolean }): void {
    this.closeStop.processGone();
    // And its memory with it: shown as the session's (its detail, troupe_children_rss_bytes while a
    // restart is under way), a dead process's last heartbeat read as a process that still runs.
    this.health = undefined;
    const err = this.deleting
      ? this.deletedError()
      : info.crashed
      ? rpcError('agent_crashed', `the session process died (${exit.reason}${exit.signal ? ` ${exit.signal}` : ''}); the session is ${info.willRestart ? 'being restarted from its log' : 'no longer restarted'}`, { sessionId: this.sessionId })
      : rpcError('agent_crashed', 'the session process stopped', { sessionId: this.sessionId });
    // What was sent to the process died with it; what still waits in the queue goes to the next one
    // (a restart, or a wake), unless there is none (deleted, shut down).
    this.requests.refuseSent(err, this.child.state === 'exited' ? new Set() : this.child.queuedRequestIds(), (id, p) => {
      if (p.turnId && !this.deleting) this.catchUp.lost(id, p.conn, p.turnId);
    });
    // A load still queued goes to the next process, whose replay starts over.
    this.fanOut.newProcess();
    if (!info.failed) this.requests.sendWaitingLoad();
    this.internal.rejectAll(err);
    for (const [id, conn] of this.asked.withdrawAll()) conn.cancelForwarded(this, id);
    // Its commands in clients' terminals would run on there, released by no one (until 2026-12-07):
    // the relay releases them (a release kills a command still running).
    for (const [terminalId, conn] of this.terminals.processGone()) conn.releaseTerminal(this.sessionId, terminalId);
    this.ctx.exited(this, exit, info);
    if (info.failed) this.failQueued();
  }

  /** The session failed for good: whatever waits for it gets `session_failed`. */
  failQueued(): void {
    this.catchUp.caughtUp();
    this.refuseWaiting(rpcError('session_failed', 'the session crashed too often and is no longer restarted', { sessionId: this.sessionId }));
  }

  /**
   * No process could be started for the session (the daemon is out of file descriptors or processes:
   * capacity, not a crash): what waits for one is refused with why, nothing counts against the
   * restart intensity, and the child stops. A session/new's session never came to be; an existing
   * session rests, and its next message tries again.
   */
  private spawnFailed(err: TroupeError): void {
    this.ctx.logger.error('no process could be started for a session', { sessionId: this.sessionId, error: err.message });
    const error = rpcError(err.code, err.message, { ...err.data, ...(this.sessionId ? { sessionId: this.sessionId } : {}) });
    this.refuseWaiting(error);
    this.internal.rejectAll(error);
    if (this.sessionId) void this.child.stop('idle');
    else this.ctx.unregistered(this);
  }

  /** Answers `error` to every request waiting for a process (ChildRequests.refuseWaiting). */
  refuseWaiting(error: ReturnType<typeof rpcError>): void {
    this.requests.refuseWaiting(error);
  }
}
