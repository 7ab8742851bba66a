/**
 * A bare NDJSON JSON-RPC client over a child's stdio, for the ACP benchmarks. It is deliberately
 * thinner than the SDK client so that the figures measure the agent, not the client: one JSON.parse
 * per line, responses matched by id, notifications counted. Requests the agent sends back
 * (permission prompts, fs, terminals) are answered minimally; the benchmarks run in bypass mode
 * without client fs/terminal, so none are expected.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

export interface RpcReply {
  result: any;
  /** Milliseconds from writing the request to parsing its response. */
  ms: number;
  /** Notifications received between the request and its response. */
  notifications: number;
  /** performance.now() when the response was parsed. */
  at: number;
}

export class RpcChild {
  /** performance.now() just before spawn(). */
  readonly spawnedAt: number;
  readonly proc: ChildProcess;
  stderr = '';
  notifications = 0;
  private nextId = 1;
  private buf = '';
  private readonly pending = new Map<number, { resolve: (r: RpcReply) => void; reject: (e: Error) => void; t0: number; n0: number; method: string }>();
  private readonly exited: Promise<number | null>;

  /** `controlPipe`: also give the child a pipe on fd 3, as a daemon does (`troupe acp --supervised`). */
  constructor(args: string[], env: NodeJS.ProcessEnv, options: { controlPipe?: boolean } = {}) {
    this.spawnedAt = performance.now();
    this.proc = spawn(process.execPath, args, { env, stdio: options.controlPipe ? ['pipe', 'pipe', 'pipe', 'pipe'] : ['pipe', 'pipe', 'pipe'] });
    this.exited = new Promise((r) => this.proc.once('exit', (code) => r(code)));
    this.proc.stdout!.setEncoding('utf8');
    this.proc.stdout!.on('data', (chunk: string) => this.onData(chunk));
    this.proc.stderr!.on('data', (d) => (this.stderr = (this.stderr + d).slice(-8000)));
    this.proc.once('exit', (code) => {
      for (const p of this.pending.values()) p.reject(new Error(`agent exited (${code}) during ${p.method}; stderr: ${this.stderr.slice(-2000)}`));
      this.pending.clear();
    });
  }

  get pid(): number {
    return this.proc.pid!;
  }

  request(method: string, params: unknown): Promise<RpcReply> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, t0: performance.now(), n0: this.notifications, method });
      this.proc.stdin!.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
    });
  }

  /**
   * PSS, RSS and USS (private pages) of the child in KiB, from /proc/<pid>/smaps_rollup. PSS splits
   * shared pages (the node binary, libraries) among the processes mapping them, so it falls as more
   * node processes run; USS does not depend on what else runs.
   */
  memory(): { pssKiB: number; rssKiB: number; ussKiB: number } {
    const text = readFileSync(`/proc/${this.pid}/smaps_rollup`, 'utf8');
    const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN);
    return { pssKiB: field('Pss'), rssKiB: field('Rss'), ussKiB: field('Private_Clean') + field('Private_Dirty') };
  }

  /** Ends stdin and waits for exit (SIGKILL after 5 s so a stuck child cannot hang the bench). */
  async close(): Promise<number | null> {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return this.proc.exitCode;
    this.proc.stdin!.end();
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), 5000);
    const code = await this.exited;
    clearTimeout(timer);
    return code;
  }

  kill(): void {
    if (this.proc.exitCode === null && this.proc.signalCode === null) this.proc.kill('SIGKILL');
  }

  private onData(chunk: string): void {
    this.buf += chunk;
    let nl;
    while ((nl = this.buf.indexOf('\n')) >= 0) {
      const line = this.buf.slice(0, nl);
      this.buf = this.buf.slice(nl + 1);
      if (line.trim()) this.onMessage(JSON.parse(line));
    }
  }

  private onMessage(msg: any): void {
    if (msg.method !== undefined && msg.id === undefined) {
      this.notifications++;
      return;
    }
    if (msg.method !== undefined) {
      // A request from the agent: allow permission prompts, refuse anything else.
      const reply =
        msg.method === 'session/request_permission'
          ? { jsonrpc: '2.0', id: msg.id, result: { outcome: { outcome: 'selected', optionId: 'allow_once' } } }
          : { jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: `the bench client does not serve ${msg.method}` } };
      this.proc.stdin!.write(JSON.stringify(reply) + '\n');
      return;
    }
    const p = this.pending.get(msg.id);
    if (!p) return;
    this.pending.delete(msg.id);
    if (msg.error) p.reject(new Error(`${p.method} failed: ${JSON.stringify(msg.error)}`));
    else {
      const at = performance.now();
      p.resolve({ result: msg.result, ms: at - p.t0, notifications: this.notifications - p.n0, at });
    }
  }
}

/**
 * A benchmark's time budget: after `ms`, every child in `live` is killed and the process exits 1
 * (a stuck run must not hold the machine, or CI, for long). Returns `live`, to add children to.
 */
export function benchBudget(name: string, ms: number, live = new Set<RpcChild>()): Set<RpcChild> {
  setTimeout(() => {
    process.stderr.write(`${name}: over its ${ms / 1000} s budget, giving up\n`);
    for (const c of live) c.kill();
    process.exit(1);
  }, ms).unref();
  return live;
}

/**
 * `node -e ""` spawn → exit, in ms: the process floor, in an environment built from nothing as the
 * benches build their children's. Inherited, a variable such as NODE_EXTRA_CA_CERTS (set on this
 * machine to the system's 144 roots: Node then builds its root store at start) added about 40 ms of
 * Node's own start that no child measured against it paid.
 */
export function nodeSpawnToExitMs(): Promise<number> {
  const t0 = performance.now();
  const p = spawn(process.execPath, ['-e', ''], { stdio: 'ignore', env: { PATH: process.env.PATH ?? '' } });
  return new Promise((resolve, reject) => p.once('exit', (code) => (code === 0 ? resolve(performance.now() - t0) : reject(new Error(`node -e "" exited ${code}`)))));
}

/**
 * The checkouts an A/B bench runs, by name: `before`, another checkout's built bin/troupe.js
 * (BENCH_TROUPE_BIN_A), when set, and `after`, this one's.
 */
export function abCheckouts(): Record<string, string> {
  const bins: Record<string, string> = {};
  if (process.env.BENCH_TROUPE_BIN_A) bins.before = resolve(process.env.BENCH_TROUPE_BIN_A);
  bins.after = resolve('bin/troupe.js');
  return bins;
}

/** The checkouts' names in the order round `round` runs them: alternated, so that neither always goes first. */
export function inRoundOrder(bins: Record<string, string>, round: number): string[] {
  const names = Object.keys(bins);
  return round % 2 ? names.reverse() : names;
}
