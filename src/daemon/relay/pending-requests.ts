/**
 * A session's client requests forwarded to its process and not answered yet, by child-side id
 * (RelaySession); the connections that closed the session while another stayed attached
 * (RelaySession.closeFor): such a one's session stream goes once nothing more is owed to it; and the
 * connections a request of theirs attached on trial (`ended`: the one rule for a request that opened
 * the session for its connection and did not succeed).
 */
import type { RelayConnection } from './relay-connection.js';
import type { rpcError } from './rpc.js';
import { ERROR_CODES } from '../../core/errors.js';

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
  /** session/new, load or resume naming MCP servers: the session's from its successful answer on (serversAfter). */
  opensWith?: unknown[];
  /** session/prompt: the id its turn is to have (child-wire.ts tagged). */
  turnId?: string;
}

/**
 * The MCP servers the session has once its process answered `answer` to `p`, a session/new, load or
 * resume that named some (`opensWith`), having had `had`: as the process has them, which a process
 * started again after a crash or an idle stop resumes the session with. Taken, they are the named
 * ones; refused (an error, a bad list), the ones it had; withdrawn by its client while they started
 * (answered -32800: spec/tools.md §7), none: the process stopped those it had as the request began
 * replacing them, and those it named. Until 2026-12-07 the daemon kept the ones it had then, and the
 * next process started servers the client had withdrawn with its request.
 */
export function serversAfter(p: PendingRequest, answer: { error?: unknown }, had: unknown[]): unknown[] {
  if (!p.opensWith) return had;
  if (answer.error === undefined) return p.opensWith;
  return (answer.error as { code?: unknown }).code === ERROR_CODES.request_cancelled.rpc ? [] : had;
}

export class PendingRequests extends Map<number, PendingRequest> {
  private readonly leaving = new Set<RelayConnection>();
  /** Connections a request of theirs attached to the session (they were not attached before it), until one of their requests succeeds. */
  private readonly onTrial = new Set<RelayConnection>();

  /**
   * `metric`: a request answered (its method, seconds since forwarded, whether with a result).
   * `unattach`: detaches a connection from the session (RelaySession: its updates, what it is asked).
   */
  constructor(
    private readonly sessionId: () => string | undefined,
    private readonly metric: (method: string, seconds: number, ok: boolean) => void,
    private readonly unattach: (conn: RelayConnection) => void,
  ) {
    super();
  }

  /** A request of `conn` attached it to the session, which it was not: it stays so only if a request of it succeeds (`ended`). */
  joined(conn: RelayConnection): void {
    this.onTrial.add(conn);
  }

  /** `conn` was detached from the session (closed it, went away, or `ended`): it is on trial no more. */
  forget(conn: RelayConnection): void {
    this.onTrial.delete(conn);
  }

  /**
   * A request of `conn` ended, its answer queued (`ok`: with a result). The one rule for a session/load
   * or resume that attached its connection (Relay.toSession puts only those on trial): one that does not succeed —
   * answered with an error by the process, withdrawn (`$/cancel_request`) before the process had it,
   * lost with its process, refused — leaves the connection as it was before it. Attached by it alone,
   * and owed nothing more of the session, the connection is detached (sent none of the session's
   * updates, asked nothing of it) and its session stream released after that answer; one attached
   * before stays attached. A request of it that succeeds keeps it attached for good. Until 2026-12-07
   * only a request withdrawn while the session's process started detached its connection; a load
   * withdrawn behind another, answered with an error or lost in a crash left it following the session.
   */
  ended(conn: RelayConnection, ok: boolean): void {
    if (ok) this.onTrial.delete(conn);
    else if (this.onTrial.has(conn) && !this.owes(conn)) {
      this.unattach(conn);
      this.leaving.add(conn);
    }
    this.releaseIfLeft(conn);
  }

  /** `p` is answered now (`ok`: with a result): how long it took. */
  answered(p: PendingRequest, ok: boolean): void {
    this.metric(p.method, (performance.now() - p.at) / 1000, ok);
  }

  /** Takes `p` (child-side id `id`) out and answers its client `error`. */
  refuse(id: number, p: PendingRequest, error: ReturnType<typeof rpcError>): void {
    this.settle(id, p, { error });
  }

  /** Takes `p` (child-side id `id`) out and answers its client `result`, as the child would have (a prompt cancelled unsent). */
  resolve(id: number, p: PendingRequest, result: Record<string, unknown>): void {
    this.settle(id, p, { result });
  }

  private settle(id: number, p: PendingRequest, answer: { result: Record<string, unknown> } | { error: ReturnType<typeof rpcError> }): void {
    const ok = 'result' in answer;
    this.delete(id);
    this.answered(p, ok);
    void p.conn.send({ jsonrpc: '2.0', id: p.clientId, ...answer }, p.answering);
    this.ended(p.conn, ok);
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
