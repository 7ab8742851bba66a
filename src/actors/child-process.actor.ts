/**
 * One `troupe acp --supervised` process as the daemon sees it: JSON-RPC lines in and out on
 * stdin/stdout (kept raw), control frames on fd 3, stderr kept as a short tail for diagnosis, and a
 * stop sequence of end stdin → SIGTERM → SIGKILL (MCP SDK stdio client, OTP shutdown).
 */
import type { Readable } from 'node:stream';
import type { Logger } from '../core/ports.js';
import { ControlFrameDecoder } from '../wire/control-frame.codec.js';
import { POOL_INITIALIZE_ID, type ControlMessage } from '../wire/control-messages.js';
import { classifyUpdateLine, type UpdateLine } from '../wire/update-line.js';
import { sampleProcess, type ProcessSample } from './process-sample.js';
import type { ChildSpawner, SpawnedChild } from './child-spawner.js';
import { headOf, tailOf } from '../core/text-cut.js';

export interface ChildLaunch {
  /** `node`, and its arguments from the troupe entry on (a script, or `--snapshot-blob <blob>`). */
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  /** V8 heap budget in MiB (`--max-old-space-size`). */
  maxOldSpaceMb?: number;
}

export interface ChildExit {
  code: number | null;
  signal: string | null;
  /** What the stderr tail says, e.g. `out_of_memory`, else `exit` / `signal`. */
  reason: string;
  stderrTail: string;
}

export interface ChildHandlers {
  message(msg: Record<string, unknown>): void;
  /**
   * `session/update` lines recognised without parsing (src/wire/update-line.ts), in order, as one
   * batch per run of consecutive updates in a read. Without this handler every line is parsed and
   * goes to `message`.
   */
  updates?(batch: UpdateLine[]): void;
  control(msg: ControlMessage): void;
  /**
   * Bytes came on stdout or the control channel: part of a line or a frame is enough. The child's
   * loop turned to write them, which is what its watchdog wants to know (a line of several MiB, or a
   * frame behind one, arrives over many reads).
   */
  heard?(from: 'stdout' | 'control'): void;
  exit(info: ChildExit): void;
}

const STDERR_TAIL = 8 * 1024;

/**
 * The longest stdout line taken from a child, in characters: far above any line a child writes (its
 * events are at most 1 MiB; a prompt's content, shown whole, at most what a 16 MiB request carried),
 * and far below V8's longest string, which would throw in the daemon. A
 * child over it writes no protocol any more: it is killed, and restarted like any crash.
 */
export const MAX_CHILD_LINE_CHARS = 64 * 1024 * 1024;

export class ChildProcessHandle {
  /** Starts a child through the spawner; rejects with a SpawnError when no process started. */
  static async start(spawner: ChildSpawner, launch: ChildLaunch, logger: Logger): Promise<ChildProcessHandle> {
    // Node options (the heap budget) go before the entry.
    const execArgs = launch.maxOldSpaceMb ? [`--max-old-space-size=${launch.maxOldSpaceMb}`] : [];
    return new ChildProcessHandle(await spawner.spawn({ command: launch.command, args: [...execArgs, ...launch.args], env: launch.env }), logger);
  }

  private stderrTail = '';
  private exited?: ChildExit;
  private readonly exitWaiters: ((e: ChildExit) => void)[] = [];
  private handlers?: ChildHandlers;
  /** Resolves when the child has said hello on its control channel (its code is loaded), or exited. */
  readonly started: Promise<void>;
  private markStarted!: () => void;
  private helloHeard = false;
  /** Lines and frames that arrived before handlers were attached (a pooled child warming up). */
  private early: (() => void)[] = [];
  /**
   * The latest heartbeat that came before handlers were attached, the others dropped: a pooled child
   * beats every second while it waits, for hours on a quiet daemon, and each one held here until a
   * session took it grew the daemon for as long (and was replayed to that session, all at once).
   */
  private earlyBeat?: ControlMessage;
  /**
   * Set once `initializeAhead` was called: whether the child answered that `initialize` with
   * protocol 1 (false if it failed or the child died first).
   */
  initializedAhead?: Promise<boolean>;
  private aheadAnswered?: (ok: boolean) => void;
  /**
   * Told of each sign of life while no session has attached: the pool's watchdog over a child that
   * waits in it (child-pool.actor.ts).
   */
  private heardWhileWaiting?: (from: 'stdout' | 'control') => void;

  /** When the process was spawned (ms since epoch): its start-up time counts from here. */
  readonly spawnedAt = Date.now();

  constructor(
    private readonly proc: SpawnedChild,
    private readonly logger: Logger,
  ) {
    this.started = new Promise((resolve) => (this.markStarted = resolve));
    this.proc.stdin.on('error', () => undefined); // EPIPE after death: the exit handler reports it
    this.readLines(this.proc.stdout);
    this.readControl(this.proc.control);
    this.proc.stderr.on('data', (d: Buffer) => {
      const text = d.toString();
      this.stderrTail = tailOf(this.stderrTail + text, STDERR_TAIL);
      for (const line of text.split('\n')) if (line.trim()) this.logger.debug('child stderr', { pid: this.proc.pid, line: headOf(line, 500) });
    });
    this.proc.onClose((code, signal) => {
      const reason = this.killedFor ?? (/heap out of memory|Allocation failed/i.test(this.stderrTail) ? 'out_of_memory' : signal ? 'signal' : 'exit');
      this.exited = { code, signal, reason, stderrTail: this.stderrTail };
      this.markStarted();
      this.dispatch(() => this.handlers?.exit(this.exited!));
      this.exitWaiters.splice(0).forEach((w) => w(this.exited!));
    });
  }

  get pid(): number {
    return this.proc.pid;
  }

  /** Whether its control channel has spoken (its first message is its hello): its code is loaded. */
  get saidHello(): boolean {
    return this.helloHeard;
  }

  get alive(): boolean {
    return this.exited === undefined;
  }

  /** Receives everything from now on (and what arrived before, in order). */
  attach(handlers: ChildHandlers): void {
    this.handlers = handlers;
    this.heardWhileWaiting = undefined;
    const early = this.early;
    this.early = [];
    early.forEach((f) => f());
    const beat = this.earlyBeat;
    this.earlyBeat = undefined;
    if (beat) handlers.control(beat);
  }

  /** Until a session attaches: `listener` hears of the child's signs of life (see ChildHandlers.heard). */
  watchWhileWaiting(listener: ((from: 'stdout' | 'control') => void) | undefined): void {
    if (!this.handlers) this.heardWhileWaiting = listener;
  }

  private heard(from: 'stdout' | 'control'): void {
    if (this.handlers) this.handlers.heard?.(from);
    else this.heardWhileWaiting?.(from);
  }

  /** Writes one JSON-RPC message; resolves when the pipe has taken it (backpressure). */
  send(message: Record<string, unknown>): Promise<void> {
    const stdin = this.proc.stdin;
    if (!this.alive) return Promise.resolve();
    return new Promise((resolve) => {
      if (stdin.write(JSON.stringify(message) + '\n')) resolve();
      else stdin.once('drain', resolve);
    });
  }

  /**
   * Sends `initialize` before any session needs the child (a pooled child, while it waits): the
   * answer is consumed here, and the session that takes the child skips that round trip. The
   * client's own capabilities are not known yet; the session gives them with its first request
   * (spec/daemon.md §Warm pool).
   */
  initializeAhead(params: Record<string, unknown>): Promise<boolean> {
    this.initializedAhead ??= new Promise<boolean>((resolve) => {
      this.aheadAnswered = resolve;
      void this.whenExited().then(() => resolve(false));
      void this.send({ jsonrpc: '2.0', id: POOL_INITIALIZE_ID, method: 'initialize', params });
    });
    return this.initializedAhead;
  }

  whenExited(): Promise<ChildExit> {
    return this.exited ? Promise.resolve(this.exited) : new Promise((r) => this.exitWaiters.push(r));
  }

  /** End stdin; SIGTERM after `graceMs`; SIGKILL after another `graceMs`. Resolves on exit. */
  async stop(graceMs: number): Promise<ChildExit> {
    if (!this.alive) return this.exited!;
    this.proc.stdin.end();
    const exit = this.whenExited();
    const term = setTimeout(() => this.alive && this.proc.kill('SIGTERM'), graceMs);
    const kill = setTimeout(() => this.alive && this.proc.kill('SIGKILL'), graceMs * 2);
    const info = await exit;
    clearTimeout(term);
    clearTimeout(kill);
    return info;
  }

  kill(): void {
    if (this.alive) this.proc.kill('SIGKILL');
  }

  /** Its scheduler state and CPU time now, where the system tells (process-sample.ts). */
  sample(): ProcessSample | undefined {
    return this.alive ? sampleProcess(this.pid) : undefined;
  }

  private dispatch(f: () => void): void {
    if (this.handlers) f();
    else this.early.push(f);
  }

  /** Why the daemon killed the child, when it did so for what it wrote (its exit reason). */
  private killedFor?: string;

  private readLines(stream: Readable): void {
    // A decoder, not chunk.toString(): a multi-byte character may straddle two reads.
    stream.setEncoding('utf8');
    // The start of a line not ended yet, as the reads that brought it: each read is searched for a
    // newline once, and joined when it comes (rest + chunk and a search from 0 at every read would
    // copy and scan a long line once per 64 KiB read: seconds of the daemon's loop for a few MiB).
    let rest: string[] = [];
    let restChars = 0;
    stream.on('data', (chunk: string) => {
      if (this.killedFor) return;
      this.heard('stdout');
      const first = chunk.indexOf('\n');
      if (first < 0) {
        restChars += chunk.length;
        if (restChars > MAX_CHILD_LINE_CHARS) return void ((rest = []), this.killFor('oversized_line', restChars));
        rest.push(chunk);
        return;
      }
      const text = rest.length > 0 ? rest.join('') + chunk : chunk;
      let nl = restChars + first;
      rest = [];
      const updates = this.handlers?.updates ? this.handlers : undefined;
      let batch: UpdateLine[] | undefined;
      let start = 0;
      for (; nl >= 0; nl = text.indexOf('\n', start)) {
        const line = text.slice(start, nl);
        start = nl + 1;
        if (updates) {
          const u = classifyUpdateLine(line);
          if (u) {
            (batch ??= []).push(u);
            continue;
          }
          // Keep the order: the updates before this line go out before it.
          if (batch) updates.updates!(batch), (batch = undefined);
        }
        this.parseLine(line);
      }
      if (start < text.length) rest.push(text.slice(start));
      restChars = text.length - start;
      if (batch) updates!.updates!(batch);
    });
  }

  /** The child broke the protocol beyond use: killed, its exit reported with `reason`. */
  private killFor(reason: string, chars: number): void {
    this.killedFor = reason;
    this.logger.error('child wrote a stdout line over the limit; killing it', { pid: this.proc.pid, chars, limit: MAX_CHILD_LINE_CHARS });
    this.kill();
  }

  private parseLine(line: string): void {
    if (!line.trim()) return;
    let msg: unknown;
    try {
      msg = JSON.parse(line);
    } catch {
      this.logger.warn('child wrote a non-JSON line on stdout', { pid: this.proc.pid, line: headOf(line, 200) });
      return;
    }
    if (!msg || typeof msg !== 'object' || Array.isArray(msg)) return;
    const m = msg as { id?: unknown; method?: unknown; result?: { protocolVersion?: unknown } };
    if (m.id === POOL_INITIALIZE_ID && m.method === undefined && this.aheadAnswered) {
      this.aheadAnswered(m.result?.protocolVersion === 1);
      this.aheadAnswered = undefined;
      return;
    }
    const handlers = this.handlers;
    if (handlers) handlers.message(msg as Record<string, unknown>);
    else this.early.push(() => this.handlers?.message(msg as Record<string, unknown>));
  }

  private readControl(stream: Readable): void {
    const decoder = new ControlFrameDecoder();
    stream.on('error', () => undefined);
    stream.on('data', (chunk: Buffer) => {
      this.heard('control');
      let messages: ControlMessage[];
      try {
        messages = decoder.push(chunk);
      } catch (err) {
        this.logger.error('malformed control frame; ignoring the rest of the channel', { pid: this.proc.pid, error: String(err) });
        stream.removeAllListeners('data');
        return;
      }
      if (messages.length && !this.helloHeard) (this.helloHeard = true), this.markStarted();
      for (const m of messages) {
        if (m.t === 'hb' && !this.handlers) this.earlyBeat = m;
        else this.dispatch(() => this.handlers?.control(m));
      }
    });
  }
}
