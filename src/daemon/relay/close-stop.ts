/**
 * When a closed session's child stops (spec/daemon.md, Close stop): it rests (its next message
 * wakes it), but only once the close is the last request sent and every other has been answered. A
 * request sent after it (a load, a prompt, another client's) opened the session again in the child,
 * which then serves it until idle; one sent before it is the child's to answer (a prompt the close
 * ended). Stopping at the close's answer failed those requests as if the process had crashed.
 */
export class CloseStop {
  /** The child-side id of the latest client request forwarded. */
  private lastForwarded = 0;
  /** The child-side id of the last session/close the child answered with success. */
  private closedBy?: number;

  forwarded(id: number): void {
    this.lastForwarded = id;
  }

  /** The child answered the session/close of child-side id `id` with success. */
  closed(id: number): void {
    this.closedBy = id;
  }

  /** The process is gone: its close stops nothing more. */
  processGone(): void {
    this.closedBy = undefined;
  }

  /** Whether the child is to stop now, with `pending` client requests unanswered (true once per close). */
  due(pending: number): boolean {
    if (this.closedBy === undefined || this.closedBy !== this.lastForwarded || pending > 0) return false;
    this.closedBy = undefined;
    return true;
  }
}
