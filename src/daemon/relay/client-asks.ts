/**
 * A session process's requests to clients (a permission, a file, a terminal) that no client has
 * answered yet: the process's id → the connection asked and the process that asked. Each ends
 * answered, withdrawn by the process (`$/cancel_request`, answered -32800 here), or withdrawn with its process: found by
 * id, also for a connection no longer attached to the session (it closed it). Until 2026-12-07 the
 * relay looked among the attached connections only, and a request of a detached one stayed, its late
 * answer then sent to whatever process the session had by then, under an id that one may reuse.
 */
import type { ChildProcessHandle } from '../../actors/child-process.actor.js';
import type { RelayConnection } from './relay-connection.js';
import type { RelaySession } from './relay-session.js';
import { rpcError, type JsonRpcMessage } from './rpc.js';

export class ClientAsks {
  private readonly asked = new Map<unknown, { conn: RelayConnection; proc: ChildProcessHandle | undefined }>();

  /**
   * `candidates`: the connections to ask, in order: those whose prompts are in the process (the
   * running turn's first), then those attached, latest first (spec/daemon.md §Relay). `ownerOf`: for
   * a request on a client terminal, the connection whose terminal it is, null once it has left
   * (terminal-views.ts).
   */
  constructor(
    private readonly session: RelaySession,
    private readonly candidates: () => RelayConnection[],
    private readonly ownerOf: (msg: JsonRpcMessage) => RelayConnection | null | undefined = () => undefined,
  ) {}

  /**
   * Asks a connection the request `msg` of process `proc`: the client whose terminal it acts on, or,
   * that one gone, none (the process is answered an error at once); any other request the first that
   * can serve it (files and terminals are served by those that offered them), else the first; `none`:
   * the error the process is answered with when no connection is open.
   */
  ask(msg: JsonRpcMessage, proc: ChildProcessHandle | undefined, none: string): void {
    const owner = this.ownerOf(msg);
    if (owner === null || owner?.isClosed) {
      void proc?.send({ jsonrpc: '2.0', id: msg.id, error: rpcError('internal_error', 'the client whose terminal this is has left the session') });
      return;
    }
    const open = this.candidates().filter((c) => !c.isClosed);
    const conn = owner ?? open.find((c) => c.serves(String(msg.method))) ?? open[0];
    if (!conn) {
      void proc?.send({ jsonrpc: '2.0', id: msg.id, error: rpcError('internal_error', none) });
      return;
    }
    this.asked.set(msg.id, { conn, proc });
    conn.forwardRequest(this.session, msg);
  }

  /**
   * `conn` went away without answering the request `msg`: it is asked of another connection, if one
   * is open. Until 2026-12-07 it was answered an error at once: when the editor that was asked a
   * permission quit (or its HTTP connection was reaped), the tool call failed, though a client
   * watching the session (`troupe attach`) could have answered.
   */
  gone(conn: RelayConnection, msg: JsonRpcMessage): void {
    const proc = this.answered(msg.id, conn);
    if (proc) this.ask(msg, proc, 'the client asked went away, and no other is attached to the session');
  }

  /** `conn` answered request `id`: the process to send the answer to, if `conn` was asked it and the process still runs. */
  answered(id: unknown, conn: RelayConnection): ChildProcessHandle | undefined {
    const asked = this.asked.get(id);
    if (asked?.conn !== conn) return undefined;
    this.asked.delete(id);
    return asked.proc?.alive ? asked.proc : undefined;
  }

  /**
   * The process withdrew request `id` (`$/cancel_request`): answered -32800 now, as ACP has a
   * withdrawn request answered; the connection asked is returned, to be told. Its SDK keeps a request
   * until it is answered (one it stopped waiting for too), and the client's late answer is dropped
   * (RelayConnection.cancelForwarded), so this is its one answer. Until 2026-12-07 none came, and a
   * long session's process kept every request it had withdrawn (a cancelled turn's permission, a
   * stopped command's terminal wait) for the rest of its life.
   */
  withdraw(id: unknown): RelayConnection | undefined {
    const asked = this.asked.get(id);
    if (!asked) return undefined;
    this.asked.delete(id);
    if (asked.proc?.alive) void asked.proc.send({ jsonrpc: '2.0', id, error: rpcError('request_cancelled', 'Request cancelled: withdrawn by the session process', { requestId: id }) });
    return asked.conn;
  }

  /** The process is gone: every request it still had at a client, each with the connection asked. */
  withdrawAll(): [unknown, RelayConnection][] {
    const all = [...this.asked].map(([id, { conn }]): [unknown, RelayConnection] => [id, conn]);
    this.asked.clear();
    return all;
  }
}
