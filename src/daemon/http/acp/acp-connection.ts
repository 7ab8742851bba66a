/**
 * One ACP transport connection (one `Acp-Connection-Id`): its outbound streams, the routes that tie
 * responses to streams, output accounting with backpressure and stall detection, the serialised
 * hand-over of client messages to the agent side, and shutdown.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../../../core/ports.js';
import { CANCEL_REQUEST, idKey, isRecord, isRequest, isResponse, sessionIdOfParams, sessionIdOfResult } from './acp-protocol.js';
import type { AcpClientChannel, AcpCloseReason, AcpConnectionPeer, AcpInboundContext, JsonRpcMessage, ResolvedAcpOptions } from './acp.types.js';
import { OutboundStream, type StreamHost, type StreamReceiver } from './outbound-stream.js';
import { keepWithin, shedLargestFirst, type RetentionHolder } from './retention-budget.js';

/** Where a message goes: the connection stream or one session's stream. */
export type Route = 'connection' | { session: string };

export interface ConnectionHost {
  readonly options: ResolvedAcpOptions;
  readonly logger: Logger;
  now(): number;
  /** Removes the connection from the registry. */
  forget(conn: AcpConnection): void;
  /** What the connection's streams keep for resume changed by `bytes`; over `retainTotalBytes`, the daemon-wide budget is applied. */
  retainedChanged(bytes: number): void;
  /**
   * The connection's output no receiver has taken yet changed by `bytes`; over
   * `maxBufferedTotalBytes`, the host closes the connections holding most (this one, perhaps).
   */
  pendingChanged(bytes: number): void;
}

function sameRoute(a: Route, b: Route): boolean {
  return a === 'connection' || b === 'connection' ? a === b : a.session === b.session;
}

/** Raised when a message is handed to a connection that has shut down. */
export class ConnectionClosedError extends Error {
  constructor() {
    super('ACP connection is closed');
  }
}

export class AcpConnection implements AcpClientChannel, RetentionHolder {
  readonly id = randomUUID();
  peer: AcpConnectionPeer | undefined;
  closeReason: AcpCloseReason | undefined;
  /** HTTP: the connection stream. WS: the one stream of the socket. */
  readonly mainStream: OutboundStream;
  readonly sessionStreams = new Map<string, OutboundStream>();
  /**
   * The highest event id of the session streams this connection dropped (releaseSession): a session
   * stream is numbered on from it, so that no id is used twice on one connection's session streams,
   * and a `Last-Event-ID` kept from a dropped stream is a replay gap, never a resume mid-stream.
   */
  private droppedThroughId = 0;
  /**
   * Client requests in flight: id → the stream each one's response goes to. Ids are the client's, so
   * one id may be in flight on several streams at once (two sessions), never twice on one stream.
   */
  private readonly pendingRoutes = new Map<string, Route[]>();
  /**
   * Agent requests the client has not answered and the agent has not withdrawn: id → the session its
   * client response must name. An agent → client `$/cancel_request` takes its request's route (send):
   * a client need not answer a withdrawn request, and until 2026-12-07 each one it did not answer (a
   * permission of a cancelled turn, a request of a child that crashed) stayed here for the
   * connection's life, an editor's all day. A late answer is then taken without the session check.
   */
  readonly clientResponseRoutes = new Map<string, Route>();
  /** Output no receiver has taken yet (UTF-16 length of the JSON, as the SDK counts). */
  pendingBytes = 0;
  private retainedBytes = 0;
  /** Highest `pendingBytes` ever seen; exposed for tests and metrics. */
  peakPendingBytes = 0;
  /** Extra bytes held outside the streams (a WebSocket's send buffer). */
  externalBufferedBytes: () => number = () => 0;
  lastProgressAt: number;
  lastActivityAt: number;
  readonly createdAt: number;
  /** HTTP requests in flight and open SSE receivers; a connection with any is not idle. */
  activeHolds = 0;
  /** Called when the connection closes, before the peer hears of it (the WS side closes its socket). */
  onClose: ((reason: AcpCloseReason) => void) | undefined;
  private closedFlag = false;
  private inboundChain: Promise<void> = Promise.resolve();
  private roomWaiters: Array<() => void> = [];
  private readonly streamHost: StreamHost;

  constructor(readonly transport: 'http' | 'ws', private readonly host: ConnectionHost) {
    const now = host.now();
    this.createdAt = now;
    this.lastProgressAt = now;
    this.lastActivityAt = now;
    this.streamHost = {
      now: () => host.now(),
      pendingChanged: (bytes) => {
        this.pendingBytes += bytes;
        if (this.pendingBytes > this.peakPendingBytes) this.peakPendingBytes = this.pendingBytes;
        // Last: the host may shut this very connection down (its streams then report their output gone).
        host.pendingChanged(bytes);
      },
      progress: () => this.progress(),
      retainedChanged: (bytes) => {
        this.retainedBytes += bytes;
        // The connection's budget first, then the daemon's: the host's may take from another connection.
        if (bytes > 0) keepWithin(this.streams(), this.retainedBytes, host.options.retainConnectionBytes);
        host.retainedChanged(bytes);
      },
    };
    const retain = transport === 'http' ? { events: host.options.retainEvents, bytes: host.options.retainBytes } : { events: 0, bytes: 0 };
    this.mainStream = new OutboundStream(undefined, this.streamHost, retain);
  }

  get isClosed(): boolean {
    return this.closedFlag;
  }

  /** True while buffered output is under `maxBufferedBytes`. */
  hasRoom(): boolean {
    return this.pendingBytes + this.externalBufferedBytes() < this.host.options.maxBufferedBytes;
  }

  /** The client took output: reset the stall clock and wake senders if there is room. */
  progress(): void {
    this.lastProgressAt = this.host.now();
    if (this.hasRoom()) for (const wake of this.roomWaiters.splice(0)) wake();
  }

  /**
   * For an HTTP request that must wait for room: waits as waitForRoom does, counting `bytes` (its
   * body) as held meanwhile. False, at once, when the requests already held and this one would pass
   * `maxBufferedBytes`: each holds its body until the client reads its output (or the stall timer
   * closes the connection), and a client that reads nothing could otherwise park any number of them
   * (until 2026-12-07; a WebSocket's held frames were already bounded so).
   */
  async holdForRoom(bytes: number, signal?: AbortSignal): Promise<boolean> {
    if (this.closedFlag || this.hasRoom()) return true;
    if (this.heldRequestBytes + bytes > this.host.options.maxBufferedBytes) return false;
    this.heldRequestBytes += bytes;
    try {
      await this.waitForRoom(signal);
    } finally {
      this.heldRequestBytes -= bytes;
    }
    return true;
  }

  /** Bytes of the HTTP requests waiting for room (holdForRoom). */
  private heldRequestBytes = 0;

  /** Resolves when there is room or the connection closed; rejects if `signal` aborts first. */
  waitForRoom(signal?: AbortSignal): Promise<void> {
    if (this.closedFlag || this.hasRoom()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        this.roomWaiters = this.roomWaiters.filter((w) => w !== wake);
        reject(new Error('request aborted'));
      };
      const wake = (): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      this.roomWaiters.push(wake);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * {@link AcpClientChannel.releaseSession}: the session's stream keeps nothing for resume, and goes
   * if no receiver holds it and nothing waits in it.
   */
  releaseSession(sessionId: string): void {
    const stream = this.sessionStreams.get(sessionId);
    if (!stream) return;
    stream.release();
    this.dropIfDone(stream);
  }

  /**
   * Detaches an SSE receiver from `stream` (its client went away); a released session stream with
   * nothing waiting goes then. The relay queues its answer to session/close (or delete) on the
   * session's stream before it releases it, so at the release the stream always still held that
   * answer, or a receiver: until 2026-12-07 it was never dropped, and every session a connection
   * closed kept a stream against maxSessionStreams (1024) for the connection's life.
   */
  detachReceiver(stream: OutboundStream, receiver: StreamReceiver): void {
    if (stream.detach(receiver)) this.dropIfDone(stream);
  }

  /** Drops a released session stream that no receiver holds and nothing waits in (numbering on after it: droppedThroughId). */
  private dropIfDone(stream: OutboundStream): void {
    const sessionId = stream.sessionId;
    if (sessionId === undefined || !stream.released || stream.receiver || stream.pendingBytes > 0) return;
    if (this.sessionStreams.get(sessionId) !== stream) return;
    this.droppedThroughId = Math.max(this.droppedThroughId, stream.lastId);
    this.sessionStreams.delete(sessionId);
    stream.abort();
  }

  /** Bytes kept for `Last-Event-ID` resume on all this connection's streams. */
  get retained(): number {
    return this.retainedBytes;
  }

  /** {@link RetentionHolder.shed}: from the streams keeping most (the daemon-wide budget). */
  shed(bytes: number): number {
    return shedLargestFirst(this.streams(), bytes);
  }

  private *streams(): Iterable<OutboundStream> {
    yield this.mainStream;
    yield* this.sessionStreams.values();
  }

  /** A session's stream, created on demand; undefined when the connection may hold no more. */
  sessionStream(sessionId: string): OutboundStream | undefined {
    const existing = this.sessionStreams.get(sessionId);
    if (existing) return existing;
    if (this.closedFlag || this.sessionStreams.size >= this.host.options.maxSessionStreams) return undefined;
    const retain = { events: this.host.options.retainEvents, bytes: this.host.options.retainBytes };
    const stream = new OutboundStream(sessionId, this.streamHost, retain, this.droppedThroughId + 1);
    this.sessionStreams.set(sessionId, stream);
    return stream;
  }

  get idMaxLength(): number {
    return this.host.options.maxIdLength;
  }

  idTooLong(id: unknown): boolean {
    return typeof id === 'string' && id.length > this.host.options.maxIdLength;
  }

  /**
   * Records a client request in flight, with where its response goes. False when a request with the
   * same id is already in flight on that stream: its response could not be told from this one's.
   */
  addPendingRequest(key: string, route: Route): boolean {
    const routes = this.pendingRoutes.get(key);
    if (!routes) return void this.pendingRoutes.set(key, [route]), true;
    if (routes.some((r) => sameRoute(r, route))) return false;
    routes.push(route);
    return true;
  }

  /** Forgets a request that never reached the agent side (its POST failed). */
  dropPendingRequest(key: string, route: Route): void {
    this.takeRoute(key, route);
  }

  /**
   * Takes the request in flight with id `key` received on `route`, if there is one. Exact: with
   * equal ids on two sessions, any other match would send one session's answer to the other's stream
   * (and later the other's answer to the first's).
   */
  private takeRoute(key: string, route: Route): boolean {
    const routes = this.pendingRoutes.get(key);
    const i = routes ? routes.findIndex((r) => sameRoute(r, route)) : -1;
    if (i < 0) return false;
    routes!.splice(i, 1);
    if (routes!.length === 0) this.pendingRoutes.delete(key);
    return true;
  }

  /**
   * Where a response goes (spec/transport.md §3, §5): the stream of the request it answers, which
   * `answering` names (the context `receive` was given with it). `null`: it answers no request in
   * flight (the -32600, id null, to an invalid message): the connection stream, taking no route, not
   * even a valid id-null request's. WebSocket: one stream, no routes.
   */
  private responseRoute(message: JsonRpcMessage, answering: AcpInboundContext | null): Route {
    if (answering === null) return 'connection';
    const route: Route = answering.sessionId === undefined ? 'connection' : { session: answering.sessionId };
    if (this.transport === 'ws') return route;
    const key = idKey(message['id']);
    if (key === undefined || !this.takeRoute(key, route)) {
      // An agent-side bug (an answer given twice, or a context that is not its request's): still sent
      // where its context says, never on another request's route.
      this.host.logger.warn('ACP response answers no request in flight on its stream', { connectionId: this.id, id: message['id'], sessionId: answering.sessionId });
    }
    return route;
  }

  /** {@link AcpClientChannel.send}: route one agent → client message. */
  send(message: JsonRpcMessage, answering: AcpInboundContext | null = {}): Promise<void> {
    if (this.closedFlag || !isRecord(message)) return Promise.resolve();
    let route: Route;
    if (isResponse(message)) {
      route = this.responseRoute(message, answering);
      if (this.idTooLong(sessionIdOfResult(message))) return this.closeFor('limit_exceeded', 'agent issued an over-long session id');
    } else {
      const sid = sessionIdOfParams(message);
      if (this.idTooLong(sid)) return this.closeFor('limit_exceeded', 'agent used an over-long session id');
      route = sid !== undefined ? { session: sid } : 'connection';
      const key = isRequest(message) ? idKey(message['id']) : undefined;
      if (key) this.clientResponseRoutes.set(key, route);
      else if (message['method'] === CANCEL_REQUEST) {
        const withdrawn = idKey((message['params'] as { requestId?: unknown } | undefined)?.requestId);
        if (withdrawn) this.clientResponseRoutes.delete(withdrawn);
      }
    }
    const stream = this.transport === 'ws' || route === 'connection' ? this.mainStream : this.sessionStream(route.session);
    if (!stream) return this.closeFor('limit_exceeded', 'too many session streams');
    const json = JSON.stringify(message);
    // An agent that ignores backpressure (does not await send) is cut off rather than let it grow memory.
    if (!this.hasRoom() && this.pendingBytes + json.length > 2 * this.host.options.maxBufferedBytes) {
      return this.closeFor('limit_exceeded', 'agent output ignored backpressure');
    }
    const hadRoom = this.hasRoom();
    stream.push(json);
    if (this.hasRoom()) return Promise.resolve();
    if (hadRoom) this.lastProgressAt = this.host.now();
    return this.waitForRoom();
  }

  /** {@link AcpClientChannel.sendNotifications}: the same route and limits as `send`, no JSON work. */
  sendNotifications(sessionId: string, jsons: readonly string[]): boolean {
    if (this.closedFlag) return true;
    if (this.idTooLong(sessionId)) return void this.closeFor('limit_exceeded', 'agent used an over-long session id'), true;
    const stream = this.transport === 'ws' ? this.mainStream : this.sessionStream(sessionId);
    if (!stream) return void this.closeFor('limit_exceeded', 'too many session streams'), true;
    // One room check per batch: the socket's own buffer does not change until the stream writes.
    const max = this.host.options.maxBufferedBytes;
    const external = this.externalBufferedBytes();
    const hadRoom = this.pendingBytes + external < max;
    let bytes = 0;
    for (const json of jsons) bytes += json.length;
    // An agent that ignores backpressure is cut off rather than let it grow memory, as in send().
    if (!hadRoom && this.pendingBytes + bytes > 2 * max) return void this.closeFor('limit_exceeded', 'agent output ignored backpressure'), true;
    stream.pushMany(jsons, bytes);
    const room = this.pendingBytes + external < max;
    // The stall clock starts when the buffer first fills, as in send().
    if (hadRoom && !room) this.lastProgressAt = this.host.now();
    return room;
  }

  /** Hands one client message to the agent side, in order. Rejects with ConnectionClosedError when closed. */
  deliver(message: JsonRpcMessage, context: AcpInboundContext): Promise<void> {
    const run = this.inboundChain.then(() => {
      if (this.closedFlag || !this.peer) throw new ConnectionClosedError();
      return this.peer.receive(message, context);
    });
    this.inboundChain = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /** {@link AcpClientChannel.close}. */
  close(): void {
    this.shutdown('agent_closed');
  }

  /** Shuts down once: ends every stream, wakes waiters, forgets routes, tells the peer. */
  shutdown(reason: AcpCloseReason): void {
    if (this.closedFlag) return;
    this.closedFlag = true;
    this.closeReason = reason;
    this.mainStream.abort();
    for (const stream of this.sessionStreams.values()) stream.abort();
    this.sessionStreams.clear();
    this.pendingRoutes.clear();
    this.clientResponseRoutes.clear();
    // The aborted streams reported their output gone; anything left would stay in the daemon's total.
    if (this.pendingBytes !== 0) this.host.pendingChanged(-this.pendingBytes);
    this.pendingBytes = 0;
    for (const wake of this.roomWaiters.splice(0)) wake();
    this.host.forget(this);
    try {
      this.onClose?.(reason);
    } catch (err) {
      this.host.logger.warn('ACP connection close hook failed', { connectionId: this.id, error: String(err) });
    }
    const peer = this.peer;
    if (peer) {
      try {
        peer.closed(reason);
      } catch (err) {
        this.host.logger.warn('ACP peer closed() threw', { connectionId: this.id, error: String(err) });
      }
    }
  }

  /** Shuts down for `reason`, logging `why` (a broken limit). */
  closeFor(reason: AcpCloseReason, why: string): Promise<void> {
    this.host.logger.warn(`Closing ACP connection: ${why}`, { connectionId: this.id, reason });
    this.shutdown(reason);
    return Promise.resolve();
  }

  /** Housekeeping from the transport's sweep: keep-alives, stall and idle checks. */
  sweep(now: number): void {
    const o = this.host.options;
    // Stalled: over the limit with nothing taken, or a receiver whose socket has taken nothing of
    // what it was given. Until 2026-12-06 only the first: a client that stopped reading with less
    // than maxBufferedBytes waiting (a WebSocket with 16 MB unsent, seen once under load in a test)
    // held its connection, and its answers, for ever.
    if ((!this.hasRoom() && now - this.lastProgressAt >= o.maxOutputStallMs) || this.longestBlocked(now) >= o.maxOutputStallMs) {
      this.closeFor('stalled', `client read no output for ${o.maxOutputStallMs} ms`);
      return;
    }
    if (this.transport !== 'http') {
      // A socket that never initializes (or whose upgrade never opened) must not hold a slot forever.
      if (!this.peer && now - this.createdAt >= o.idleTimeoutMs) this.closeFor('idle', 'no initialize in time');
      return;
    }
    this.mainStream.keepAlive(now, o.keepAliveMs);
    for (const s of this.sessionStreams.values()) s.keepAlive(now, o.keepAliveMs);
    if (this.activeHolds === 0 && now - this.lastActivityAt >= o.idleTimeoutMs) {
      this.closeFor('idle', `no stream and no request for ${o.idleTimeoutMs} ms`);
    }
  }

  private longestBlocked(now: number): number {
    let longest = 0;
    for (const stream of this.streams()) longest = Math.max(longest, stream.blockedFor(now));
    return longest;
  }

  /** Marks the start of something that keeps an HTTP connection alive; call the result at its end. */
  hold(): () => void {
    this.activeHolds++;
    this.lastActivityAt = this.host.now();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.activeHolds--;
      this.lastActivityAt = this.host.now();
    };
  }
}
