/**
 * Scale series of the daemon benchmark: stored sessions written straight into a home (the way
 * `troupe acp` writes them: one log per session, then the index), a burst of concurrent
 * `session/new`s watched by the event-loop probe, and memory per idle child and per session.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { newSessionId } from '../src/core/ids.js';
import { FileEventLog, SessionIndex, sessionIndexPath, sessionsDir } from '../src/store/index.js';
import { DEFAULT_MODE_ID } from '../src/tools/index.js';
import type { AgentEvent } from '../src/core/events.js';
import { CountingClient, memoryKb, summarize, type Summary } from './daemon-support.js';

/**
 * Writes `n` sessions (a `session_created` each) into `home`'s log directory and index. They are
 * written on tmpfs and copied: a new log is fsynced with its directory, which on this disk costs
 * ~20 s for 10,000 — setup, not a figure of the daemon.
 */
export async function seedStored(home: string, n: number, cwd: string, model: string): Promise<number> {
  const t0 = performance.now();
  const scratch = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'troupe-dbench-seed-'));
  try {
    await writeSessions(scratch, n, cwd, model);
    cpSync(sessionsDir(scratch), sessionsDir(home), { recursive: true });
    // The copy gives every file a new time, the logs copied after the index a later one: the index
    // is written again last, as its writer wrote it after the logs, so that the daemon does not read
    // every log again at its start (spec/event-log.md §6 Recheck; bench/index-recheck-bench.ts measures that).
    const index = sessionIndexPath(sessionsDir(home));
    writeFileSync(index, readFileSync(index));
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return Math.round(performance.now() - t0);
}

async function writeSessions(home: string, n: number, cwd: string, model: string): Promise<void> {
  const dir = sessionsDir(home);
  const index = await SessionIndex.open(dir);
  const events: AgentEvent[] = [];
  const one = async () => {
    let id = newSessionId();
    while (index.isUsed(id)) id = newSessionId();
    const log = await FileEventLog.forSession(dir, id, { create: true });
    events.push(log.append({ type: 'session_created', sessionId: id, cwd, additionalDirectories: [], model, mode: DEFAULT_MODE_ID }));
    await log.close();
  };
  for (let i = 0; i < n; i += 64) await Promise.all(Array.from({ length: Math.min(64, n - i) }, one));
  await index.applyEvents(events);
  await index.flush();
}

export interface Probe {
  /** Ends the probe and returns its samples: [epoch ms, latency ms, probe timer lateness ms]. */
  stop(): Promise<[number, number, number][]>;
}

/** Starts the event-loop probe process against `url`; `track` keeps it for the bench's cleanup. */
export function startProbe(url: string, track: (p: ChildProcess) => void): Probe {
  const proc = spawn(process.execPath, [resolve('dist/bench/daemon-probe.js'), url], { stdio: ['pipe', 'pipe', 'inherit'] });
  track(proc);
  let out = '';
  proc.stdout!.on('data', (d) => (out += d));
  const done = new Promise<void>((r) => proc.once('exit', () => r()));
  return {
    async stop() {
      proc.stdin!.end();
      await done;
      return JSON.parse(out).samples;
    },
  };
}

export interface LoopFigures {
  samples: number;
  latencyMs: Summary;
  over50ms: number;
  /** The probe's own timer lateness: a large value means the probe, not the server, was stalled. */
  probeLateMaxMs: number;
}

/** Health latencies of the probe samples that started inside [from, to] (epoch ms). */
export function loopFigures(samples: [number, number, number][], from: number, to: number): LoopFigures {
  const inside = samples.filter(([at, ms]) => at - ms >= from && at <= to);
  const lat = inside.map(([, ms]) => ms);
  return { samples: inside.length, latencyMs: summarize(lat.length ? lat : [NaN], 2), over50ms: lat.filter((x) => x > 50).length, probeLateMaxMs: Math.round(Math.max(0, ...inside.map(([, , l]) => l)) * 10) / 10 };
}

export interface Burst {
  clients: CountingClient[];
  /** The sessions that were created (a failed `session/new` is counted in `failed`, not here). */
  sessions: { client: CountingClient; sessionId: string; kind: 'sse' | 'ws' }[];
  failed: number;
  /** Distinct error messages of the failed requests (at most 5). */
  errors: string[];
  from: number;
  to: number;
  sessionNewMs: Summary;
  wallMs: number;
}

/** `n` clients (half SSE, half WebSocket) connect, then each creates one session, all at once. */
export async function burst(url: string, headers: Record<string, string>, n: number, cwd: string): Promise<Burst> {
  const clients = await Promise.all(Array.from({ length: n }, (_, i) => (i % 2 ? CountingClient.ws(url, headers) : CountingClient.http(url, headers)).init()));
  const from = Date.now();
  const t0 = performance.now();
  const ms: number[] = [];
  const settled = await Promise.allSettled(
    clients.map(async (c) => {
      const s = performance.now();
      const id = await c.newSession(cwd);
      ms.push(performance.now() - s);
      return id;
    }),
  );
  const wallMs = Math.round(performance.now() - t0);
  const sessions: Burst['sessions'] = [];
  const errors = new Set<string>();
  settled.forEach((r, i) => {
    if (r.status === 'fulfilled') sessions.push({ client: clients[i]!, sessionId: r.value, kind: i % 2 ? 'ws' : 'sse' });
    else errors.add(String((r.reason as Error)?.message ?? r.reason).slice(0, 200));
  });
  return { clients, sessions, failed: n - sessions.length, errors: [...errors].slice(0, 5), from, to: Date.now(), sessionNewMs: summarize(ms.length ? ms : [NaN], 1), wallMs };
}

/**
 * The daemon's own event-loop figures from /metrics over the window since the previous scrape
 * (src/daemon/loop-watch.ts): delay percentiles, and the longest stalls split into blocked (the
 * daemon's main thread on a CPU) and starved (it waited for a core).
 */
export async function loopMetrics(d: { url: string; headers: Record<string, string> }): Promise<Record<string, number>> {
  const text = await (await fetch(d.url + '/metrics', { headers: d.headers })).text();
  const ms = (name: string) => Math.round(Number(new RegExp(`^troupe_${name} (\\S+)$`, 'm').exec(text)?.[1]) * 1e6) / 1e3;
  const stalls = (cause: string) => Number(new RegExp(`^troupe_event_loop_stalls_over_50ms_total\\{cause="${cause}"\\} (\\d+)$`, 'm').exec(text)?.[1]);
  return {
    delayP99Ms: ms('event_loop_delay_p99_seconds'),
    delayMaxMs: ms('event_loop_delay_max_seconds'),
    blockedMaxMs: ms('event_loop_blocked_max_seconds'),
    starvedMaxMs: ms('event_loop_starved_max_seconds'),
    stallsOver50BlockedSinceStart: stalls('blocked'),
    stallsOver50StarvedSinceStart: stalls('starved'),
  };
}

/**
 * The daemon's own memory (KiB): anonymous (heap, malloc: what sessions add) and private (not shared
 * with any other process). PSS is not enough for a per-session figure: the daemon shares the node
 * binary's pages with its children, so its PSS *falls* as children are added (each share shrinks).
 */
export function ownMemoryKb(pid: number): { pss: number; anon: number; private: number } {
  const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN);
  return { pss: field('Pss'), anon: field('Anonymous'), private: field('Private_Clean') + field('Private_Dirty') };
}

/** PSS (KiB) of each pid, skipping those that are gone. */
export function pssOf(pids: number[]): number[] {
  return pids.map((p) => memoryKb(p)?.pss).filter((x): x is number => typeof x === 'number' && !Number.isNaN(x));
}
