/**
 * A session's `session/load`s, one at a time in its child. The child's replays are not told apart on
 * the wire: a connection whose load started during another's replay would take that replay's tail as
 * its own and then skip its own replay's head. So a load sent while another is in flight waits here
 * (still pending in the session: answered like any other if the session fails), and its connection
 * is sent nothing until it goes (UpdateFanOut.hold).
 */
import type { RelayConnection } from './relay-connection.js';
import type { JsonRpcMessage } from './rpc.js';
import type { UpdateFanOut } from './update-fan-out.js';

export interface WaitingLoad {
  conn: RelayConnection;
  msg: JsonRpcMessage;
}

export class LoadTurns {
  /** The child-side id of the load in flight. */
  private inFlight?: number;
  private readonly waiting = new Map<number, WaitingLoad>();

  constructor(private readonly fanOut: UpdateFanOut) {}

  /** Whether a load's replay is under way (its REPLAY_STARTED is awaited or came). */
  get replaying(): boolean {
    return this.inFlight !== undefined;
  }

  /** Whether loads wait for the one in flight. */
  get anyWaiting(): boolean {
    return this.waiting.size > 0;
  }

  /** Whether the load of child-side id `id` waits here (it never reached the process). */
  isWaiting(id: number): boolean {
    return this.waiting.has(id);
  }

  /** The child-side ids of the loads waiting here. */
  waitingIds(): Iterable<number> {
    return this.waiting.keys();
  }

  /** A load to send: true if it goes now (its replay starts), false if it waits its turn. */
  admit(id: number, conn: RelayConnection, msg: JsonRpcMessage): boolean {
    if (this.inFlight !== undefined) {
      this.waiting.set(id, { conn, msg });
      this.fanOut.hold(conn);
      return false;
    }
    this.start(id, conn);
    return true;
  }

  /**
   * The next waiting load, its turn begun, once none is in flight; a waiting load whose connection
   * is gone, or that `pending` no longer holds, is dropped (`dropped` is told its id).
   */
  takeNext(pending: (id: number) => boolean, dropped: (id: number) => void): (WaitingLoad & { id: number }) | undefined {
    for (const [id, load] of this.waiting) {
      if (this.inFlight !== undefined) return undefined;
      this.waiting.delete(id);
      if (load.conn.isClosed || !pending(id)) {
        dropped(id);
        continue;
      }
      // Its turn: its connection is sent the session again from where the child marks its replay's start.
      this.start(id, load.conn);
      return { id, ...load };
    }
    return undefined;
  }

  /**
   * The client withdrew the waiting load `id` (`$/cancel_request`): it goes, true, and its connection
   * is held no more, unless a load of its own is still in flight or waiting: sent the session's
   * updates from now on if it stays attached (it was before the load: PendingRequests.ended detaches
   * one the load alone attached). False if no such load waits here (it was sent to the process).
   */
  withdraw(id: number): boolean {
    const load = this.waiting.get(id);
    if (!load) return false;
    this.waiting.delete(id);
    const another = this.fanOut.replayingFor(load.conn) || [...this.waiting.values()].some((w) => w.conn === load.conn);
    if (!another) this.fanOut.unhold(load.conn);
    return true;
  }

  /** The request `id` was answered: true if it was the load in flight (the next may go). */
  answered(id: number): boolean {
    if (this.inFlight !== id) return false;
    this.inFlight = undefined;
    this.fanOut.endReplay();
    return true;
  }

  /** The request `id` died with its process: if it was the load in flight, its replay is dropped. */
  lost(id: number): void {
    if (this.inFlight !== id) return;
    this.inFlight = undefined;
    this.fanOut.dropReplay();
  }

  /** Every load is refused (the session failed, or no process could start). */
  clear(): void {
    this.inFlight = undefined;
    this.fanOut.dropReplay();
    this.waiting.clear();
  }

  private start(id: number, conn: RelayConnection): void {
    this.inFlight = id;
    this.fanOut.startReplay(conn);
  }
}
