/**
 * A session process's requests to clients (a permission, a file, a terminal) that no client has
 * answered yet: the process's id → the connection asked and the process that asked. Each ends
 * answered, withdrawn by the process (`$/cancel_request`), or withdrawn with its process: found by
 * id, also for a connection no longer attached to the session (it closed it). Until 2026-12-07 the
 * relay looked among the attached connections only, and a request of a detached one stayed, its late
 * answer then sent to whatever process the session had by then, under an id that one may reuse.
 */
import type { ChildProcessHandle } from '../../actors/child-process.actor.js';
import type { RelayConnection } from './relay-connection.js';

export class ClientAsks {
  private readonly asked = new Map<unknown, { conn: RelayConnection; proc: ChildProcessHandle | undefined }>();

  /** Process `proc` asked `conn` its request `id`. */
  add(id: unknown, conn: RelayConnection, proc: ChildProcessHandle | undefined): void {
    this.asked.set(id, { conn, proc });
  }

  /** `conn` answered request `id`: the process to send the answer to, if `conn` was asked it and the process still runs. */
  answered(id: unknown, conn: RelayConnection): ChildProcessHandle | undefined {
    const asked = this.asked.get(id);
    if (asked?.conn !== conn) return undefined;
    this.asked.delete(id);
    return asked.proc?.alive ? asked.proc : undefined;
  }

  /** The process withdrew request `id`: the connection asked, to be told. */
  withdraw(id: unknown): RelayConnection | undefined {
    const conn = this.asked.get(id)?.conn;
    this.asked.delete(id);
    return conn;
  }

  /** The process is gone: every request it still had at a client, each with the connection asked. */
  withdrawAll(): [unknown, RelayConnection][] {
    const all = [...this.asked].map(([id, { conn }]): [unknown, RelayConnection] => [id, conn]);
    this.asked.clear();
    return all;
  }
}
