/**
 * A session's client requests forwarded to its process and not answered yet, by child-side id
 * (RelaySession), and the connections that closed the session while another stayed attached
 * (RelaySession.closeFor): such a one's session stream goes once nothing more is owed to it.
 */
import type { RelayConnection } from './relay-connection.js';
import type { rpcError } from './rpc.js';

export interface PendingRequest {
  conn: RelayConnection;
  clientId: unknown;
  /** The session the client sent it on (none for session/new): its answer goes to that session's stream. */
  answering: string | undefined;
  method: string;
  /** When it was forwarded (performance.now()), for the request latency histogram. */
  at: number;
  /** session/fork: the MCP servers the fork named (the new session's). */
  forkServers?: unknown[];
  /** session/new, load or resume naming MCP servers: the session's from its successful answer on. */
  opensWith?: unknown[];
  /** session/prompt: the id its turn is to have (child-wire.ts tagged). */
  turnId?: string;
  /** Its connection was attached to the session by this request (not before): withdrawn unsent, it is detached again. */
  joined?: true;
}

export class PendingRequests extends Map<number, PendingRequest> {
  private readonly leaving = new Set<RelayConnection>();

  /** `metric`: a request answered (its method, seconds since forwarded, whether with a result). */
  constructor(
    private readonly sessionId: () => string | undefined,
    private readonly metric: (method: string, seconds: number, ok: boolean) => void,
  ) {
    super();
  }

  /** `p` is answered now (`ok`: with a result): how long it took. */
  answered(p: PendingRequest, ok: boolean): void {
    this.metric(p.method, (performance.now() - p.at) / 1000, ok);
  }

  /** Takes `p` (child-side id `id`) out and answers its client `error`. */
  refuse(id: number, p: PendingRequest, error: ReturnType<typeof rpcError>): void {
    this.delete(id);
    this.answered(p, false);
    void p.conn.send({ jsonrpc: '2.0', id: p.clientId, error }, p.answering);
    this.releaseIfLeft(p.conn);
  }

  /** `conn` closed the session while another stayed attached: its stream goes once nothing more is owed to it. */
  leave(conn: RelayConnection): void {
    this.leaving.add(conn);
    this.releaseIfLeft(conn);
  }

  /** `conn` attached again before that: its stream serves the session again. */
  back(conn: RelayConnection): void {
    this.leaving.delete(conn);
  }

  /** Whether a request of `conn` is still unanswered. */
  owes(conn: RelayConnection): boolean {
    for (const p of this.values()) if (p.conn === conn) return true;
    return false;
  }

  /** A connection that closed the session and is owed nothing more of it: its stream goes, after the last answer was queued. */
  releaseIfLeft(conn: RelayConnection): void {
    const sessionId = this.sessionId();
    if (!this.leaving.has(conn) || !sessionId || this.owes(conn)) return;
    this.leaving.delete(conn);
    conn.channel.releaseSession(sessionId);
  }

  /** Every connection that closed the session and is owed nothing more (after the table was emptied). */
  releaseAllLeft(): void {
    for (const conn of [...this.leaving]) this.releaseIfLeft(conn);
  }
}
