/**
 * The registry of live ACP transport connections: capacity, the hand-over of `initialize` to the
 * agent side, and one periodic sweep for keep-alives, pings, stalls and reaping.
 */
import type { Clock, Logger } from '../../../core/ports.js';
import { intervalAfterReads, type AfterReads } from '../../../core/after-reads.js';
import { AcpConnection, type ConnectionHost } from './acp-connection.js';
import { idKey, isRecord } from './acp-protocol.js';
import { keepWithin } from './retention-budget.js';
import type { ByteMeter } from '../http-exchange.js';
import { resolveAcpOptions, type AcpAgentSide, type AcpTransportOptions, type JsonRpcMessage, type JsonRpcRequest, type ResolvedAcpOptions } from './acp.types.js';

/** What tests and metrics can see of one connection. */
export interface AcpConnectionStats {
  id: string;
  transport: 'http' | 'ws';
  pendingBytes: number;
  peakPendingBytes: number;
  sessionStreams: number;
  /** Delivered output kept for `Last-Event-ID` resume. */
  retainedBytes: number;
  /** Agent requests sent to the client and neither answered nor withdrawn yet (a permission asked, a file). */
  clientRequestsOpen: number;
  closed: boolean;
}

export class TransportCore implements ConnectionHost {
  readonly options: ResolvedAcpOptions;
  private readonly connections = new Map<string, AcpConnection>();
  /** Sweeps that belong to one transport side (the WebSocket pinger), keyed by connection. */
  readonly extraSweeps = new Map<AcpConnection, (now: number) => void>();
  private readonly sweeper: AfterReads;
  /** What all connections' streams keep for resume (`troupe_acp_retained_bytes`). */
  private retainedBytes = 0;
  /** Output no receiver has taken yet, of all connections (`troupe_acp_unsent_bytes`). */
  private pendingBytes = 0;
  /** Body bytes of /acp over HTTP (POSTs read, responses and SSE streams written) and WebSocket frames (`troupe_acp_bytes_total`). */
  readonly traffic: { http: ByteMeter; ws: ByteMeter } = { http: { received: 0, sent: 0 }, ws: { received: 0, sent: 0 } };

  constructor(private readonly agent: AcpAgentSide, options: AcpTransportOptions | undefined, readonly logger: Logger, private readonly clock: Clock) {
    this.options = resolveAcpOptions(options);
    const o = this.options;
    const finest = Math.min(o.keepAliveMs, o.idleTimeoutMs, o.maxOutputStallMs, o.wsPingIntervalMs, o.wsPongTimeoutMs);
    // After the loop turn's reads: a pong, a request or a drain that came in time while the daemon was
    // kept from its loop is seen before a connection is judged silent.
    this.sweeper = intervalAfterReads(Math.min(1000, Math.max(5, Math.floor(finest / 4))), () => this.sweep(), { unref: true });
  }

  now(): number {
    return this.clock.now();
  }

  /** A new connection, or undefined when `maxConnections` are live. */
  createConnection(transport: 'http' | 'ws'): AcpConnection | undefined {
    if (this.connections.size >= this.options.maxConnections) return undefined;
    const conn = new AcpConnection(transport, this);
    this.connections.set(conn.id, conn);
    return conn;
  }

  /** A live, initialized HTTP connection. */
  httpConnection(id: string): AcpConnection | undefined {
    const conn = this.connections.get(id);
    return conn && conn.transport === 'http' && conn.peer && !conn.isClosed ? conn : undefined;
  }

  /** {@link ConnectionHost.retainedChanged}: over `retainTotalBytes`, the connections keeping most give up their oldest. */
  retainedChanged(bytes: number): void {
    this.retainedBytes += bytes;
    if (bytes > 0) keepWithin(this.connections.values(), this.retainedBytes, this.options.retainTotalBytes);
  }

  /**
   * {@link ConnectionHost.pendingChanged}: over `maxBufferedTotalBytes`, the connections holding most
   * unsent output are closed (`limit_exceeded`), from the largest, until the rest fit. Each connection
   * holds up to 2 × `maxBufferedBytes` (128 MiB) before its own limit closes it, and 256 of them
   * could hold 32 GiB: until 2026-12-06 nothing bounded them together. The largest holder is the
   * client furthest behind (or one that never opened its stream); the others are not touched.
   */
  pendingChanged(bytes: number): void {
    this.pendingBytes += bytes;
    const budget = this.options.maxBufferedTotalBytes;
    while (bytes > 0 && this.pendingBytes > budget) {
      let largest: AcpConnection | undefined;
      for (const c of this.connections.values()) if (!c.isClosed && c.pendingBytes > 0 && (!largest || c.pendingBytes > largest.pendingBytes)) largest = c;
      if (!largest) break;
      // Its streams report their output gone as they abort: the total goes down by what it held.
      void largest.closeFor('limit_exceeded', `the daemon's unsent output (${this.pendingBytes} bytes) is over maxBufferedTotalBytes (${budget}) and this connection held the most (${largest.pendingBytes})`);
    }
  }

  /** Bytes of output no receiver has taken yet, over all connections. */
  get unsent(): number {
    return this.pendingBytes;
  }

  /** Bytes all connections' streams keep for `Last-Event-ID` resume. */
  get retained(): number {
    return this.retainedBytes;
  }

  forget(conn: AcpConnection): void {
    if (this.connections.get(conn.id) === conn) this.connections.delete(conn.id);
    this.extraSweeps.delete(conn);
  }

  /**
   * Asks the agent side to open `conn` and returns its initialize response. Throws when the agent
   * fails or answers with anything but a response to this request; if the connection closed in the
   * meantime the new peer is told at once.
   */
  async openPeer(conn: AcpConnection, initialize: JsonRpcRequest): Promise<JsonRpcMessage> {
    const peer = await this.agent.open(conn, initialize);
    const response = peer.initializeResponse;
    // idKey is undefined for a non-id (`{}`, `true`): two of those must not count as the same id.
    const asked = idKey(initialize.id);
    if (!isRecord(response) || 'method' in response || asked === undefined || idKey(response['id']) !== asked) {
      try {
        peer.closed('protocol_error');
      } catch {
        // The agent side is already failing this connection.
      }
      throw new Error('Expected initialize response from agent');
    }
    conn.peer = peer;
    if (conn.isClosed) {
      peer.closed(conn.closeReason ?? 'deleted');
      throw new Error('Connection closed during initialize');
    }
    return response;
  }

  stats(): AcpConnectionStats[] {
    return [...this.connections.values()].map((c) => ({
      id: c.id,
      transport: c.transport,
      pendingBytes: c.pendingBytes,
      peakPendingBytes: c.peakPendingBytes,
      sessionStreams: c.sessionStreams.size,
      retainedBytes: c.retained,
      clientRequestsOpen: c.clientResponseRoutes.size,
      closed: c.isClosed,
    }));
  }

  connection(id: string): AcpConnection | undefined {
    return this.connections.get(id);
  }

  get size(): number {
    return this.connections.size;
  }

  private sweep(): void {
    const now = this.clock.now();
    for (const conn of [...this.connections.values()]) {
      conn.sweep(now);
      if (!conn.isClosed) this.extraSweeps.get(conn)?.(now);
    }
  }

  /** Closes every connection (peers hear `server_shutdown`) and stops the sweep. */
  closeAll(): void {
    this.sweeper.cancel();
    for (const conn of [...this.connections.values()]) conn.shutdown('server_shutdown');
  }
}
