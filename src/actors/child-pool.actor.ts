/**
 * A warm pool of spawned `troupe acp` children. Spawning and loading modules is most of a session's
 * start-up cost (spec/daemon.md §Warm pool); a pooled child has paid it and waits on stdin, so
 * `session/new` only has to initialize it. Refills in the background, never more than two at once.
 */
import type { Logger } from '../core/ports.js';
import type { ChildProcessHandle } from './child-process.actor.js';

export class ChildPool {
  private readonly warm: ChildProcessHandle[] = [];
  private spawning = 0;
  private closed = false;

  constructor(
    private readonly size: number,
    private readonly launch: () => ChildProcessHandle,
    private readonly logger: Logger,
  ) {
    this.refill();
  }

  /** A warm child if one is ready, else a fresh one. The pool refills behind it. */
  take(): ChildProcessHandle {
    let child: ChildProcessHandle | undefined;
    while ((child = this.warm.shift()) && !child.alive) this.logger.warn('a pooled child died while waiting; discarding it', { pid: child.pid });
    setImmediate(() => this.refill());
    return child ?? this.launch();
  }

  get available(): number {
    return this.warm.filter((c) => c.alive).length;
  }

  /** Stops every warm child. */
  async close(graceMs: number): Promise<void> {
    this.closed = true;
    await Promise.all(this.warm.splice(0).map((c) => c.stop(graceMs)));
  }

  private refill(): void {
    while (!this.closed && this.warm.length + this.spawning < this.size && this.spawning < 2) {
      this.spawning++;
      // One spawn per loop turn: fork cost grows with the daemon's RSS and blocks its event loop.
      setImmediate(() => {
        this.spawning--;
        if (this.closed) return;
        const child = this.launch();
        this.warm.push(child);
        void child.whenExited().then(() => {
          const at = this.warm.indexOf(child);
          if (at >= 0) this.warm.splice(at, 1);
        });
        this.refill();
      });
    }
  }
}
