/**
 * Latency series of the daemon benchmark: `session/new` from the warm pool and cold (pool 0), and
 * request round trips through the relay, each next to its baseline from the same run (the SDK's
 * `AcpServer` hosting the troupe agent in-process; a `troupe acp` child over stdio; a bare process).
 */
import { readFileSync } from 'node:fs';
import type * as acp from '@agentclientprotocol/sdk';
import { nodeSpawnToExitMs } from './acp-rpc.js';
import { LeanHttpClient, type BenchClient } from './daemon-lean.js';
import { childPids, CountingClient, sleep, StdioChild, summarize, waitIdle, type Served, type Summary } from './daemon-support.js';

const now = () => performance.now();

/**
 * The client a `session/new` series is timed through: the lean HTTP client (bench/daemon-lean.ts),
 * judged as the round trip, streaming and aggregate are, or the SDK's (`sdk`), reported beside it:
 * after an idle spell the SDK client alone spends 1.5–2.5 ms of CPU on a request and its answer.
 */
export type SessionNewClient = 'lean' | 'sdk';

const openClient = (kind: SessionNewClient, url: string, headers: Record<string, string> = {}): Promise<BenchClient> =>
  kind === 'lean' ? LeanHttpClient.at(url, headers).init() : CountingClient.http(url, headers).init();

/** Children of a process's main thread (where libuv spawns): cheap enough to poll every millisecond. */
function spawnedBy(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Whether a child has exec'd `troupe acp` (before its exec it still shows the daemon's command line). */
function execed(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('\0acp');
  } catch {
    return false;
  }
}

/**
 * How long the machine is left idle before each `session/new` timed against the warm pool: a warm
 * pool's sample can only be taken once the pool has refilled and its children have been quiet this
 * long, and on this VM a request after an idle spell is slower than one right after another (about
 * 5.2 against 3.9 ms for the reference here: the vCPUs halt and wake), so the reference's samples
 * get the same spell.
 */
export const IDLE_BEFORE_SAMPLE_MS = 80;

/** Waits until the daemon has exactly `n` children, all idle (warm children have loaded their code). */
async function settleChildren(d: Served, n: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (childPids(d.proc.pid!).length !== n) {
    if (Date.now() > deadline) throw new Error(`daemon kept ${childPids(d.proc.pid!).length} children, expected ${n}`);
    await sleep(10);
  }
  await waitIdle(() => childPids(d.proc.pid!), IDLE_BEFORE_SAMPLE_MS);
}

/**
 * Untimed `session/new`s before a timed series, the same number for the daemon and the reference: a
 * process serving its first requests runs code V8 has not compiled yet, and both series are meant
 * to show a server in service (a daemon's pooled children are fresh processes either way).
 */
export const SESSION_NEW_WARMUP = 20;

/**
 * `session/new` through the daemon, one at a time, each after the pool is full and idle (warm) or
 * with no child at all (cold, `--pool 0`); every session is closed again untimed (its child exits).
 * With `freezeRefill`, every other sample freezes (SIGSTOP) the children the daemon spawns while the
 * request runs (the pool's refill) and thaws them after: whether their boot slows `session/new`.
 * `warmup` sessions are made and closed first, untimed. `between` runs before each sample, once the
 * daemon is idle: a baseline's samples, interleaved so that both series see the same machine. Every
 * sample follows IDLE_BEFORE_SAMPLE_MS of idleness, as the reference's do then.
 */
export async function daemonSessionNew(
  d: Served,
  pool: number,
  n: number,
  cwd: string,
  options: { freezeRefill?: boolean; warmup?: number; between?: () => Promise<void>; client?: SessionNewClient } = {},
): Promise<{ all: Summary; refillFrozen?: Summary; samples: { all: number[]; refillFrozen: number[] } }> {
  const { freezeRefill = false, warmup = 0, between, client: kind = 'lean' } = options;
  const client = await openClient(kind, d.url, d.headers);
  const normal: number[] = [];
  const frozenMs: number[] = [];
  try {
    for (let i = 0; i < warmup; i++) {
      await settleChildren(d, pool);
      await client.request('session/close', { sessionId: await client.newSession(cwd) });
    }
    for (let i = 0; i < (freezeRefill ? 2 * n : n); i++) {
      await settleChildren(d, pool);
      if (between) {
        await between();
        // Idle again, as long as before each of the reference's samples.
        await sleep(IDLE_BEFORE_SAMPLE_MS);
      }
      const freeze = freezeRefill && i % 2 === 1;
      const before = new Set(childPids(d.proc.pid!));
      const frozen: number[] = [];
      let watching = freeze;
      const watcher = (async () => {
        while (watching) {
          // Only once it runs `troupe acp`: stopped between fork and exec, it would block the
          // daemon's whole event loop (libuv's spawn waits for the exec).
          for (const p of spawnedBy(d.proc.pid!)) if (!before.has(p) && !frozen.includes(p) && execed(p)) process.kill(p, 'SIGSTOP'), frozen.push(p);
          await sleep(1);
        }
      })();
      const t0 = now();
      const sessionId = await client.newSession(cwd);
      (freeze ? frozenMs : normal).push(now() - t0);
      watching = false;
      await watcher;
      for (const p of frozen) process.kill(p, 'SIGCONT');
      await client.request('session/close', { sessionId });
    }
    await settleChildren(d, pool);
  } finally {
    client.close();
  }
  return { all: summarize(normal), ...(freezeRefill ? { refillFrozen: summarize(frozenMs) } : {}), samples: { all: normal, refillFrozen: frozenMs } };
}

/**
 * `session/new` on the in-process reference (same agent, no children) through one client (lean or the SDK's), each
 * session closed untimed; `run` returns its samples, so that they can be interleaved with another series.
 */
export class ReferenceSessionNews {
  private constructor(
    private readonly client: BenchClient,
    private readonly cwd: string,
  ) {}

  static async open(url: string, cwd: string, kind: SessionNewClient = 'lean'): Promise<ReferenceSessionNews> {
    return new ReferenceSessionNews(await openClient(kind, url), cwd);
  }

  /** `n` session/news (ms each), each after `idleMs` of nothing (0: one right after another). */
  async run(n: number, idleMs = 0): Promise<number[]> {
    const ms: number[] = [];
    for (let i = 0; i < n; i++) {
      if (idleMs > 0) await sleep(idleMs);
      const t0 = now();
      const sessionId = await this.client.newSession(this.cwd);
      ms.push(now() - t0);
      await this.client.request('session/close', { sessionId });
    }
    return ms;
  }

  close(): void {
    this.client.close();
  }
}

/**
 * What a pooled child costs on its own: a `troupe acp` spawned over stdio and left to go idle, then
 * `initialize` followed by `session/new`, the two requests the relay sends a warm child.
 */
export async function stdioFirstSessionNew(n: number, env: Record<string, string>, cwd: string, track: (p: StdioChild) => void): Promise<Summary> {
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const child = StdioChild.start(env);
    track(child);
    await waitIdle(() => [child.proc.pid!], 80);
    const t0 = now();
    await child.client.init();
    await child.client.newSession(cwd);
    ms.push(now() - t0);
    await child.close();
  }
  return summarize(ms);
}

/** The process floor: `node -e ""` spawn → exit. */
export async function nodeSpawnFloor(n: number): Promise<Summary> {
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    ms.push(await nodeSpawnToExitMs());
  }
  return summarize(ms);
}

/** Anything that sends a request and resolves with its answer: an SDK `ClientContext` or a lean client. */
export interface Requester {
  request(method: any, params: any): Promise<any>;
}

/** Sequential round trips of one request (a rejection is a round trip too, e.g. an unknown session). */
export async function roundTrips(agent: Requester, method: string, params: unknown, n: number, warmup: number): Promise<Summary> {
  const us: number[] = [];
  for (let i = 0; i < n + warmup; i++) {
    const t0 = now();
    await agent.request(method, params).catch(() => undefined);
    if (i >= warmup) us.push((now() - t0) * 1000);
  }
  return summarize(us, 1);
}

/** Round trips of a one-text-item prompt (`tiny` keyed reply), in ms. */
export async function tinyPrompts(agent: Requester, sessionId: string, n: number, warmup: number): Promise<Summary> {
  const ms: number[] = [];
  for (let i = 0; i < n + warmup; i++) {
    const t0 = now();
    await agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'tiny' }] });
    if (i >= warmup) ms.push(now() - t0);
  }
  return summarize(ms);
}

export interface RttCounts {
  n: number;
  warmup: number;
  prompts: number;
}

/** The same request series against one agent connection and one session. */
export async function rttSeries(agent: Requester, sessionId: string, c: RttCounts): Promise<{ sessionStateUs: Summary; tinyPromptMs: Summary }> {
  const sessionStateUs = await roundTrips(agent, '_troupe/session_state', { sessionId }, c.n, c.warmup);
  const tinyPromptMs = await tinyPrompts(agent, sessionId, c.prompts, Math.min(c.warmup, 20));
  return { sessionStateUs, tinyPromptMs };
}

/** Round trips straight to a `troupe acp` child over stdio. */
export async function stdioRtt(child: StdioChild, cwd: string, c: RttCounts): Promise<{ sessionStateUs: Summary; tinyPromptMs: Summary }> {
  await child.client.init();
  const sessionId = await child.client.newSession(cwd);
  return rttSeries(child.client.agent, sessionId, c);
}
