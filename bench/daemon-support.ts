/**
 * Shared pieces of the daemon benchmark: percentiles, /proc readings (PSS, CPU ticks, children),
 * a `troupe serve` launcher that lets the bench pass node flags (e.g. --cpu-prof) to the daemon
 * only, and SDK clients (HTTP, WebSocket, stdio) that count `session/update`s instead of keeping them.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { Readable, Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk';
import { createHttpStream } from '@agentclientprotocol/sdk/experimental/http-client';
import { createWebSocketStream } from '@agentclientprotocol/sdk/experimental/ws-client';
import WebSocket from 'ws';
import { summarize as summarizeSamples } from './acp-stats.js';
import { SPAWNER_SCRIPT } from '../src/actors/child-spawner.js';

export const BIN = resolve('bin/troupe.js');
export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const round = (x: number, digits = 3): number => Math.round(x * 10 ** digits) / 10 ** digits;

/** Percentiles as the ACP bench computes them, to three decimals here (µs-scale figures). */
export type { Summary } from './acp-stats.js';
export const summarize = (xs: readonly number[], digits = 3) => summarizeSamples(xs, digits);

export const ratio = (a: number, b: number): number => round(a / b, 3);

export interface Target {
  target: string;
  measured: Record<string, number>;
  met: boolean;
}

/** PSS and RSS of a process in KiB (smaps_rollup), or undefined once it is gone. */
export function memoryKb(pid: number): { pss: number; rss: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN);
    return { pss: field('Pss'), rss: field('Rss') };
  } catch {
    return undefined;
  }
}

function stat(pid: number): string[] | undefined {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return s.slice(s.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** utime + stime in clock ticks. */
export function cpuTicks(pid: number): number {
  const f = stat(pid);
  return f ? Number(f[11]) + Number(f[12]) : 0;
}

/**
 * CPU time of every thread of a process in µs: the first field of each task's schedstat is its run
 * time in ns, far finer than the 10 ms ticks of /proc/<pid>/stat (and it includes libuv's threads).
 */
export function threadCpuUs(pid: number): number {
  const { main, other } = threadCpuSplitUs(pid);
  return main + other;
}

/** CPU µs of a process so far: its main thread, and its other threads (GC, compiler, libuv pool) together. */
export function threadCpuSplitUs(pid: number): { main: number; other: number } {
  let main = 0;
  let other = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const us = Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]) / 1000;
      if (tid === String(pid)) main = us;
      else other += us;
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return { main, other };
}

/**
 * {@link threadCpuUs}, or 0 for a process that is gone (or not readable): for the CPU series, which
 * read many processes before and after a run (bench/daemon-stream.ts, daemon-aggregate.ts).
 */
export function processCpuUs(pid: number): number {
  try {
    return threadCpuUs(pid);
  } catch {
    return 0;
  }
}

/** Live (non-zombie) children of a process. */
function directChildren(of: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const f = stat(Number(name));
    if (f && Number(f[1]) === of && f[0] !== 'Z') out.push(Number(name));
  }
  return out;
}

/**
 * The session processes of a server: its children, where a daemon's spawner (its one child,
 * src/actors/spawner.process.ts) stands for the children it started. The spawner itself is not
 * among them (see {@link spawnerPids}): it is idle but for its forks.
 */
export function childPids(parent: number): number[] {
  return directChildren(parent).flatMap((pid) => (isSpawner(pid) ? directChildren(pid) : [pid]));
}

/** A daemon's spawner process (none for another server), whose CPU the series report on its own. */
export function spawnerPids(parent: number): number[] {
  return directChildren(parent).filter(isSpawner);
}

function isSpawner(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(SPAWNER_SCRIPT);
  } catch {
    return false;
  }
}

/**
 * What a streaming series waits for after a daemon's session/new before it times a run: the child
 * the pool starts in place of the one the session took, and then every child idle (`waitIdle`) for
 * `refillQuietMs`. The pool spawns that child a turn or more after the answer (50–100 ms here), and
 * its start has a pause of about 200 ms between loading and its warm-up turn, so an 80 ms idle check
 * alone could pass before it existed or in that pause, and time the run against its boot (until
 * 2026-12-07: bench/README.md, "Why a daemon child seemed to stream at 3× stdio's CPU"). `expect()`
 * goes right before a session/new; a run without one (one session for all runs) waits `quietMs`.
 */
export function refillWaiter(daemonPid: number, quietMs = 80, refillQuietMs = 300): { expect(): void; settle(): Promise<void> } {
  let before: Set<number> | undefined;
  return {
    expect: () => void (before = new Set(childPids(daemonPid))),
    async settle() {
      const known = before;
      before = undefined;
      // Bounded: a daemon at --max-sessions, or one whose pool is off, starts no replacement.
      const deadline = Date.now() + 5_000;
      while (known && Date.now() < deadline && childPids(daemonPid).every((p) => known.has(p))) await sleep(10);
      await waitIdle(() => childPids(daemonPid), known ? refillQuietMs : quietMs);
    },
  };
}

/** Waits until `pids` used no CPU for `quietMs` (a spawned child has finished loading its code). */
export async function waitIdle(pids: () => number[], quietMs = 60, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = -1;
  let since = Date.now();
  for (;;) {
    const now = pids().reduce((a, p) => a + cpuTicks(p), 0) + pids().length * 1e9;
    if (now !== last) (last = now), (since = Date.now());
    else if (Date.now() - since >= quietMs) return;
    if (Date.now() > deadline) throw new Error('processes did not go idle');
    await sleep(10);
  }
}

export interface Served {
  proc: ChildProcess;
  url: string;
  token: string;
  home: string;
  stderr: () => string;
  headers: Record<string, string>;
  stop(): Promise<void>;
}

/**
 * `BENCH_DAEMON_ENV_<NAME>=v` in the bench's environment sets `<NAME>=v` for the daemon it starts
 * (and so its children), e.g. `BENCH_DAEMON_ENV_LD_PRELOAD` or `BENCH_DAEMON_ENV_MALLOC_ARENA_MAX`
 * to try another allocator: the daemon's environment is otherwise built from nothing.
 */
function daemonEnvFromBench(): Record<string, string> {
  const prefix = 'BENCH_DAEMON_ENV_';
  return Object.fromEntries(Object.entries(process.env).filter(([k, v]) => k.startsWith(prefix) && v !== undefined).map(([k, v]) => [k.slice(prefix.length), v!]));
}

/**
 * A real `troupe serve` in `home`, with node flags for the daemon process only. `bin`: another
 * checkout's bin/troupe.js (an A/B run), this one's by default.
 */
export async function startDaemon(opts: { home?: string; args?: string[]; env?: Record<string, string>; nodeArgs?: string[]; bin?: string }): Promise<Served> {
  const home = opts.home ?? mkdtempSync(join(tmpdir(), 'troupe-dbench-'));
  const env = { PATH: process.env.PATH ?? '', HOME: home, TROUPE_HOME: home, TROUPE_DEMO_DELAY_MS: '0', ...opts.env, ...daemonEnvFromBench() };
  const proc = spawn(process.execPath, [...(opts.nodeArgs ?? []), opts.bin ?? BIN, 'serve', '--port', '0', ...(opts.args ?? [])], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  proc.stderr!.on('data', (d) => (err = (err + d).slice(-20_000)));
  const deadline = Date.now() + 30_000;
  while (!existsSync(join(home, 'daemon.json'))) {
    if (proc.exitCode !== null || Date.now() > deadline) throw new Error(`daemon did not start: ${err}`);
    await sleep(20);
  }
  const url = JSON.parse(readFileSync(join(home, 'daemon.json'), 'utf8')).url as string;
  const token = readFileSync(join(home, 'token'), 'utf8').trim();
  return {
    proc,
    url,
    token,
    home,
    stderr: () => err,
    headers: { Authorization: `Bearer ${token}` },
    stop: () => stopProcess(proc, 40_000),
  };
}

/**
 * The SDK's reference `AcpServer` hosting the troupe agent in-process (bench/daemon-reference.ts), in
 * its own process with `hosts` ready hosts; resolves with its URL once it listens.
 */
export async function startReferenceServer(home: string, env: Record<string, string>, hosts: number): Promise<{ url: string; proc: ChildProcess }> {
  const full = { PATH: process.env.PATH ?? '', HOME: home, TROUPE_HOME: home, TROUPE_DEMO_DELAY_MS: '0', BENCH_REF_HOSTS: String(hosts), ...env };
  // --expose-gc: its `POST /gc` makes a memory reading comparable (bench/daemon-reference.ts).
  const proc = spawn(process.execPath, ['--expose-gc', resolve('dist/bench/daemon-reference.js')], { env: full, stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((res, rej) => {
    createInterface({ input: proc.stdout! }).once('line', res);
    proc.once('exit', (code) => rej(new Error(`reference exited ${code}`)));
  });
  return { url: JSON.parse(line).url, proc };
}

/** The measured commit, and whether src/ differs from it. */
export function gitDescribe(): string {
  // An export built elsewhere has no git: BENCH_COMMIT names the code (bench/README.md).
  if (process.env.BENCH_COMMIT) return process.env.BENCH_COMMIT;
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src'], { encoding: 'utf8' }).trim();
    return dirty ? `${head} (src/ has uncommitted changes)` : head;
  } catch {
    return 'unknown';
  }
}

/** The load averages (1, 5, 15 min), to two decimals. */
export const loadAverages = (): number[] => loadavg().map((x) => Math.round(x * 100) / 100);

/** What a bench's result opens with: which bench, when, on which code and machine, run how. */
export function resultHeader(bench: string, loadAverageAtStart: number[]) {
  return {
    bench,
    date: new Date().toISOString(),
    srcCommit: gitDescribe(),
    node: process.version,
    cpus: cpus().length,
    loadAverageAtStart,
    command: `npm run build && node dist/bench/${bench}.js`,
  };
}

/** The relay floor (bench/relay-floor.ts) in its own process; resolves with its URL once it listens. */
export async function startRelayFloor(): Promise<{ url: string; proc: ChildProcess }> {
  const proc = spawn(process.execPath, [resolve('dist/bench/relay-floor.js')], { env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((res, rej) => {
    createInterface({ input: proc.stdout! }).once('line', res);
    proc.once('exit', (code) => rej(new Error(`relay floor exited ${code}`)));
  });
  return { url: JSON.parse(line).url, proc };
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves on exit. */
export async function stopProcess(proc: ChildProcess, graceMs = 10_000): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  proc.kill('SIGTERM');
  const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** Writes a scripted/replay script into `home` and returns the env that selects it. */
export function scriptEnv(home: string, script: unknown): Record<string, string> {
  const path = join(home, 'bench-script.json');
  writeFileSync(path, JSON.stringify(script));
  return { TROUPE_SCRIPT: path, TROUPE_MODEL: 'scripted/replay' };
}

/** An SDK client that counts `agent_message_chunk` updates per session and wakes waiters. */
export class CountingClient {
  readonly connection: acp.ClientConnection;
  total = 0;
  private readonly chunks = new Map<string, number>();
  private readonly waiters: { sessionId: string; n: number; resolve: () => void }[] = [];

  constructor(stream: acp.Stream) {
    this.connection = acp
      .client()
      .onNotification('session/update', ({ params }) => {
        this.total++;
        if (params.update.sessionUpdate !== 'agent_message_chunk') return;
        const n = (this.chunks.get(params.sessionId) ?? 0) + 1;
        this.chunks.set(params.sessionId, n);
        for (let i = this.waiters.length - 1; i >= 0; i--) {
          const w = this.waiters[i]!;
          if (w.sessionId === params.sessionId && n >= w.n) this.waiters.splice(i, 1), w.resolve();
        }
      })
      .onRequest('session/request_permission', () => ({ outcome: { outcome: 'selected', optionId: 'allow_once' } }))
      .connect(stream);
  }

  static http(url: string, headers: Record<string, string> = {}): CountingClient {
    return new CountingClient(createHttpStream(url + '/acp', { headers }));
  }

  static ws(url: string, headers: Record<string, string> = {}): CountingClient {
    return new CountingClient(createWebSocketStream(url.replace(/^http/, 'ws') + '/acp', { WebSocket: WebSocket as never, headers }));
  }

  get agent(): acp.ClientContext {
    return this.connection.agent;
  }

  /** {@link BenchClient.request} (bench/daemon-lean.ts): any method, untyped. */
  request(method: string, params: unknown): Promise<any> {
    return this.agent.request(method as never, params as never);
  }

  chunkCount(sessionId: string): number {
    return this.chunks.get(sessionId) ?? 0;
  }

  /** Resolves once `n` message chunks of the session have arrived in total. */
  chunksReach(sessionId: string, n: number): Promise<void> {
    if (this.chunkCount(sessionId) >= n) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ sessionId, n, resolve }));
  }

  async init(): Promise<this> {
    await this.agent.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
    return this;
  }

  async newSession(cwd: string): Promise<string> {
    return (await this.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
  }

  close(): void {
    this.connection.close();
  }
}

/** A `troupe acp` process with piped stdin/stdout (stderr ignored). */
export function spawnAcp(env: Record<string, string>): ChildProcess {
  const proc = spawn(process.execPath, [BIN, 'acp'], { env: { PATH: process.env.PATH ?? '', TROUPE_DEMO_DELAY_MS: '0', ...env }, stdio: ['pipe', 'pipe', 'ignore'] });
  proc.stdin!.on('error', () => undefined);
  return proc;
}

/** A `troupe acp` child driven directly over stdio by the SDK client (no daemon in between). */
export class StdioChild {
  readonly client: CountingClient;
  private constructor(readonly proc: ChildProcess) {
    const stream = acp.ndJsonStream(Writable.toWeb(proc.stdin!) as WritableStream<Uint8Array>, Readable.toWeb(proc.stdout!) as ReadableStream<Uint8Array>);
    this.client = new CountingClient(stream);
  }

  static start(env: Record<string, string>): StdioChild {
    return new StdioChild(spawnAcp(env));
  }

  async close(): Promise<void> {
    if (this.proc.exitCode !== null) return;
    const exited = new Promise<void>((r) => this.proc.once('exit', () => r()));
    this.proc.stdin!.end();
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
}
