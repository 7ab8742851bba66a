/**
 * The daemon's side of its spawner process (src/actors/spawner.process.ts, spec/daemon.md §Spawner):
 * children are started there, so that the fork and the wait for the child's exec never hold the
 * daemon's loop, and their pipes come back here. A `SpawnedChild` is what a `ChildProcessHandle`
 * drives: the four pipes, the pid, a kill, and one close once the process has exited and its output
 * pipes have ended (as Node's own 'close' of a child process, so that no output is lost behind it).
 *
 * The spawner is started on the first spawn and again on the first spawn after it died. A spawner
 * that dies leaves its children running (their pipes are here): they are then killed by pid, and
 * their close says nothing of how they exited (code and signal null).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Socket } from 'node:net';
import type { Readable, Writable } from 'node:stream';
import type { Logger } from '../core/ports.js';
import type { SpawnerReport, SpawnerRequest } from './spawner.process.js';

/** The spawner's script; its command line names it (how tests and benches find the process). */
export const SPAWNER_SCRIPT = fileURLToPath(new URL('./spawner.process.js', import.meta.url));

export interface SpawnRequest {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
}

/** A failed spawn, as Node reports one: `code` is the errno name (EMFILE, E2BIG, ENOENT…). */
export class SpawnError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export class SpawnedChild {
  private exit?: { code: number | null; signal: string | null };
  private openOutputs = 3;
  private closed = false;
  private readonly closeWaiters: ((code: number | null, signal: string | null) => void)[] = [];

  constructor(
    readonly pid: number,
    readonly stdin: Writable,
    readonly stdout: Readable,
    readonly stderr: Readable,
    readonly control: Readable,
    private readonly signal: (signal: NodeJS.Signals) => void,
  ) {
    for (const out of [stdout, stderr, control]) {
      out.on('error', () => undefined); // a reset at the child's death: its end follows
      // A pipe of a child that died before the hand-over ended may have closed already, while it
      // waited for the others (Node ends a pipe at its EOF when nothing is buffered).
      if (out.closed) this.openOutputs--;
      else
        out.once('close', () => {
          this.openOutputs--;
          this.closeIfDone();
        });
    }
  }

  /** Once: after the process exited and stdout, stderr and the control channel ended. */
  onClose(listener: (code: number | null, signal: string | null) => void): void {
    // Already closed: a child dead before the hand-over can close with its exit report, which comes
    // in the same read as `handed`, before the spawn's promise has reached anyone.
    if (this.closed) listener(this.exit!.code, this.exit!.signal);
    else this.closeWaiters.push(listener);
  }

  /** Until it is closed: a spawner's child it has reaped ignores it; an orphan's pid is still its own while its pipes are open. */
  kill(signal: NodeJS.Signals = 'SIGKILL'): void {
    if (!this.closed) this.signal(signal);
  }

  /**
   * @internal The spawner's report of the exit; `null`, `null` when its spawner died and none will
   * come (it then closes when its outputs end).
   */
  exited(code: number | null, signal: string | null): void {
    this.exit ??= { code, signal };
    this.closeIfDone();
  }

  private closeIfDone(): void {
    if (this.closed || !this.exit || this.openOutputs > 0) return;
    this.closed = true;
    (this.stdin as Socket).destroy();
    for (const w of this.closeWaiters.splice(0)) w(this.exit.code, this.exit.signal);
  }
}

interface Pending {
  spawned: Promise<SpawnedChild>;
  resolve: (child: SpawnedChild) => void;
  reject: (err: Error) => void;
  pid?: number;
  pipes: Socket[];
}

export class ChildSpawner {
  private proc?: ChildProcess;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly live = new Map<number, SpawnedChild>();
  private closing = false;

  /**
   * `env` is the spawner process's own (its children get theirs with each request); `orphanGraceMs`,
   * how long its children may outlive this process before the spawner sends SIGTERM, and SIGKILL
   * after as long again.
   */
  constructor(
    private readonly logger: Logger,
    private readonly env: NodeJS.ProcessEnv = process.env,
    private readonly orphanGraceMs = 5_000,
  ) {}

  /** Starts a process; rejects with a SpawnError when none could be started. */
  spawn(request: SpawnRequest): Promise<SpawnedChild> {
    if (this.closing) return Promise.reject(new SpawnError('ESHUTDOWN', 'the daemon is stopping'));
    const short = descriptorShortage();
    if (short) return Promise.reject(short);
    const proc = this.spawner();
    const id = this.nextId++;
    let resolve!: (child: SpawnedChild) => void;
    let reject!: (err: Error) => void;
    const spawned = new Promise<SpawnedChild>((res, rej) => ((resolve = res), (reject = rej)));
    this.pending.set(id, { spawned, resolve, reject, pipes: [] });
    this.holdLoop();
    this.send(proc, { op: 'spawn', id, ...request });
    return spawned;
  }

  /** The spawner process's pid while it runs. */
  get pid(): number | undefined {
    return this.proc?.pid;
  }

  /** Number of children started and not yet closed. */
  get children(): number {
    return this.live.size;
  }

  /**
   * Lets the spawner go and waits for it to exit: at once when it has no children left; otherwise it
   * waits for them (spawner.process.ts).
   */
  async close(): Promise<void> {
    this.closing = true;
    // A channel closed while a pipe is on its way can leave both sides waiting (Node waits for that
    // pipe's acknowledgement, which can no longer come): the spawns asked for are let finish first.
    while (this.pending.size > 0) await Promise.allSettled([...this.pending.values()].map((p) => p.spawned));
    const proc = this.proc; // (set only while it runs)
    if (!proc) return;
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    proc.ref(); // waited for now
    if (proc.connected) proc.disconnect();
    await exited;
  }

  private spawner(): ChildProcess {
    if (this.proc) return this.proc;
    // No inherited node flags (an --inspect or --cpu-prof of the daemon is the daemon's alone); a
    // small heap is all it needs. A session of its own (setsid), its children with it: the signals of
    // the daemon's terminal (Ctrl-C, its close's SIGHUP, Ctrl-Z) go to the terminal's foreground
    // process group, and a child there stopped or died of them on its own, before its daemon stopped
    // it (one still booting has no handler yet): a turn cut off, a pooled child taken for dead and
    // replaced while the daemon stopped (until 2026-12-07). The daemon alone stops its children. Not
    // one session per child: a `kill -9` of the daemon's whole group then leaves this process to end
    // any child that outlives it (spawner.process.ts, letGo).
    const proc = fork(SPAWNER_SCRIPT, [String(this.orphanGraceMs)], { execArgv: ['--max-old-space-size=64', '--no-warnings'], env: this.env, stdio: ['ignore', 'ignore', 'inherit', 'ipc'], serialization: 'json', detached: true });
    this.proc = proc;
    proc.on('message', (m: SpawnerReport, pipe?: Socket) => this.onReport(m, pipe));
    proc.on('error', (err) => this.logger.error('spawner process error', { error: String(err) }));
    proc.once('exit', (code, signal) => this.spawnerExited(code, signal));
    proc.unref();
    return proc;
  }

  private onReport(m: SpawnerReport, pipe?: Socket): void {
    this.take(m, pipe);
    this.holdLoop();
  }

  private take(m: SpawnerReport, pipe?: Socket): void {
    if (m.op === 'exit') {
      this.live.get(m.id)?.exited(m.code, m.signal);
      return;
    }
    if (m.op === 'swept') {
      this.logger.warn('a session process died with commands still running; stopping them', { pid: m.pid, processes: m.processes });
      return;
    }
    const p = this.pending.get(m.id);
    if (!p) return;
    if (m.op === 'failed') {
      this.pending.delete(m.id);
      p.reject(new SpawnError(m.code, m.message));
    } else if (m.op === 'spawned') p.pid = m.pid;
    else if (m.op === 'stdio' && pipe) p.pipes[m.fd] = pipe;
    else if (m.op === 'handed') {
      this.pending.delete(m.id);
      const proc = this.proc!;
      const kill = (signal: NodeJS.Signals) => {
        // Its spawner gone (or let go), the pid is still the child's while its pipes are open.
        if (proc.connected) this.send(proc, { op: 'kill', id: m.id, signal });
        else killPid(p.pid!, signal);
      };
      const [stdin, stdout, stderr, control] = p.pipes;
      if (!stdin || !stdout || !stderr || !control) {
        // Node could not give this process a pipe: it has no descriptor left for it.
        kill('SIGKILL');
        p.pipes.forEach((pipe) => pipe?.destroy());
        return p.reject(new SpawnError('EMFILE', `spawn EMFILE: the daemon had no file descriptor left for the child's pipes`));
      }
      const child = new SpawnedChild(p.pid!, stdin, stdout, stderr, control, kill);
      this.live.set(m.id, child);
      child.onClose(() => {
        this.live.delete(m.id);
        this.holdLoop();
      });
      p.resolve(child);
    }
  }

  private spawnerExited(code: number | null, signal: string | null): void {
    this.proc = undefined;
    const lost = [...this.pending.values()];
    this.pending.clear();
    if (!this.closing) this.logger.error('the spawner process exited; starting another for the next child', { code, signal, children: this.live.size, spawning: lost.length });
    for (const p of lost) {
      p.pipes.forEach((pipe) => pipe?.destroy());
      if (p.pid !== undefined) killPid(p.pid, 'SIGKILL');
      p.reject(new SpawnError('ESPAWNER', 'the spawner process exited during the spawn'));
    }
    // Their exits will not be reported: each closes when its pipes end (killed by pid if need be).
    for (const child of this.live.values()) child.exited(null, null);
  }

  private send(proc: ChildProcess, message: SpawnerRequest): void {
    try {
      proc.send(message);
    } catch (err) {
      // The channel closed meanwhile: the spawner's exit fails what was pending.
      this.logger.warn('could not reach the spawner process', { error: String(err) });
    }
  }

  /** The channel keeps the process alive only while a spawn is pending or a child is live. */
  private holdLoop(): void {
    const channel = (this.proc as (ChildProcess & { channel?: { ref(): void; unref(): void } }) | undefined)?.channel;
    if (!channel) return;
    if (this.pending.size > 0 || this.live.size > 0) channel.ref();
    else channel.unref();
  }
}

/**
 * The child's four pipes take four of the daemon's descriptors, and the daemon needs a few more to go
 * on serving (a connection to accept, the index to write): a spawn is refused unless all of them are
 * free now. When a direct spawn made its pipes here, its own need (eight for a moment) left that room
 * by chance; handed over from the spawner, the pipes would take the very last descriptors.
 */
const DESCRIPTORS_NEEDED = 4 + 8;

function descriptorShortage(): SpawnError | undefined {
  const fds: number[] = [];
  try {
    while (fds.length < DESCRIPTORS_NEEDED) fds.push(openSync('/dev/null', 'r'));
    return undefined;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'EMFILE';
    return new SpawnError(code, `spawn ${code}: the daemon has fewer than ${DESCRIPTORS_NEEDED} file descriptors free`);
  } finally {
    fds.forEach((fd) => closeSync(fd));
  }
}

function killPid(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}
