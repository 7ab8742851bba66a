/**
 * The daemon's own requests to a session's process (its boot's initialize and resume, the
 * management API's): under child-side ids from the session's one counter, answered to the daemon,
 * never to a client.
 */
import type { JsonRpcMessage, rpcError } from './rpc.js';

/** An error answer as the rejection its requester gets: the management API answers `rpc`'s code (management.routes.ts). */
const rejection = (error: { message?: unknown }): Error => Object.assign(new Error(String(error.message)), { rpc: error });

export class OwnRequests {
  private readonly waiting = new Map<number, { resolve(r: unknown): void; reject(e: Error): void }>();

  get size(): number {
    return this.waiting.size;
  }

  /** The answer to request `id`, once it comes (see {@link answer}). */
  add(id: number): Promise<any> {
    return new Promise((resolve, reject) => this.waiting.set(id, { resolve, reject }));
  }

  /** Settles the request `msg` answers; false if it is not one of these. */
  answer(id: number, msg: JsonRpcMessage): boolean {
    const w = this.waiting.get(id);
    if (!w) return false;
    this.waiting.delete(id);
    if (msg.error) w.reject(rejection(msg.error as { message?: unknown }));
    else w.resolve(msg.result);
    return true;
  }

  /**
   * Every request still waiting fails with `error` (its process is gone: agent_crashed, or
   * session_not_found for a deleted session), as an error answer would: the management API answers
   * its code (a steer), as the clients' requests are answered. Until 2026-12-07 a plain Error, which
   * the API answered 500 internal_error and logged as a bug.
   */
  rejectAll(error: ReturnType<typeof rpcError>): void {
    for (const [, w] of this.waiting) w.reject(rejection(error));
    this.waiting.clear();
  }
}
