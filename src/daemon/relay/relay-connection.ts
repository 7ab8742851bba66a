/**
 * One client connection of the relay (an ACP transport connection, HTTP or WebSocket). It answers
 * what is not a session's business (initialize was answered by the relay; list and delete here),
 * routes the rest by `params.sessionId`, and keeps the ids of child → client requests unique on the
 * connection so answers find their way back.
 */
import type { AcpClientChannel, AcpCloseReason, AcpConnectionPeer, AcpInboundContext } from '../http/acp/acp.types.js';
import { isRecord, isValidClientMessage, methodRequiresSessionHeader } from '../http/acp/acp-protocol.js';
import { clientOffer, type ClientOffer } from '../../acp/client-offer.js';
import type { Relay } from './relay.js';
import type { RelaySession } from './relay-session.js';
import { errorResponse, isRequest, sessionIdOf, type JsonRpcMessage } from './rpc.js';
import { authenticateRefusal } from '../../acp/capabilities.js';
import { sessionListAnswer } from './session-list.answer.js';
import { isTroupeError } from '../../core/errors.js';

export class RelayConnection implements AcpConnectionPeer {
  readonly sessions = new Set<RelaySession>();
  /** Our id for a child's request → which child asked, under which id. */
  private readonly forwarded = new Map<number, { session: RelaySession; msg: JsonRpcMessage }>();
  /** Our id for a child's `terminal/create` withdrawn from this client, unanswered → its params' sessionId (releaseLateTerminal). */
  private readonly withdrawnCreates = new Map<number, unknown>();
  private nextId = 1;
  isClosed = false;
  /** When each request of the client was taken (receive), for the latency of those the daemon answers itself (answer). */
  private readonly taken = new WeakMap<JsonRpcMessage, number>();

  constructor(
    private readonly relay: Relay,
    readonly channel: AcpClientChannel,
    readonly initializeResponse: JsonRpcMessage,
    readonly capabilities: Record<string, unknown>,
  ) {}

  /**
   * `answering`, for a response: the session of the request it answers, as the transport gave it
   * (`context.sessionId`: none for a connection-level one); `null` for the answer to an invalid
   * message, which is no request in flight. Client ids are the client's: `id: 1` may be in flight on
   * two sessions at once, and the transport routes each answer by its id and this, exactly.
   */
  send(msg: JsonRpcMessage, answering?: string | null): Promise<void> {
    if (this.isClosed) return Promise.resolve();
    return this.channel.send(msg, answering === null ? null : answering === undefined ? {} : { sessionId: answering });
  }

  /**
   * The daemon's own answer `response` to the client's `request` (not its session process's: that
   * one is counted as it comes, pending-requests.ts): counted in the request latency histogram under
   * the request's method, from when the daemon took it, as every answer is, then sent on `answering`.
   */
  answer(request: JsonRpcMessage, response: JsonRpcMessage, answering?: string): Promise<void> {
    const at = this.taken.get(request);
    this.relay.answered(String(request.method), at === undefined ? 0 : (performance.now() - at) / 1000, response.error === undefined);
    return this.send(response, answering);
  }

  /**
   * Notifications already in JSON text (a child's session/update lines). The channel's `false` (over
   * maxBufferedBytes) is not acted on: the child is not paused for one slow client of several, so a
   * client that reads nothing is cut off at 2 × maxBufferedBytes (limit_exceeded) or by the stall
   * timer, whichever comes first (spec/transport.md §7).
   */
  sendNotifications(sessionId: string, jsons: readonly string[]): void {
    if (!this.isClosed) this.channel.sendNotifications(sessionId, jsons);
  }

  receive(msg: JsonRpcMessage, context: AcpInboundContext): void | Promise<void> {
    // Silence would leave the client waiting for an answer that never comes. Not a request in flight
    // (the transport applies the same rule), so its answer takes no request's route.
    if (!isValidClientMessage(msg)) return void this.send(errorResponse(null, 'invalid_request', 'Invalid Request: not a JSON-RPC 2.0 request, notification or response'), null);
    if (typeof msg.method !== 'string') return this.answerFromClient(msg);
    const request = isRequest(msg);
    if (request) this.taken.set(msg, performance.now());
    // Every answer goes with the session its request came on (the HTTP header, or params.sessionId):
    // the transport routes it to that stream, also when the same id is in flight on another session.
    const on = context.sessionId;
    switch (msg.method) {
      case 'initialize':
        if (request) void this.answer(msg, errorResponse(msg.id, 'invalid_request', 'Initialize not allowed on existing connection'), on);
        return;
      case 'session/new':
        if (request) return this.relay.newSession(this, msg, on);
        return;
      case 'authenticate':
        // Answered here, as troupe acp answers it: no child has anything else to say (capabilities.ts).
        if (request) void this.answer(msg, { jsonrpc: '2.0', id: msg.id, error: authenticateRefusal((msg.params as { methodId?: unknown } | undefined)?.methodId).toRpc() }, on);
        return;
      case 'session/list':
        if (request) void sessionListAnswer(this.relay.index, msg).then((answer) => this.answer(msg, answer, on));
        return;
      case 'session/delete':
        if (request) void this.deleteSession(msg, on);
        return;
      case '$/cancel_request': {
        // A protocol notification: sent as a request it is an unknown method, as the SDK answers it.
        if (request) return void this.answer(msg, errorResponse(msg.id, 'method_not_found', 'method not found: $/cancel_request (a notification, sent with an id)'), on);
        // The client withdrew one of its requests: the child that has it is told, under its own id.
        // Named with a session (header or params), only that session's request: ids may repeat across sessions.
        const scope = sessionIdOf(msg) ?? context.sessionId;
        const requestId = (msg.params as { requestId?: unknown } | undefined)?.requestId;
        if (scope === undefined) return this.withdrawUnnamed(requestId);
        let found = false;
        for (const s of this.sessions) if (s.sessionId === scope) found = s.withdraw(this, requestId) || found;
        // A session/new in flight: its session is none of these yet. (Until 2026-12-07 its cancel was
        // dropped.) One named with a session where no such request is pending is one too: a client may
        // send its session/new, and then its cancel, with the header of a session it holds (until
        // 2026-12-07 such a cancel was matched against that session only, and the session/new went on).
        // Over HTTP only one sent with that header, though: ids are the client's per stream (one may be
        // in flight on two, spec/transport.md), and a session/new under the same id sent on another
        // stream is another request. Until 2026-12-07 a late cancel of a request its session had
        // answered withdrew such a session/new. (A WebSocket has one stream: its ids are its own.)
        if (!found) this.relay.withdrawNew(this, requestId, this.channel.transport === 'http' ? scope : undefined);
        return;
      }
    }
    if (msg.method === 'session/cancel' && !request && sessionIdOf(msg) === undefined) return this.cancelNamedByHeader(msg, context.sessionId);
    const sessionId = sessionIdOf(msg) ?? context.sessionId;
    // An empty id names no session (session_not_found below); only an absent one routes nowhere.
    if (sessionId === undefined) {
      // A session method (over WebSocket no header stands in for params.sessionId) is known: its params are wrong.
      if (request && methodRequiresSessionHeader(msg.method)) void this.answer(msg, errorResponse(msg.id, 'invalid_params', `${msg.method} needs params.sessionId (a string)`), on);
      else if (request) void this.answer(msg, errorResponse(msg.id, 'method_not_found', `method not found: ${msg.method}`), on);
      return;
    }
    return this.relay.toSession(this, sessionId, msg);
  }

  /**
   * A `$/cancel_request` that names no session: no `Acp-Session-Id`, no params.sessionId (the SDK's
   * client sends every cancel so, its ids being unique on its connection; a WebSocket has no header).
   * It withdraws the one request it names: the one under that id sent with no session (a session/new
   * in flight: the cancel's own stream, spec/transport.md §3), else the one request under that id of
   * any stream. Ids are the client's per stream, so one in flight on several sessions (a client that
   * numbers each session's requests from 1) is no one request: none is withdrawn, and the log says
   * to send the cancel with the session's header. Until 2026-12-07 each of them was withdrawn, every
   * session's turn under that id cancelled by one cancel.
   */
  private withdrawUnnamed(requestId: unknown): void {
    const holders = [
      ...this.relay.newSessionsHolding(this, requestId),
      ...[...this.sessions].flatMap((s) => {
        const pending = s.pendingFrom(this, requestId);
        return pending ? [{ on: pending.on, withdraw: () => s.withdraw(this, requestId) }] : [];
      }),
    ];
    const ownStream = holders.filter((h) => h.on === undefined);
    const named = ownStream.length > 0 ? ownStream : holders;
    if (named.length === 1) return void named[0]!.withdraw();
    if (named.length > 1) {
      this.relay.logger.warn('a $/cancel_request without a session names a request id in flight on several sessions: none withdrawn (send it with the Acp-Session-Id of the request)', {
        requestId,
        sessionIds: named.map((h) => h.on ?? null),
      });
    }
  }

  /**
   * A `session/cancel` whose params name no session, a notification nothing can answer. Sent over HTTP
   * with the `Acp-Session-Id` of a session this connection holds (made, loaded or resumed, and not
   * closed), it cancels that session's turn: the SDK's server routes a message by that header too,
   * and the session process reads the session from params, so it goes on with them naming it. Until
   * 2026-12-07 it went on without, and the process dropped it in silence: the turn ran to its end.
   * Naming a session the connection does not hold, or none (a WebSocket has no header), it cancels
   * nothing, and the daemon's log says so with the connection's id, the one trace a client's
   * mistake leaves.
   */
  private cancelNamedByHeader(msg: JsonRpcMessage, header: string | undefined): void | Promise<void> {
    const held = header !== undefined && [...this.sessions].some((s) => s.sessionId === header);
    if (!held) {
      const why = header === undefined ? 'names no session (no Acp-Session-Id either)' : 'names a session this connection does not hold';
      return void this.relay.logger.warn(`a session/cancel without params.sessionId ${why}: nothing cancelled`, { connectionId: this.channel.id, sessionId: header ?? null });
    }
    return this.relay.toSession(this, header, { ...msg, params: { ...(isRecord(msg.params) ? msg.params : {}), sessionId: header } });
  }

  /** `on`: the session the request came on (over HTTP its header, which params.sessionId may lack), where its answer goes. */
  private async deleteSession(msg: JsonRpcMessage, on?: string): Promise<void> {
    const named = (msg.params as { sessionId?: unknown } | undefined)?.sessionId;
    // Unknown ids succeed (ACP), so a delete that names none must not: its client would think it deleted one.
    if (typeof named !== 'string') return void this.answer(msg, errorResponse(msg.id, 'invalid_params', 'session/delete needs params.sessionId (a string)'), on);
    const sessionId = named;
    // The transport refuses a header other than params.sessionId; without one, `on` is that too (params).
    const answering = on ?? sessionId;
    try {
      await this.relay.deleteById(sessionId);
      void this.answer(msg, { jsonrpc: '2.0', id: msg.id, result: {} }, answering);
      this.channel.releaseSession(sessionId);
    } catch (err) {
      // A typed refusal (the session open in an editor's process: session_locked) keeps its code.
      if (isTroupeError(err)) void this.answer(msg, { jsonrpc: '2.0', id: msg.id, error: err.toRpc() }, answering);
      else void this.answer(msg, errorResponse(msg.id, 'internal_error', `could not delete ${sessionId}: ${String(err)}`, { sessionId }), answering);
    }
  }

  /**
   * Whether this client said it serves `method` (a child's request): files and terminals only if its
   * `clientCapabilities` offered them; every client answers a permission.
   */
  serves(method: string): boolean {
    const offer = (this.offer ??= clientOffer(this.capabilities));
    if (method === 'fs/read_text_file') return offer.readTextFile;
    if (method === 'fs/write_text_file') return offer.writeTextFile;
    return !method.startsWith('terminal/') || offer.terminal;
  }

  /** The capabilities as a session's process reads them (one rule for both: src/acp/client-offer.ts). */
  private offer?: ClientOffer;

  /** A child's request, re-identified for this connection. */
  forwardRequest(session: RelaySession, msg: JsonRpcMessage): void {
    const id = this.nextId++;
    this.forwarded.set(id, { session, msg });
    void this.send({ ...msg, id });
  }

  /**
   * The child withdrew a request (`$/cancel_request`), or is gone: the client is told under our id
   * (an editor closes the permission it shows; the transport forgets the request's route), and a
   * late answer finds nothing here (but a terminal/create's terminal is released: releaseLateTerminal).
   */
  cancelForwarded(session: RelaySession, childId: unknown): void {
    for (const [id, f] of this.forwarded) if (f.session === session && f.msg.id === childId) this.withdrawForwarded(id, f.msg);
  }

  /** Our request `id` (the child's `msg`) is withdrawn from this client: told so, and its answer routed nowhere (but releaseLateTerminal). */
  private withdrawForwarded(id: number, msg: JsonRpcMessage): void {
    this.forwarded.delete(id);
    if (msg.method === 'terminal/create') this.withdrawnCreates.set(id, (msg.params as { sessionId?: unknown } | undefined)?.sessionId);
    void this.send({ jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: id } });
  }

  /**
   * A late answer to a `terminal/create` withdrawn from this client (its process withdrew it, went, or
   * this client left the session): an editor may make the terminal all the same, and its command would
   * run on there, released by no one. The relay releases it itself (ACP: a release kills a command
   * still running, so no terminal/kill first), its answer dropped as a stray. Here rather than handed to the process: the process that asked may
   * be gone (a crash, a delete), or have its answer from another client (leftSession asks again), and
   * this one place serves all three. Until 2026-12-07 such an answer was dropped, and the terminal leaked.
   */
  private releaseLateTerminal(msg: JsonRpcMessage): void {
    if (typeof msg.id !== 'number' || !this.withdrawnCreates.has(msg.id)) return;
    const sessionId = this.withdrawnCreates.get(msg.id);
    this.withdrawnCreates.delete(msg.id);
    const terminalId = (msg.result as { terminalId?: unknown } | undefined)?.terminalId;
    if (typeof terminalId === 'string' && terminalId !== '') this.releaseTerminal(sessionId, terminalId);
  }

  /**
   * The relay's own `terminal/release` of this client's terminal, on behalf of a process that cannot
   * send it (releaseLateTerminal; RelaySession.childExited): under an id of this connection's, its
   * answer dropped as a stray (answerFromClient).
   */
  releaseTerminal(sessionId: unknown, terminalId: string): void {
    void this.send({ jsonrpc: '2.0', id: this.nextId++, method: 'terminal/release', params: { sessionId, terminalId } });
  }

  /**
   * This connection closed `session` while another stays attached (RelaySession.closeFor): what the
   * session's process asked of it and it has not answered (a permission, a file) is withdrawn from it
   * and asked of another client, as when a connection goes. Left with it, another client's turn
   * would wait for a client that has closed the session (a permission up to its timeout).
   */
  leftSession(session: RelaySession): void {
    for (const [id, f] of this.forwarded) {
      if (f.session !== session) continue;
      this.withdrawForwarded(id, f.msg);
      session.askedGone(this, f.msg);
    }
  }

  closed(reason: AcpCloseReason): void {
    this.isClosed = true;
    // What a child asked this client (a permission, a file) is asked of another client of the
    // session, or answered now that none is: the child would otherwise wait for a client that is gone
    // (a permission up to its timeout, 5 minutes, with the turn stuck).
    const forwarded = [...this.forwarded.values()];
    this.forwarded.clear();
    this.withdrawnCreates.clear();
    for (const f of forwarded) f.session.askedGone(this, f.msg);
    const sessions = [...this.sessions];
    for (const s of sessions) s.detach(this);
    this.relay.connectionClosed(this, reason, sessions);
  }

  private answerFromClient(msg: JsonRpcMessage): void {
    // Our ids are numbers: an answer must carry the id asked, not "1" or [1] for 1 (JSON-RPC, and the SDK's own match).
    const f = typeof msg.id === 'number' ? this.forwarded.get(msg.id) : undefined;
    // An answer to a request withdrawn from this client (its child withdrew it, or died), or a stray id.
    if (!f) return this.releaseLateTerminal(msg);
    this.forwarded.delete(msg.id as number);
    f.session.clientAnswered(this, { ...msg, id: f.msg.id }, String(f.msg.method));
  }
}
