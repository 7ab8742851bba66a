/**
 * One session's child under supervision: the child machine (child.machine.ts) driven by a real
 * process. It spawns (from the warm pool), boots (the relay initializes and resumes the session),
 * queues messages while the child is not ready, watches heartbeats, stops idle children and
 * restarts crashed ones within the restart intensity.
 */
import { createActor, type Actor, type InspectionEvent } from 'xstate';
import { isTroupeError, TroupeError } from '../core/errors.js';
import type { Logger } from '../core/ports.js';
import { childMachine } from '../machines/child.machine.js';
import type { ChildSpec } from '../machines/restart-window.js';
import { statePath } from '../machines/serialize.js';
import type { ControlMessage } from '../wire/control-messages.js';
import type { UpdateLine } from '../wire/update-line.js';
import type { ChildExit, ChildProcessHandle } from './child-process.actor.js';
import { ChildWatchdog, startupLeftMs } from './child-watchdog.js';

export type BootKind = 'start' | 'restart' | 'wake';

export interface SupervisedChildOptions {
  spec: ChildSpec;
  /** Stop the child after this long with nothing to do. */
  idleMs: number;
  /** Kill the child when no control message arrived for this long. */
  heartbeatTimeoutMs: number;
  /** Kill a child that has not said hello this long after its spawn (--startup-timeout-ms). */
  startupTimeoutMs: number;
  /** A process for the session; rejects (`capacity_exceeded`) when none could be started. */
  acquire(): Promise<ChildProcessHandle>;
  /**
   * No process could be started (the daemon's limits: open files, processes). Not a crash of the
   * session: nothing counts against the restart intensity; the owner answers what waits, and stops
   * the child (it rests, and its next message tries again).
   */
  onSpawnFailed(err: TroupeError): void;
  /** Brings a fresh process to serving the session (initialize, resume); rejects if it cannot. */
  boot(proc: ChildProcessHandle, kind: BootKind): Promise<void>;
  onMessage(msg: Record<string, unknown>): void;
  /** `session/update` lines relayed without parsing (see ChildHandlers.updates); else all go to onMessage. */
  onUpdates?(batch: UpdateLine[]): void;
  onControl(msg: ControlMessage): void;
  /** The process is gone. `crashed`: not asked to stop. `willRestart`: a new process is coming. */
  onExit(exit: ChildExit, info: { crashed: boolean; willRestart: boolean; failed: boolean }): void;
  onTransition?(state: string, event: string, at: number): void;
  /** Its watchdog found the child silent but short of CPU, and waits for it (once per silence). */
  onSlow?(): void;
  /**
   * Whether nothing waits on the child beyond prompts and loads (which make it busy): any other
   * request in flight, such as a session/new whose MCP servers are starting, postpones the idle stop.
   */
  quiet?(): boolean;
  logger: Logger;
}

/** The SupervisedChild behind each actor, for the machine's actions (provided once for all sessions). */
const owners = new WeakMap<object, SupervisedChild>();

/**
 * The child machine with its actions, built once: `machine.provide()` per session would build a
 * machine (its state nodes and closures) per session, ~20 KiB and ~0.3 ms each in the daemon.
 */
const supervisedMachine = childMachine.provide({
  actions: {
    spawn: ({ self }) => owners.get(self)?.spawnAction(),
    stopChild: ({ self }) => owners.get(self)?.stopAction(),
    killChild: ({ self }) => owners.get(self)?.proc?.kill(),
    markFailed: () => undefined,
  },
});

export class SupervisedChild {
  readonly actor: Actor<typeof childMachine>;
  proc?: ChildProcessHandle;
  private queue: Record<string, unknown>[] = [];
  private idleTimer?: NodeJS.Timeout;
  private readonly watchdog = new ChildWatchdog({
    sample: () => this.proc?.sample(),
    watched: () => {
      const s = this.state;
      return this.proc?.alive === true && !this.abandoned.has(this.proc) && s !== 'stopping' && s !== 'idleStopped';
    },
    slow: (now, cpuMs) => {
      this.opts.logger.warn('child silent but short of CPU (the machine is busy); waiting for it', { pid: this.proc?.pid, state: this.state, process: now.state, cpuMs });
      this.opts.onSlow?.();
    },
    hung: (now, cpuMs) => {
      this.opts.logger.warn('child missed its heartbeats; killing it', { pid: this.proc?.pid, state: this.state, process: now?.state, cpuMs });
      this.abandon({ type: 'HUNG' }, this.proc!);
    },
  });
  private inFlight = 0;
  private bootKind: BootKind = 'start';
  private readonly stopWaiters: (() => void)[] = [];
  pid?: number;
  /** Processes started, by why: the first, after a failure, for an idle-stopped session's next message. */
  private readonly started: Record<BootKind, number> = { start: 0, restart: 0, wake: 0 };

  constructor(private readonly opts: SupervisedChildOptions) {
    this.actor = createActor(supervisedMachine, { input: { spec: opts.spec }, inspect: (ev) => this.inspect(ev) });
    owners.set(this.actor, this);
    this.actor.subscribe((snap) => {
      if (snap.status === 'done') this.stopWaiters.splice(0).forEach((w) => w());
      if (snap.value === 'idleStopped' || snap.value === 'exited' || snap.value === 'failed') this.stopWaiters.splice(0).forEach((w) => w());
    });
    this.actor.start();
  }

  get state(): string {
    return statePath(this.actor.getSnapshot().value);
  }

  /** Processes started after a crash, a hang or a failed boot (what the restart intensity counts). */
  get restarts(): number {
    return this.started.restart;
  }

  /** Processes started for an idle-stopped (or closed) session's next message: planned, not failures. */
  get wakes(): number {
    return this.started.wake;
  }

  get failed(): boolean {
    return this.state === 'failed';
  }

  /**
   * An operator's revive of a child that failed for good (spec/daemon.md §Supervision): it rests as
   * an idle-stopped one does, its restart window cleared, and its next message wakes it. False if it
   * had not failed.
   */
  revive(): boolean {
    if (!this.failed) return false;
    // What was queued was answered session_failed when it failed: nothing waits for the next process.
    this.inFlight = this.queuedWork();
    // Its restarts count again from 0, as the window the intensity judges them in starts afresh (the
    // machine's REVIVE), and as for a failed session no child holds (its next child is a new one).
    // Until 2026-12-06 a revived child a client held went on showing the restarts it failed with.
    this.started.restart = 0;
    this.actor.send({ type: 'REVIVE' });
    return true;
  }

  /** Delivers a message now if the child serves, else when it does (waking an idle-stopped child). */
  send(msg: Record<string, unknown>): void {
    this.touch();
    const state = this.state;
    if ((state === 'ready' || state === 'busy') && this.proc?.alive) {
      void this.proc.send(msg);
      return;
    }
    this.queue.push(msg);
    if (state === 'idleStopped') {
      this.bootKind = 'wake';
      this.actor.send({ type: 'WAKE' });
    }
  }

  /**
   * Replaces the first queued message that `amend` returns a replacement for (the boot adds what a
   * pooled child still needs to the session's first request).
   */
  amendFirstQueued(amend: (msg: Record<string, unknown>) => Record<string, unknown> | undefined): void {
    for (let i = 0; i < this.queue.length; i++) {
      const replaced = amend(this.queue[i]!);
      if (replaced) return void (this.queue[i] = replaced);
    }
  }

  /** Messages queued and not delivered (handed back when the session fails or stops). */
  drainQueue(): Record<string, unknown>[] {
    return this.queue.splice(0);
  }

  /**
   * Takes the request of id `id` out of the queue undelivered (its client withdrew it while the
   * process was starting): true if it was there, so no process has seen it.
   */
  unqueue(id: unknown): boolean {
    const i = this.queue.findIndex((m) => m.id === id && m.method !== undefined);
    if (i < 0) return false;
    this.queue.splice(i, 1);
    return true;
  }

  /** Prompts and loads waiting in the queue: work the next process will have in flight. */
  private queuedWork(): number {
    return this.queue.filter((m) => m.id !== undefined && (m.method === 'session/prompt' || m.method === 'session/load')).length;
  }

  /** Ids of the requests waiting in the queue: no process has seen them, so none died with one. */
  queuedRequestIds(): Set<unknown> {
    return new Set(this.queue.filter((m) => m.id !== undefined && m.method !== undefined).map((m) => m.id));
  }

  /** Work is in flight (a prompt, a replay): the child is busy and must not be idle-stopped. */
  begin(): void {
    if (this.inFlight++ === 0) this.actor.send({ type: 'BUSY' });
    this.touch();
  }

  end(): void {
    if (this.inFlight > 0 && --this.inFlight === 0) this.actor.send({ type: 'IDLE' });
    this.touch();
  }

  /** Stops the child and resolves once it is down. `idle`/`closed` can be woken; the others are final. */
  stop(reason: 'idle' | 'closed' | 'shutdown' | 'deleted'): Promise<void> {
    const s = this.state;
    if (s === 'exited' || s === 'failed' || (s === 'idleStopped' && (reason === 'idle' || reason === 'closed'))) return Promise.resolve();
    const done = new Promise<void>((r) => this.stopWaiters.push(r));
    this.actor.send({ type: 'STOP', reason });
    return done;
  }

  /**
   * The session is forgotten by its owner (it rests: no process, no client): the machine stops and
   * the timers go, so nothing of it stays reachable.
   */
  dispose(): void {
    clearTimeout(this.idleTimer);
    this.stopWatchdog();
    this.queue = [];
    // Stopping the actor is bookkeeping, not a transition of the child: the inspector is not told.
    this.disposed = true;
    this.actor.stop();
  }

  private disposed = false;

  /** The machine's `spawn` action. */
  spawnAction(): void {
    queueMicrotask(() => void this.spawn());
  }

  /** The machine's `stopChild` action. */
  stopAction(): void {
    if (this.proc?.alive) void this.proc.stop(this.opts.spec.shutdownMs);
    // Stopped before a process arrived (still waiting for one): there is nothing to wait for.
    else queueMicrotask(() => this.actor.send({ type: 'EXITED', code: 0, signal: null, reason: 'exit', at: Date.now() }));
  }

  private async spawn(): Promise<void> {
    const kind: BootKind = this.started.start === 0 ? 'start' : this.bootKind === 'wake' ? 'wake' : 'restart';
    this.bootKind = 'restart';
    let proc: ChildProcessHandle;
    try {
      proc = await this.opts.acquire();
    } catch (err) {
      const s = this.state;
      if (s === 'spawning' || s === 'restarting') this.opts.onSpawnFailed(isTroupeError(err) ? err : new TroupeError('capacity_exceeded', `cannot start a process for the session: ${String(err)}`));
      // The owner answered what was queued: nothing is in flight for the next process.
      this.inFlight = this.queuedWork();
      return;
    }
    // Stopped while waiting for a process (shutdown, delete): it is not needed any more.
    const s = this.state;
    if (s !== 'spawning' && s !== 'restarting') return void proc.stop(this.opts.spec.shutdownMs);
    this.proc = proc;
    this.pid = proc.pid;
    this.started[kind]++;
    this.watchdog.forgetCpu();
    proc.attach({
      message: (m) => this.opts.onMessage(m),
      ...(this.opts.onUpdates ? { updates: (b: UpdateLine[]) => this.opts.onUpdates!(b) } : {}),
      control: (c) => this.opts.onControl(c),
      heard: (from) => (from === 'stdout' ? this.alive() : this.feedWatchdog()),
      exit: (e) => this.exited(proc, e),
    });
    this.actor.send({ type: 'SPAWNED', pid: proc.pid });
    // Loading code takes a while on a busy machine: heartbeats are due only once the child said hello
    // (a pooled child said it while it waited; one that has not yet has what is left of its start-up time).
    this.feedWatchdog(proc.saidHello ? undefined : startupLeftMs(proc.spawnedAt, this.opts.startupTimeoutMs));
    this.opts.boot(proc, kind).then(
      () => {
        if (this.proc !== proc || !proc.alive) return;
        this.actor.send({ type: 'READY' });
        // Work begun while the child was stopped or starting (a prompt that woke it) is still in
        // flight: the child is busy, and the idle stop must not take it away mid-prompt.
        if (this.inFlight > 0) this.actor.send({ type: 'BUSY' });
        for (const m of this.queue.splice(0)) void proc.send(m);
        this.touch();
      },
      (err) => {
        // A process that died meanwhile (stopped for a close or a delete, or crashed: its exit is
        // reported as such) is not news here.
        if (proc.alive) this.opts.logger.warn('child failed to boot', { pid: proc.pid, error: String(err) });
        else this.opts.logger.debug('child exited while it booted', { pid: proc.pid, error: String(err) });
        if (this.proc === proc && proc.alive && !this.abandoned.has(proc)) this.abandon({ type: 'BOOT_FAILED', reason: String(err) }, proc);
      },
    );
  }

  private exited(proc: ChildProcessHandle, exit: ChildExit): void {
    if (this.proc !== proc || this.abandoned.has(proc)) return;
    this.stopWatchdog();
    clearTimeout(this.idleTimer);
    // What was in flight died with the process (the relay fails it); what is still queued is not lost.
    this.inFlight = this.queuedWork();
    const before = this.state;
    this.actor.send({ type: 'EXITED', code: exit.code, signal: exit.signal, reason: exit.reason, at: Date.now() });
    // The dead process (its pipes, buffers and stderr tail) is not kept for as long as the session is.
    if (this.proc === proc) this.proc = undefined;
    this.report(exit, before);
    // Work that came while the child was being stopped (a session closed, then opened again at
    // once) goes to a new one.
    if (this.state === 'idleStopped' && this.queue.length > 0) {
      this.bootKind = 'wake';
      this.actor.send({ type: 'WAKE' });
    }
  }

  /**
   * Gives up on a live process (hung, or failed to boot): it is killed, and reported as crashed now
   * rather than when its exit arrives, which may be after its replacement started.
   */
  private abandon(event: { type: 'HUNG' } | { type: 'BOOT_FAILED'; reason: string }, proc: ChildProcessHandle): void {
    this.abandoned.add(proc);
    this.stopWatchdog();
    this.inFlight = this.queuedWork();
    const before = this.state;
    this.actor.send(event);
    this.report({ code: null, signal: 'SIGKILL', reason: event.type === 'HUNG' ? 'hung' : 'boot_failed', stderrTail: '' }, before);
  }

  private readonly abandoned = new WeakSet<ChildProcessHandle>();

  private report(exit: ChildExit, before: string): void {
    const after = this.state;
    const crashed = before !== 'stopping' && (after === 'backoff' || after === 'failed');
    if (exit.reason === 'out_of_memory') this.opts.logger.warn('child exceeded its memory budget and is restarted', { pid: this.pid });
    this.opts.onExit(exit, { crashed, willRestart: after === 'backoff', failed: after === 'failed' });
  }

  /**
   * Output on stdout: the child works (postponing its idle stop), and it is not hung, whatever became
   * of its heartbeats: those travel on fd 3 behind its records, which a saturated daemon can read
   * late. A child whose loop is stuck writes nothing anywhere, and is still found.
   */
  private alive(): void {
    this.touch();
    if (this.state !== 'spawning' && this.state !== 'initializing') this.feedWatchdog();
  }

  /** Any sign of life or work postpones the idle stop. */
  private touch(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      if (this.state !== 'ready' || this.inFlight > 0) return;
      if (this.opts.quiet && !this.opts.quiet()) return this.touch();
      this.actor.send({ type: 'IDLE_TIMEOUT' });
    }, this.opts.idleMs);
    this.idleTimer.unref();
  }

  private feedWatchdog(timeoutMs = this.opts.heartbeatTimeoutMs): void {
    this.watchdog.feed(timeoutMs);
  }

  private stopWatchdog(): void {
    this.watchdog.stop();
  }

  /** The state last reported to onTransition. */
  private reported: string | undefined;

  private inspect(ev: InspectionEvent): void {
    if (ev.type !== '@xstate.snapshot' || !this.opts.onTransition || this.disposed) return;
    const value = (ev.snapshot as { value?: unknown }).value;
    if (value === undefined) return;
    // Transitions only, as the session and turn machines report theirs (transition-recorder.ts): an
    // event the machine takes without changing state (a message's BUSY while idle-stopped, before its
    // WAKE; a STOP while stopping) is none. Until 2026-12-07 each was reported, and the inspector
    // showed `child → idleStopped on BUSY` and flashed an edge the machine does not have.
    const state = statePath(value);
    if (state === this.reported && ev.event.type !== 'xstate.init') return;
    this.reported = state;
    // What watches the machine (the inspector's feeds, /metrics) must not stop it: an exception
    // thrown here reaches XState's event loop, which then takes no more events, and the session's
    // process would never be supervised again.
    try {
      this.opts.onTransition(state, ev.event.type, Date.now());
    } catch (err) {
      this.opts.logger.error('a watcher of a child machine failed; the child goes on', { pid: this.pid, state, error: String(err) });
    }
  }
}
