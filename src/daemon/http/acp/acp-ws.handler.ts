/**
 * ACP over WebSocket on `/acp` (SDK 2.4.0 ws-server.js as the reference): one JSON-RPC message per
 * text frame, the 101 carries `Acp-Connection-Id`, the first frame must be `initialize`. troupe adds
 * server pings (a peer that stops answering is closed) and uses uWS's own backpressure signals.
 * spec/transport.md §6–7.
 */
import { jsonText, readHeaders, type HeaderMap } from '../http-exchange.js';
import { MAX_JSON_DEPTH, nestedTooDeep } from '../json-depth.js';
import type { AuthOutcome } from '../security.js';
import { statusLine, type HttpRequest, type HttpResponse, type WebSocket, type WebSocketBehavior } from '../uws.js';
import type { AcpConnection } from './acp-connection.js';
import { HEADER_CONNECTION_ID, idKey, isInitializeRequest, isRecord, isResponse, rpcError, sessionIdOfParams } from './acp-protocol.js';
import { isRequestId } from '../../../wire/request-id.js';
import type { AcpCloseReason, JsonRpcMessage, JsonRpcRequest } from './acp.types.js';
import type { StreamReceiver } from './outbound-stream.js';
import type { TransportCore } from './transport-core.js';

/** A frame waiting to be handled also holds closures and promises; count this much more for it. */
const WAITING_FRAME_OVERHEAD = 1024;

interface WsState {
  conn: AcpConnection;
  socket?: WebSocket<WsState>;
  open: boolean;
  initialized: boolean;
  chain: Promise<void>;
  waitingBytes: number;
  lastInboundAt: number;
  pingSentAt?: number;
  /** Close code to use instead of the reason's default (1011 for internal failures). */
  closeCode?: number;
  /** Close reason text to send instead of the AcpCloseReason. */
  closeText?: string;
}

/**
 * uWS's own limit on a received message, twice troupe's. uWS refuses a message over its limit by
 * dropping the TCP connection without a close frame (the client sees 1006, no reason), as soon as
 * a frame header announces it, before buffering it. With room above troupe's limit, a message
 * somewhat too big reaches the handler, which closes with 1009 and a reason; only one over twice the
 * limit gets uWS's abrupt close. A socket's receive buffer is bounded by this (spec/transport.md §7).
 */
export function uwsMaxPayloadLength(maxBodyBytes: number): number {
  return Math.min(2 * maxBodyBytes, 0x7fffffff);
}

const CLOSE_CODES: Record<AcpCloseReason, number> = {
  deleted: 1000,
  agent_closed: 1000,
  socket_closed: 1000,
  server_shutdown: 1001,
  idle: 1001,
  stalled: 1008,
  limit_exceeded: 1008,
  protocol_error: 1002,
};

/** What the handshake asks of the server's security: the credentials, and which token subprotocol is the token's. */
export interface WsHandshakeSecurity {
  authorize(headers: HeaderMap, subprotocols: string[]): AuthOutcome;
  /** The offered `troupe-token.<token>` that carries the server's token, if one does. */
  tokenSubprotocol(offered: readonly string[]): string | undefined;
}

/** The subprotocol troupe speaks on `/acp`. */
const ACP_SUBPROTOCOL = 'acp';

/**
 * The subprotocol the 101 names, or '' for none: RFC 6455 §4.2.2 lets a server select one of those
 * offered that it supports, or none, and a client fails a connection whose 101 names one it did not
 * offer. troupe supports `acp`, and the token subprotocol a browser authenticates with (the SDK's
 * ws-client sends only what its `protocols` option lists): `acp` when offered; else that token
 * subprotocol, when it carries the token, since a browser (and the `ws` package) fails a connection
 * for which it offered subprotocols and got none back; else none. Until 2026-12-07 an offer of
 * `foo` (and the token) was answered `foo`, a protocol troupe does not speak.
 */
function chooseSubprotocol(offered: readonly string[], tokenSubprotocol: string | undefined): string {
  if (offered.includes(ACP_SUBPROTOCOL)) return ACP_SUBPROTOCOL;
  return tokenSubprotocol ?? '';
}

/** The one WebSocket protocol version there is (RFC 6455), as the handshake names it. */
const WEBSOCKET_VERSION = '13';

/** The longest `idleTimeout` uWS takes; more aborts the process ("must not be greater than 960 seconds"). */
const UWS_MAX_IDLE_TIMEOUT_S = 960;

/** The uWS behavior for `app.ws('/acp', ...)`. */
export function acpWebSocketBehavior(core: TransportCore, security: WsHandshakeSecurity): WebSocketBehavior<WsState> {
  const o = core.options;
  return {
    maxPayloadLength: uwsMaxPayloadLength(o.maxBodyBytes),
    // uWS's own idle timer is a backstop only (it has 4 s granularity); troupe's pinger is finer.
    // uWS aborts the process for an idleTimeout over 960 s: a long ping interval gets the longest.
    idleTimeout: Math.min(UWS_MAX_IDLE_TIMEOUT_S, Math.max(16, Math.ceil((o.wsPingIntervalMs + o.wsPongTimeoutMs) / 1000) * 2)),
    sendPingsAutomatically: true,
    // Never let uWS drop a message: troupe stops sending while the socket is backpressured.
    maxBackpressure: 1024 * 1024 * 1024,
    closeOnBackpressureLimit: 0,
    upgrade: (res, req, context) => upgrade(core, security, res, req, context),
    open: (ws) => {
      const state = ws.getUserData();
      state.socket = ws;
      state.open = true;
      state.conn.externalBufferedBytes = () => (state.open ? ws.getBufferedAmount() : 0);
      state.conn.onClose = (reason) => {
        if (!state.open || reason === 'socket_closed') return;
        state.open = false;
        ws.end(state.closeCode ?? CLOSE_CODES[reason], state.closeText ?? reason);
      };
      core.extraSweeps.set(state.conn, (now) => pingSweep(core, state, now));
    },
    message: (ws, message, isBinary) => {
      const state = ws.getUserData();
      core.traffic.ws.received += message.byteLength;
      state.lastInboundAt = core.now();
      state.pingSentAt = undefined;
      if (message.byteLength > o.maxBodyBytes) {
        // 1009 (message too big) with a reason, rather than uWS's abrupt close; nothing of it is read.
        closeFor(core, state, 'limit_exceeded', `message of ${message.byteLength} bytes exceeds maxBodyBytes`, 1009, `message too big (limit ${o.maxBodyBytes} bytes)`);
        return;
      }
      if (isBinary) {
        core.logger.warn('Ignoring binary ACP WebSocket frame', { connectionId: state.conn.id });
        return;
      }
      const text = jsonText(message);
      const size = text.length + WAITING_FRAME_OVERHEAD;
      if (state.waitingBytes > 0 && state.waitingBytes + size > o.maxBufferedBytes) {
        closeFor(core, state, 'limit_exceeded', 'inbound backlog exceeds maxBufferedBytes');
        return;
      }
      state.waitingBytes += size;
      state.chain = state.chain.then(async () => {
        state.waitingBytes -= size;
        await handleFrame(core, state, text);
      }).catch((err) => {
        if (state.conn.isClosed) return;
        core.logger.error('ACP WebSocket message handling failed', { connectionId: state.conn.id, error: String(err) });
        closeFor(core, state, 'protocol_error', 'message handling failed', 1011);
      });
    },
    drain: (ws) => {
      const state = ws.getUserData();
      // On the loop's next turn, not in this callback: uSockets stops polling a socket for writable
      // after its writable callback unless a write made in it failed through us_socket_write, and
      // uWS sends a large message (16 KiB or more, nothing buffered) through us_socket_write2, whose
      // partial write does not count. Written from here, the next message of a backlog went out in
      // part, its rest waited in uWS with nothing polling, and no drain came again: the connection
      // sat with its output unsent (and a prompt's answer behind it) until the stall timer closed it.
      // Until 2026-12-06 (daemon-event-feeds, about one run in two under load).
      setImmediate(() => {
        state.conn.mainStream.resume();
        state.conn.progress();
      });
    },
    ping: (ws) => {
      // uWS has already queued the pong. A client that pings and reads nothing grows the send buffer
      // by one pong per ping, and nothing else of troupe's runs to notice before the stall timer: so
      // the limit every other output obeys is checked here (spec/transport.md §7).
      const state = ws.getUserData();
      if (unreadPastLimit(core, state)) closeFor(core, state, 'limit_exceeded', 'pongs unread past maxBufferedBytes');
    },
    pong: (ws) => {
      const state = ws.getUserData();
      state.lastInboundAt = core.now();
      state.pingSentAt = undefined;
    },
    close: (ws) => {
      const state = ws.getUserData();
      state.open = false;
      state.conn.shutdown('socket_closed');
    },
  };
}

function upgrade(core: TransportCore, security: WsHandshakeSecurity, res: HttpResponse, req: HttpRequest, context: unknown): void {
  // Every line of a repeated header: a client may offer its subprotocols (`acp`, the token's) one a
  // line (RFC 6455 §11.3.4); until 2026-12-07 only the first line was read, and such a client was
  // refused 401 for the token it had sent.
  const headers = readHeaders(req);
  const key = headers['sec-websocket-key'] ?? '';
  const extensions = headers['sec-websocket-extensions'] ?? '';
  const offered = (headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim()).filter(Boolean);
  const auth = security.authorize(headers, offered);
  if (!auth.ok) {
    res.writeStatus(statusLine(auth.status)).writeHeader('Content-Type', 'application/json').end(JSON.stringify({ error: { code: auth.code, message: auth.message } }));
    return;
  }
  // uWS upgrades whatever version the client names (or none). RFC 6455 §4.4: a server refuses a
  // version it does not speak with 426 and the one it does, which a client may retry with; until
  // 2026-12-07 such a client got a 101 and frames of a version it had not asked for.
  if (headers['sec-websocket-version'] !== WEBSOCKET_VERSION) {
    const message = `Upgrade Required: this server speaks WebSocket version ${WEBSOCKET_VERSION} (Sec-WebSocket-Version), not ${JSON.stringify(headers['sec-websocket-version'] ?? '')}`;
    res
      .writeStatus(statusLine(426))
      .writeHeader('Sec-WebSocket-Version', WEBSOCKET_VERSION)
      .writeHeader('Content-Type', 'application/json')
      .end(JSON.stringify({ error: { code: 'invalid_request', message } }));
    return;
  }
  const conn = core.createConnection('ws');
  if (!conn) {
    const body = rpcError(null, -32052, `The daemon holds its maximum of ${core.options.maxConnections} connections`, 'capacity_exceeded');
    res.writeStatus(statusLine(503)).writeHeader('Content-Type', 'application/json').end(JSON.stringify(body));
    return;
  }
  const chosen = chooseSubprotocol(offered, security.tokenSubprotocol(offered));
  const now = core.now();
  const state: WsState = { conn, open: false, initialized: false, chain: Promise.resolve(), waitingBytes: 0, lastInboundAt: now };
  res.writeStatus(statusLine(101)).writeHeader(HEADER_CONNECTION_ID, conn.id);
  res.upgrade(state, key, chosen, extensions, context as never);
}

function wsReceiver(core: TransportCore, state: WsState): StreamReceiver {
  const send = (json: string): boolean => {
    if (!state.open) return false;
    core.traffic.ws.sent += Buffer.byteLength(json);
    return state.socket!.send(json, false) === 1;
  };
  return {
    write: (_id, json) => send(json),
    writeUnnumbered: send,
    keepAlive: () => true,
    cork: (fn) => {
      if (state.open) state.socket!.cork(fn);
    },
    end: () => undefined,
  };
}

/** Sends outside the outbound stream: only before initialize succeeded. */
/**
 * What the client has not read, in the socket's send buffer, is past `maxBufferedBytes`: for output
 * that no stream holds to that limit (uWS's own pongs, answers before initialize).
 */
function unreadPastLimit(core: TransportCore, state: WsState): boolean {
  return state.open && state.socket!.getBufferedAmount() > core.options.maxBufferedBytes;
}

function sendDirect(core: TransportCore, state: WsState, msg: JsonRpcMessage): void {
  if (!state.open) return;
  const json = JSON.stringify(msg);
  core.traffic.ws.sent += Buffer.byteLength(json);
  state.socket!.cork(() => state.socket!.send(json, false));
}

function reply(core: TransportCore, state: WsState, msg: JsonRpcMessage): Promise<void> {
  if (!state.initialized) {
    // No stream yet to hold these to maxBufferedBytes: a client that sends bad frames and reads
    // none of the answers would grow the socket's send buffer until the stall timer.
    if (unreadPastLimit(core, state)) {
      closeFor(core, state, 'limit_exceeded', 'unread answers before initialize past maxBufferedBytes');
      return Promise.resolve();
    }
    sendDirect(core, state, msg);
    return Promise.resolve();
  }
  // Answers to frames that are no request in flight (WebSocket keeps no routes anyway).
  return state.conn.send(msg, null);
}

/** Shuts the connection down; its close hook ends the socket with the reason's code (or `code`). */
function closeFor(core: TransportCore, state: WsState, reason: AcpCloseReason, why: string, code?: number, text?: string): void {
  core.logger.warn(`Closing ACP WebSocket: ${why}`, { connectionId: state.conn.id, reason });
  state.closeCode = code;
  state.closeText = text;
  state.conn.shutdown(reason);
}

async function handleFrame(core: TransportCore, state: WsState, text: string): Promise<void> {
  const conn = state.conn;
  if (conn.isClosed) return;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    await reply(core, state, rpcError(null, -32700, 'Parse error', 'parse_error'));
    return;
  }
  if (Array.isArray(value)) return reply(core, state, rpcError(null, -32600, 'JSON-RPC batches are not supported', 'invalid_request'));
  if (!isRecord(value)) return reply(core, state, rpcError(null, -32600, 'Invalid Request', 'invalid_request'));
  if (nestedTooDeep(value)) return reply(core, state, rpcError(null, -32600, `Invalid Request: JSON nested deeper than ${MAX_JSON_DEPTH} levels`, 'invalid_request'));
  const msg = value;
  if (!state.initialized) return initialize(core, state, msg);
  // Under its own id only if that is an id (spec/daemon.md: else -32600 with id null).
  if (isInitializeRequest(msg)) return reply(core, state, rpcError(isRequestId(msg['id']) ? msg['id'] : null, -32600, 'Initialize not allowed on existing connection', 'invalid_request'));
  let sessionId = sessionIdOfParams(msg);
  if (conn.idTooLong(sessionId) || conn.idTooLong(msg['id'])) return closeFor(core, state, 'limit_exceeded', `id exceeds maxIdLength (${conn.idMaxLength})`);
  if (isResponse(msg) || (!('method' in msg) && 'id' in msg)) {
    // Tell the agent side which session the answered request belonged to, as the HTTP header would.
    const key = idKey(msg['id']);
    const route = key ? conn.clientResponseRoutes.get(key) : undefined;
    if (route && route !== 'connection') sessionId = route.session;
    if (key) conn.clientResponseRoutes.delete(key);
  } else if ('id' in msg) {
    // A request adds output: wait until the client has read enough to make room.
    await conn.waitForRoom();
  }
  await conn.deliver(msg, sessionId === undefined ? {} : { sessionId });
}

async function initialize(core: TransportCore, state: WsState, msg: JsonRpcMessage): Promise<void> {
  if (!('method' in msg) && ('id' in msg || 'result' in msg || 'error' in msg)) return; // stray response: ignored, as the SDK does
  if (!isInitializeRequest(msg)) return closeFor(core, state, 'protocol_error', 'First message must be initialize');
  // A string or an integer isRequestId takes: `{}`, `[1]`, `true`, `1.5`, `1e400` would be answered under an id
  // the client cannot have meant (spec/transport.md §7: close 1002, as for a null id).
  if (msg['id'] === null || !isRequestId(msg['id'])) return closeFor(core, state, 'protocol_error', 'Initialize request must include an ID (a string or an integer)');
  try {
    const response = await core.openPeer(state.conn, msg as JsonRpcRequest);
    sendDirect(core, state, response);
    state.initialized = true;
    state.conn.mainStream.attach(wsReceiver(core, state), undefined);
  } catch (err) {
    if (state.conn.isClosed) return;
    sendDirect(core, state, rpcError(msg['id'], -32603, 'Initialize failed', 'internal_error', { details: err instanceof Error ? err.message : String(err) }));
    closeFor(core, state, 'protocol_error', 'Initialize failed', 1011);
  }
}

/** Pings a silent peer and closes one that does not answer. */
function pingSweep(core: TransportCore, state: WsState, now: number): void {
  const o = core.options;
  if (!state.open) return;
  if (state.pingSentAt !== undefined) {
    if (now - state.pingSentAt >= o.wsPongTimeoutMs) closeFor(core, state, 'idle', 'no pong in time');
    return;
  }
  if (now - state.lastInboundAt >= o.wsPingIntervalMs) {
    state.pingSentAt = now;
    state.socket!.cork(() => state.socket!.ping());
  }
}
