/**
 * Streamable HTTP on `/acp`: POST (initialize → 200 + Acp-Connection-Id, the rest → 202), GET (an
 * SSE stream per connection and per session, with `id:` and Last-Event-ID resume), DELETE (202).
 * Statuses follow SDK 2.4.0's AcpServer; spec/transport.md §3 (statuses) and §5 (load ordering)
 * list where troupe differs.
 */
import { jsonText, type HttpExchange } from '../http-exchange.js';
import { isTroupeError } from '../../../core/errors.js';
import { MAX_JSON_DEPTH, nestedTooDeep } from '../json-depth.js';
import { SSE_HEADERS } from '../sse-stream.js';
import type { AcpConnection, Route } from './acp-connection.js';
import {
  HEADER_CONNECTION_ID,
  idKey,
  isInitializeRequest,
  isRecord,
  isResponse,
  isValidRequest,
  methodRequiresSessionHeader,
  rpcError,
  sessionIdOfParams,
} from './acp-protocol.js';
import { isRequestId } from '../../../wire/request-id.js';
import type { JsonRpcMessage, JsonRpcRequest } from './acp.types.js';
import type { StreamReceiver } from './outbound-stream.js';
import type { TransportCore } from './transport-core.js';

/** Handles one authenticated HTTP request to `/acp`; must be called inside the uWS route callback. */
export function handleAcpHttp(ex: HttpExchange, core: TransportCore): void {
  switch (ex.method) {
    case 'POST':
      void handlePost(ex, core);
      return;
    case 'GET':
      handleGet(ex, core);
      return;
    case 'DELETE':
      handleDelete(ex, core);
      return;
    default:
      ex.error(405, 'invalid_request', 'Method Not Allowed', undefined, { Allow: 'GET, POST, DELETE' });
  }
}

async function handlePost(ex: HttpExchange, core: TransportCore): Promise<void> {
  // The headers decide before the body is read: a body of another type is not read at all.
  if (ex.refuseNonJsonBody(true)) return;
  // uWS delivers the body only to a handler attached before the route callback returns.
  const bodyRead = ex.readBody(core.options.maxBodyBytes);
  let raw: Buffer;
  try {
    raw = await bodyRead;
  } catch (err) {
    if (isTroupeError(err, 'payload_too_large')) ex.errorAndClose(413, err.code, err.message);
    return;
  }
  let value: unknown;
  try {
    value = JSON.parse(jsonText(raw));
  } catch {
    return ex.error(400, 'parse_error', 'Invalid JSON');
  }
  if (Array.isArray(value)) return ex.json(400, rpcError(null, -32600, 'JSON-RPC batches are not supported', 'invalid_request'));
  if (!isRecord(value)) return ex.error(400, 'invalid_request', 'Invalid JSON-RPC message');
  if (nestedTooDeep(value)) return ex.error(400, 'invalid_request', `JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
  const connectionId = ex.header(HEADER_CONNECTION_ID);
  if (isInitializeRequest(value)) {
    if (connectionId) return ex.error(400, 'invalid_request', 'Initialize not allowed on existing connection');
    return initialize(ex, core, value);
  }
  if (!connectionId) return ex.error(400, 'invalid_request', `Missing ${HEADER_CONNECTION_ID}`);
  const conn = core.httpConnection(connectionId);
  if (!conn) return ex.error(404, 'connection_not_found', `Unknown ${HEADER_CONNECTION_ID}`);
  const release = conn.hold();
  let admitted: Admitted | undefined;
  try {
    const refusal = isResponse(value) ? checkClientResponse(ex, conn, value) : await admitMethodMessage(ex, conn, value, raw.length);
    if (typeof refusal === 'string') return ex.error(400, 'invalid_request', refusal);
    if (refusal === HELD_FULL) {
      const max = core.options.maxBufferedBytes;
      return ex.json(503, rpcError(value['id'], -32052, `The connection already holds ${max} bytes of requests waiting for its output to be read (maxBufferedBytes): read the streams first`, 'capacity_exceeded'));
    }
    if (refusal?.duplicate) {
      // The POST is refused, not answered on the stream: there the client would take the error for
      // the answer to its request in flight under the same id. The SDK client turns a refused POST
      // into a JSON-RPC error for that request.
      const where = refusal.route === 'connection' ? 'on this connection' : `on session ${refusal.route.session}`;
      return ex.json(400, rpcError(value['id'], -32600, `Invalid Request: a request with id ${JSON.stringify(value['id'])} is already in flight ${where}`, 'invalid_request'));
    }
    admitted = refusal;
    if (ex.aborted) return admitted && conn.dropPendingRequest(admitted.key, admitted.route);
    await conn.deliver(value, contextOf(ex, value));
    ex.send(202, {});
  } catch (err) {
    if (admitted) conn.dropPendingRequest(admitted.key, admitted.route);
    if (conn.isClosed || ex.aborted) return ex.error(404, 'connection_not_found', `Unknown ${HEADER_CONNECTION_ID}`);
    core.logger.error('ACP agent side failed to take a message', { connectionId: conn.id, error: String(err) });
    ex.error(500, 'internal_error', 'The agent side failed to take the message');
  } finally {
    release();
  }
}

function contextOf(ex: HttpExchange, msg: JsonRpcMessage): { sessionId?: string } {
  const sid = ex.header('acp-session-id') ?? sessionIdOfParams(msg);
  return sid === undefined ? {} : { sessionId: sid };
}

/** A client's response to an agent request must name the session the request was routed to. */
function checkClientResponse(ex: HttpExchange, conn: AcpConnection, msg: JsonRpcMessage): string | undefined {
  const key = idKey(msg['id']);
  const route = key ? conn.clientResponseRoutes.get(key) : undefined;
  const header = ex.header('acp-session-id');
  if (route && route !== 'connection') {
    if (!header) return 'Missing Acp-Session-Id';
    if (header !== route.session) return 'Mismatched Acp-Session-Id';
  }
  if (key) conn.clientResponseRoutes.delete(key);
  return undefined;
}

/**
 * Session scoping, id limits, and room: a request (which will produce output) waits while the
 * client is behind on its output, so a client that does not read cannot make the agent produce more.
 */
/** A request admitted and recorded in flight (its id and the stream its response goes to). */
interface Admitted {
  key: string;
  route: Route;
  duplicate?: boolean;
}

/** A request refused because the connection's held requests are at maxBufferedBytes (holdForRoom). */
const HELD_FULL = Symbol('held requests full');

async function admitMethodMessage(ex: HttpExchange, conn: AcpConnection, msg: JsonRpcMessage, bodyBytes: number): Promise<string | Admitted | typeof HELD_FULL | undefined> {
  const method = typeof msg['method'] === 'string' ? msg['method'] : '';
  const header = ex.header('acp-session-id');
  const fromParams = sessionIdOfParams(msg);
  if ((methodRequiresSessionHeader(method) || fromParams !== undefined) && !header) return 'Missing Acp-Session-Id';
  if (header !== undefined && fromParams !== undefined && header !== fromParams) return 'Mismatched Acp-Session-Id';
  const session = header ?? fromParams;
  if (conn.idTooLong(session)) return `Session id exceeds maxIdLength (${conn.idMaxLength})`;
  if (!('id' in msg)) return undefined;
  if (conn.idTooLong(msg['id'])) return `Request id exceeds maxIdLength (${conn.idMaxLength})`;
  if (!conn.hasRoom() && !(await conn.holdForRoom(bodyBytes, ex.signal))) return HELD_FULL;
  // Only a request answered under its own id is in flight: an invalid one (`"jsonrpc": "1.0"`, an id
  // that is an object) is answered with id null, and recorded it would hold its id for the
  // connection's life, refusing a later valid request with it (and growing the map at will).
  const key = isValidRequest(msg) ? idKey(msg['id']) : undefined;
  // Ids are the client's: equal ids on two sessions are fine (each response goes to the stream of
  // its request), but twice on one stream the client could not tell the answers apart.
  if (!key) return undefined;
  const route = responseRoute(session);
  return { key, route, ...(conn.addPendingRequest(key, route) ? {} : { duplicate: true }) };
}

/**
 * Where the response to a client request goes. Unlike the SDK (which sends a session/load response
 * on the connection stream, racing its replay), every session-scoped response, session/load's
 * included, goes on that session's stream, behind the session/update replay written before it.
 */
function responseRoute(session: string | undefined): Route {
  return session !== undefined ? { session } : 'connection';
}

async function initialize(ex: HttpExchange, core: TransportCore, msg: JsonRpcMessage): Promise<void> {
  // A string or an integer isRequestId takes (spec/daemon.md): `{}`, `[1]`, `true`, `1.5` or `1e400`
  // (Infinity) would be answered under an id the client cannot have meant, or with id null.
  if (msg['id'] === null || !isRequestId(msg['id'])) return ex.error(400, 'invalid_request', 'Initialize request must include an ID (a string or an integer)');
  const conn = core.createConnection('http');
  if (!conn) {
    return ex.json(503, rpcError(msg['id'], -32052, `The daemon holds its maximum of ${core.options.maxConnections} connections`, 'capacity_exceeded'));
  }
  const release = conn.hold();
  try {
    const response = await core.openPeer(conn, msg as JsonRpcRequest);
    if (ex.aborted) {
      conn.shutdown('deleted');
      return;
    }
    ex.json(200, response, { [HEADER_CONNECTION_ID]: conn.id });
  } catch (err) {
    conn.shutdown('protocol_error');
    ex.json(500, rpcError(msg['id'], -32603, 'Initialize failed', 'internal_error', { details: err instanceof Error ? err.message : String(err) }));
  } finally {
    release();
  }
}

function handleGet(ex: HttpExchange, core: TransportCore): void {
  // A WebSocket handshake reaches here only when uWS did not take it as one (no Sec-WebSocket-Key,
  // or not a valid one): RFC 6455 §4.2.1 answers such a handshake 400. Until 2026-12-07 it was read
  // as an SSE request and refused 406 'use Accept: text/event-stream', naming what the client had
  // not meant to ask for.
  if ((ex.header('upgrade') ?? '').toLowerCase() === 'websocket') {
    return ex.error(400, 'invalid_request', 'Bad WebSocket handshake: Sec-WebSocket-Key must be 16 bytes in base64 (RFC 6455 §4.1)');
  }
  if (!(ex.header('accept') ?? '').toLowerCase().includes('text/event-stream')) return ex.error(406, 'invalid_request', 'Not Acceptable: use Accept: text/event-stream');
  const connectionId = ex.header(HEADER_CONNECTION_ID);
  if (!connectionId) return ex.error(400, 'invalid_request', `Missing ${HEADER_CONNECTION_ID}`);
  const conn = core.httpConnection(connectionId);
  if (!conn) return ex.error(404, 'connection_not_found', `Unknown ${HEADER_CONNECTION_ID}`);
  const sessionId = ex.header('acp-session-id');
  if (conn.idTooLong(sessionId)) return ex.error(400, 'invalid_request', `Session id exceeds maxIdLength (${conn.idMaxLength})`);
  const stream = sessionId === undefined ? conn.mainStream : conn.sessionStream(sessionId);
  if (!stream) return ex.error(400, 'invalid_request', `Connection exceeds maxSessionStreams (${core.options.maxSessionStreams})`);
  const lastEventId = ex.header('last-event-id');
  // A GET with Last-Event-ID is a client resuming: the receiver it replaces is most often its own
  // stream lost on the way (a network change, a proxy's timeout), whose socket the daemon cannot see
  // gone until TCP gives up on it, some 15 minutes of keep-alives taken by the kernel. Refused 409 all
  // that time (until 2026-12-07), the resume the retention exists for failed. It takes the stream
  // over; the old receiver's socket is closed. A GET without one is refused as the SDK refuses it.
  const previous = stream.receiver;
  if (previous && lastEventId === undefined) return ex.error(409, 'stream_conflict', 'Outbound stream already has an active receiver');
  const receiver = sseReceiver(ex);
  const release = conn.hold();
  ex.onAbort(() => {
    conn.detachReceiver(stream, receiver);
    release();
  });
  // The opening comment flushes the headers at once: the SDK client waits for them before it POSTs
  // a session's messages. If even it was buffered, the first event write reports the backpressure.
  ex.startEventStream(200, { ...SSE_HEADERS }, ':\n\n');
  ex.onDrain(() => stream.resume());
  stream.attach(receiver, lastEventId);
  // After the attach: closed first, the old receiver's abort would detach the stream's only receiver
  // and could drop a released session stream under the resuming client. Its abort releases its hold.
  if (previous) {
    core.logger.info('An SSE GET with Last-Event-ID took over a stream from its receiver', { connectionId: conn.id, sessionId });
    previous.end(false);
  }
}

function sseReceiver(ex: HttpExchange): StreamReceiver {
  return {
    write: (id, json) => ex.write(`id: ${id}\ndata: ${json}\n\n`),
    // JSON text has no raw line breaks, so one `data:` line carries the whole message.
    frame: (id, json) => `id: ${id}\ndata: ${json}\n\n`,
    writeFrames: (text) => ex.write(text),
    writeUnnumbered: (json) => {
      let ok = false;
      ex.cork(() => (ok = ex.write(`data: ${json}\n\n`)));
      return ok;
    },
    keepAlive: () => {
      let ok = false;
      ex.cork(() => (ok = ex.write(':\n\n')));
      return ok;
    },
    cork: (fn) => ex.cork(fn),
    end: (graceful) => (graceful ? ex.endStream() : ex.destroy()),
  };
}

function handleDelete(ex: HttpExchange, core: TransportCore): void {
  const connectionId = ex.header(HEADER_CONNECTION_ID);
  if (!connectionId) return ex.error(400, 'invalid_request', `Missing ${HEADER_CONNECTION_ID}`);
  const conn = core.httpConnection(connectionId);
  if (!conn) return ex.error(404, 'connection_not_found', `Unknown ${HEADER_CONNECTION_ID}`);
  conn.shutdown('deleted');
  ex.send(202, {});
}
