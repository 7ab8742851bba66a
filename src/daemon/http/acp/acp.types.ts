/**
 * The seam between the ACP remote transport (this folder) and whatever answers the client (the
 * relay, which spawns one `troupe acp` child per session). The transport knows nothing of children:
 * it hands over raw JSON-RPC objects (never re-parsed, unknown fields kept) and routes what comes
 * back to the right SSE stream or WebSocket. spec/transport.md describes the wire side.
 */
import { MAX_ACP_BODY_BYTES } from '../../../wire/acp-body-limit.js';
import { MAX_SESSION_ID_CHARS } from '../../quoted-id.js';

/** A JSON-RPC 2.0 message as received: the raw parsed object, never stripped. */
export type JsonRpcMessage = Record<string, unknown>;

/** A JSON-RPC request (has `method` and a non-null `id`). */
export type JsonRpcRequest = JsonRpcMessage & { method: string; id: string | number };

/** Why a connection ended, as told to {@link AcpConnectionPeer.closed}. */
export type AcpCloseReason =
  /** The client sent DELETE (HTTP). */
  | 'deleted'
  /** The WebSocket closed (client close, network loss). */
  | 'socket_closed'
  /** HTTP: no stream and no request for `idleTimeoutMs`; WS: no pong in time. */
  | 'idle'
  /** The client read none of its output for `maxOutputStallMs` while the buffer was full. */
  | 'stalled'
  /** A limit was broken (id length, session streams, runaway output, the daemon's budget of unsent output). */
  | 'limit_exceeded'
  /** The agent side called {@link AcpClientChannel.close}. */
  | 'agent_closed'
  /** The server is shutting down. */
  | 'server_shutdown'
  /** A protocol violation ended the connection (e.g. WS first frame not initialize). */
  | 'protocol_error';

/** Where to deliver one client message, as the transport saw it. */
export interface AcpInboundContext {
  /** HTTP: the `Acp-Session-Id` header; WS: `params.sessionId`. Undefined for connection-level messages. */
  sessionId?: string;
}

/**
 * The agent side of the transport (the relay). One call per transport connection, with the
 * client's `initialize` request. Resolve with the peer that takes every later client message;
 * its `initializeResponse` (same `id`) is sent first: the 200 body on HTTP, the first frame on WS.
 * Reject to fail initialize (HTTP 500 with JSON-RPC -32603, WS close 1011).
 */
export interface AcpAgentSide {
  open(channel: AcpClientChannel, initialize: JsonRpcRequest): Promise<AcpConnectionPeer>;
}

/** The client end of one transport connection, handed to the agent side. */
export interface AcpClientChannel {
  /** The `Acp-Connection-Id`. */
  readonly id: string;
  readonly transport: 'http' | 'ws';
  /** True once the connection has shut down; sends are dropped then. */
  readonly isClosed: boolean;
  /**
   * Queues an agent → client message (response, request or notification), routed by the transport:
   * responses to the stream their request came from (a `session/load` response behind its replay),
   * the rest by `params.sessionId`. Resolves at once while the connection's buffered output is under
   * its limit, otherwise once the client has read enough (backpressure) or the connection closed.
   * Never rejects. Agent → client request ids must be unique per connection (the relay rewrites).
   *
   * Client request ids are the client's, and one id may be in flight on two sessions at once: a
   * response names the request it answers by its id and `answering`, the context `receive` was given
   * with that request (`{}` for one that came without a session); the match is exact. A response
   * that matches no request in flight is logged and sent to the stream `answering` names. `null`: the
   * response answers no request in flight (the -32600 with id null to a message that is not a valid
   * JSON-RPC 2.0 request, which the transport does not record): the connection stream, taking no
   * route, so that it never takes a valid id-null request's.
   */
  send(message: JsonRpcMessage, answering?: AcpInboundContext | null): Promise<void>;
  /**
   * Queues notifications for one session that are already JSON text (the relay passes a child's
   * `session/update` lines through unparsed). Each must be a JSON-RPC notification whose
   * `params.sessionId` is `sessionId`: it goes where {@link send} would route it, one event each,
   * under the same limits. Returns false while the buffered output is over its limit (the caller
   * does not wait; a client that stops reading is cut off by the stall timeout).
   */
  sendNotifications(sessionId: string, jsons: readonly string[]): boolean;
  /** Shuts the connection down as if the client had sent DELETE; the peer gets `closed('agent_closed')`. */
  close(): void;
  /**
   * The client closed (or deleted) the session: what its stream kept for `Last-Event-ID` resume is
   * let go (a connection can outlive many sessions), and the stream goes once no receiver holds it
   * and nothing waits in it. Output delivered later is kept again.
   */
  releaseSession(sessionId: string): void;
}

/** What the agent side returns from {@link AcpAgentSide.open}. */
export interface AcpConnectionPeer {
  /** The JSON-RPC response to `initialize`, with the request's `id`. */
  readonly initializeResponse: JsonRpcMessage;
  /**
   * One client message, in arrival order: calls are serialised per connection, so the next message
   * is not handed over until the returned promise settles. Return as soon as the message is taken
   * (e.g. written to a child's stdin); never await slow work such as a spawn or a turn here, or every
   * other session on the connection waits too. On HTTP the POST's 202 waits for the promise, so
   * awaiting a child's stdin drain pushes back on the client. A rejection answers that POST 500.
   */
  receive(message: JsonRpcMessage, context: AcpInboundContext): void | Promise<void>;
  /** The connection is gone; called once. Pending client requests will get no answer. */
  closed(reason: AcpCloseReason): void;
}

/** Limits and timers of the ACP transport; every field has a default (spec/transport.md §Limits). */
export interface AcpTransportOptions {
  /** Output waiting for a client, per connection, before agent sends wait. Default 64 MiB. */
  maxBufferedBytes?: number;
  /**
   * Output waiting for clients, all connections together; over it the connections holding most are
   * closed (`limit_exceeded`). Default 1 GiB.
   */
  maxBufferedTotalBytes?: number;
  /** Close a connection whose client read nothing for this long while over the limit. Default 60 s. */
  maxOutputStallMs?: number;
  /** Longest session id or string request id. Default 1024. */
  maxIdLength?: number;
  /** Session streams per HTTP connection. Default 1024. */
  maxSessionStreams?: number;
  /** Live transport connections (HTTP + WS). Default 256. */
  maxConnections?: number;
  /** Largest POST body / WS frame. Default 16 MiB. */
  maxBodyBytes?: number;
  /** Delivered events kept per SSE stream for Last-Event-ID resume: count and bytes. Defaults 4096, 8 MiB. */
  retainEvents?: number;
  retainBytes?: number;
  /** What all streams of one connection keep for resume together. Default 64 MiB. */
  retainConnectionBytes?: number;
  /** What all connections' streams keep for resume together. Default 256 MiB. */
  retainTotalBytes?: number;
  /** SSE keep-alive comment after this much silence. Default 15 s. */
  keepAliveMs?: number;
  /** Reap an HTTP connection with no open stream and no request for this long. Default 5 min. */
  idleTimeoutMs?: number;
  /** WS: ping after this much inbound silence; close if no pong within wsPongTimeoutMs. Defaults 15 s, 15 s. */
  wsPingIntervalMs?: number;
  wsPongTimeoutMs?: number;
}

export type ResolvedAcpOptions = Required<AcpTransportOptions>;

export function resolveAcpOptions(options: AcpTransportOptions = {}): ResolvedAcpOptions {
  const resolved: ResolvedAcpOptions = {
    maxBufferedBytes: options.maxBufferedBytes ?? 64 * 1024 * 1024,
    maxBufferedTotalBytes: options.maxBufferedTotalBytes ?? 1024 * 1024 * 1024,
    maxOutputStallMs: options.maxOutputStallMs ?? 60_000,
    maxIdLength: options.maxIdLength ?? MAX_SESSION_ID_CHARS,
    maxSessionStreams: options.maxSessionStreams ?? 1024,
    maxConnections: options.maxConnections ?? 256,
    maxBodyBytes: options.maxBodyBytes ?? MAX_ACP_BODY_BYTES,
    retainEvents: options.retainEvents ?? 4096,
    retainBytes: options.retainBytes ?? 8 * 1024 * 1024,
    retainConnectionBytes: options.retainConnectionBytes ?? 64 * 1024 * 1024,
    retainTotalBytes: options.retainTotalBytes ?? 256 * 1024 * 1024,
    keepAliveMs: options.keepAliveMs ?? 15_000,
    idleTimeoutMs: options.idleTimeoutMs ?? 300_000,
    wsPingIntervalMs: options.wsPingIntervalMs ?? 15_000,
    wsPongTimeoutMs: options.wsPongTimeoutMs ?? 15_000,
  };
  for (const [name, value] of Object.entries(resolved)) {
    if (!Number.isSafeInteger(value) || value < 0 || (value === 0 && !name.startsWith('retain'))) {
      throw new RangeError(`ACP transport option ${name} must be a positive integer (got ${value})`);
    }
  }
  return resolved;
}
