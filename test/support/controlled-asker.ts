// A PermissionAsker for tests: a person who answers from a list, or holds the request until the
// test answers it. An abort resolves the pending ask as `cancelled`, as an ACP client must.
import type { PermissionOutcome } from '../../src/core/events.js';
import type { PermissionAsker, PermissionRequest } from '../../src/core/ports.js';

export class ControlledAsker implements PermissionAsker {
  readonly asked: PermissionRequest[] = [];
  private pending?: (outcome: PermissionOutcome) => void;
  private waiters: (() => void)[] = [];

  /** With `answers`, each ask takes the next one; when they run out, asks wait for `answer()`. */
  constructor(private readonly answers: PermissionOutcome[] = []) {}

  ask(request: PermissionRequest, signal: AbortSignal): Promise<PermissionOutcome> {
    this.asked.push(request);
    this.waiters.splice(0).forEach((w) => w());
    const next = this.answers.shift();
    if (next) return Promise.resolve(next);
    return new Promise((resolve) => {
      const done = (o: PermissionOutcome) => {
        this.pending = undefined;
        signal.removeEventListener('abort', onAbort);
        resolve(o);
      };
      const onAbort = () => done('cancelled');
      signal.addEventListener('abort', onAbort, { once: true });
      this.pending = done;
    });
  }

  /** Resolves once a request is waiting for an answer. */
  whenAsked(): Promise<void> {
    return this.pending ? Promise.resolve() : new Promise((r) => this.waiters.push(r));
  }

  answer(outcome: PermissionOutcome): void {
    if (!this.pending) throw new Error('no permission request is waiting');
    this.pending(outcome);
  }
}
