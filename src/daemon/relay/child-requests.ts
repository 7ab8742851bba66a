/**
 * A session's client requests as its child has them (RelaySession keeps their table, PendingRequests):
 * sent in turn (a load waits for the one in flight, load-turns.ts; prompts queue in the child, which
 * runs them one at a time), keeping the child busy while a prompt or load runs (SupervisedChild.begin/
 * end); withdrawn by their client; refused when the process goes without answering them.
 */
import type { SupervisedChild } from '../../actors/supervised-child.actor.js';
import type { RelayConnection } from './relay-connection.js';
import { rpcError, type JsonRpcMessage } from './rpc.js';
import type { PendingRequest, PendingRequests } from './pending-requests.js';
import type { UpdateFanOut } from './update-fan-out.js';
import { LoadTurns } from './load-turns.js';

const TURNS = new Set(['session/prompt', 'session/load']);

export class ChildRequests {
  /**
   * Prompts in the child (child-side id → the connection that sent them), in the order sent. The
   * child runs them one at a time in that order (queued FIFO), so the first is the running turn's:
   * its connection is asked what the child asks (a permission), not one whose prompt waits behind.
   */
  private readonly prompting = new Map<number, RelayConnection>();
  /** session/loads, one at a time in the child (load-turns.ts). */
  readonly loads: LoadTurns;

  /** `unsentOpening`: a load or resume withdrawn before any process had it; the session's next boot is to open it (withdrawUnsent). */
  constructor(
    private readonly child: SupervisedChild,
    private readonly pending: PendingRequests,
    fanOut: UpdateFanOut,
    private readonly unsentOpening: () => void,
  ) {
    this.loads = new LoadTurns(fanOut);
  }

  /** Sends the client request `forChild` (child-side id `id`) to the child, unless it is a load that waits its turn. */
  send(id: number, method: string, conn: RelayConnection, forChild: JsonRpcMessage): void {
    if (method === 'session/load' && !this.loads.admit(id, conn, forChild)) return;
    if (TURNS.has(method)) this.child.begin();
    if (method === 'session/prompt') this.prompting.set(id, conn);
    this.child.send(forChild);
  }

  /** The request `id` (of `method`) is answered or withdrawn unsent: its turn ends, and the next waiting load may go. */
  settled(id: number, method: string): void {
    if (TURNS.has(method)) this.child.end();
    if (method === 'session/prompt') this.prompting.delete(id);
    // The next waiting load goes once this answer has gone to its client.
    if (this.loads.answered(id) && this.loads.anyWaiting) queueMicrotask(() => this.sendWaitingLoad());
  }

  /** Sends the next waiting load, once none is in flight (its connection gone: answered by no one, dropped). */
  sendWaitingLoad(): void {
    const next = this.loads.takeNext((id) => this.pending.has(id), (id) => this.pending.delete(id));
    if (!next) return;
    this.child.begin();
    this.child.send(next.msg);
  }

  /** `conn` was detached: it is asked nothing for its prompts. */
  forget(conn: RelayConnection): void {
    for (const [id, c] of this.prompting) if (c === conn) this.prompting.delete(id);
  }

  /**
   * Withdraws the pending request `p` of child-side id `id` (its client's `$/cancel_request`, or its
   * close, RelaySession.closeFor): one no process has seen (a load waiting for another's turn,
   * load-turns.ts; any request queued while the process starts, withdrawUnsent) is never sent and
   * answered cancelled at once (-32800, as the SDK answers a request it withdrew); any other goes to
   * the child, under its own id, which answers it (ACP: with a result, or cancelled). Until 2026-12-07 such a cancel reached the child after the request, or
   * never, and the load ran anyway.
   */
  withdraw(id: number, p: PendingRequest): void {
    if (this.loads.withdraw(id)) {
      this.pending.refuse(id, p, rpcError('request_cancelled', 'Request cancelled: the load waited for another load of the session and had not begun', { requestId: p.clientId }));
    } else if (this.child.unqueue(id)) this.withdrawUnsent(id, p);
    else this.child.send({ jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: id } });
  }

  /**
   * Request `id`, withdrawn while it waited for the session's process to start (a revival, a wake, a
   * restart), leaves nothing: the process is not kept busy for it (it stops idle as usual), the next
   * waiting load goes, and a connection it alone attached is detached (PendingRequests.ended): it
   * loaded nothing, and would hold the session and be asked what the process asks. A load or resume
   * that was to open the session leaves that to the boot, which resumes it with its MCP servers:
   * opened by the next request instead, the session would have none.
   */
  private withdrawUnsent(id: number, p: PendingRequest): void {
    if (p.method === 'session/load' || p.method === 'session/resume') this.unsentOpening();
    this.settled(id, p.method);
    this.pending.refuse(id, p, rpcError('request_cancelled', 'Request cancelled: it waited for the session\'s process to start and had not been sent', { requestId: p.clientId }));
  }

  /**
   * A `session/cancel` of the session (a client's, or the management API's): the prompts still queued
   * for a process that has not started (a wake, a revival, a restart) are answered `cancelled` here,
   * unsent, as the process answers a prompt cancelled before its turn (ACP). Sent behind them, the
   * cancel reached the process after their turns had begun, and a short turn ran to its end though
   * its client had been told its cancel was taken (until 2026-12-07; seen on a loaded machine). Those
   * the process has, it cancels itself.
   */
  cancelQueuedPrompts(): void {
    for (const [id, p] of this.pending) {
      if (p.method !== 'session/prompt' || !this.child.unqueue(id)) continue;
      this.settled(id, p.method);
      this.pending.resolve(id, p, { stopReason: 'cancelled' });
    }
  }

  /** Answers `err` to every request the process was sent and has not answered (`queued`: not sent yet); `lost` is told each. */
  refuseSent(err: ReturnType<typeof rpcError>, queued: ReadonlySet<unknown>, lost?: (id: number, p: PendingRequest) => void): void {
    for (const [id, p] of this.pending) {
      // Loads still waiting here never reached the process.
      if (queued.has(id) || this.loads.isWaiting(id)) continue;
      this.loads.lost(id);
      this.pending.refuse(id, p, err);
      lost?.(id, p);
    }
    // What is left was never sent (queued for the next process). A connection detached while open
    // has nothing queued (RelaySession.closeFor withdraws it; PendingRequests.ended detaches only one
    // owing nothing), so these are attached connections' prompts, or a closed one's, never asked (ClientAsks).
    this.prompting.clear();
    for (const [id, p] of this.pending) if (p.method === 'session/prompt') this.prompting.set(id, p.conn);
  }

  /**
   * Answers `error` to every request waiting for a process (queued, or a load held back): no prompt
   * is left. Until 2026-12-07 the prompts refused so when the session failed for good stayed its
   * prompts: after a revive, its process's requests in another client's turn (a permission) were
   * asked of the client whose prompt had been refused.
   */
  refuseWaiting(error: ReturnType<typeof rpcError>): void {
    const queued = this.child.drainQueue().flatMap((m) => (m.id === undefined || m.method === undefined ? [] : [Number(m.id)]));
    // Each as any failed request: a connection it alone attached is detached (PendingRequests.ended).
    for (const id of [...queued, ...this.loads.waitingIds()]) {
      const p = this.pending.get(id);
      if (p) this.pending.refuse(id, p, error);
    }
    this.pending.clear();
    this.prompting.clear();
    this.loads.clear();
    this.pending.releaseAllLeft();
  }

  /** A client's prompt is unanswered: its turn runs, or waits in the process or for it (queued while it starts). */
  get prompted(): boolean {
    return this.prompting.size > 0;
  }

  /** The connections of the prompts, the running turn's first. */
  prompters(): Iterable<RelayConnection> {
    return this.prompting.values();
  }
}
