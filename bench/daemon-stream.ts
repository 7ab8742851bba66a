/**
 * Streaming series of the daemon benchmark: one long scripted reply received through the daemon vs
 * straight from a `troupe acp` child over stdio, and many sessions streaming at once to many SSE
 * and WebSocket clients (through the daemon, and through the in-process reference).
 */
import { processCpuUs, threadCpuSplitUs } from './daemon-support.js';
import type { BenchClient } from './daemon-lean.js';

const now = () => performance.now();

/** One prompt whose keyed reply is many text items; resolves once the response and `chunks` updates are in. */
export async function streamOnce(client: BenchClient, sessionId: string, prompt: string, chunks?: number): Promise<{ ms: number; chunks: number }> {
  const before = client.chunkCount(sessionId);
  const t0 = now();
  await client.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: prompt }] });
  // Over stdio every update precedes the response; over HTTP the session stream may lag behind it.
  if (chunks !== undefined) await client.chunksReach(sessionId, before + chunks);
  return { ms: now() - t0, chunks: client.chunkCount(sessionId) - before };
}

/** Processes whose CPU time a series reports: the server (daemon or reference) and its children. */
export interface Procs {
  server?: number;
  children: () => number[];
  /** A daemon's spawner (bench/daemon-support.ts `spawnerPids`): reported on its own, not among the children. */
  spawner?: () => number[];
}

/**
 * CPU µs per update over the timed runs, by process: read from every thread's schedstat (ns; V8's
 * compiler and GC threads and libuv's pool included), not from /proc/<pid>/stat's 10 ms ticks, which
 * over a run of 40 ms and a dozen children were as coarse as the figure itself. `children` is every
 * child of the server (the session's, the pooled ones, other sessions' idle ones), as before;
 * `sessionChild` is the busiest child of each run (the one streaming) and `otherChildren` the rest.
 */
export interface StreamCpu {
  server: number;
  /** The server's main thread alone (`server` includes its GC and compiler threads). */
  serverMain: number;
  children: number;
  sessionChild: number;
  /** The session child's main thread alone. */
  sessionChildMain: number;
  otherChildren: number;
  spawner: number;
  client: number;
}

export interface StreamRuns {
  /** CPU time per update over the timed runs (µs), by process group: where the work went. */
  cpuUsPerUpdate: StreamCpu;
  runs: number[];
  medianMs: number;
  chunks: number;
  updatesPerSecond: number;
  /** Untimed replies before the first timed one (in the same session when `fresh` keeps it). */
  warmups: number;
}

/**
 * `runs` long replies after `warmups` untimed ones (JIT), each in the session `fresh` gives (a new
 * one each time, or the same: `sticky` in daemon-bench.ts); the median run's rate.
 */
export async function streamRuns(fresh: () => Promise<{ client: BenchClient; sessionId: string }>, prompt: string, chunks: number, runs: number, procs: Procs, settle: () => Promise<void> = async () => undefined, warmups = 1): Promise<StreamRuns> {
  const ms: number[] = [];
  const cpu: StreamCpu = { server: 0, serverMain: 0, children: 0, sessionChild: 0, sessionChildMain: 0, otherChildren: 0, spawner: 0, client: 0 };
  for (let i = -warmups; i < runs; i++) {
    const { client, sessionId } = await fresh();
    // A daemon refills its pool after each session/new: let that child finish booting first.
    await settle();
    const kids = procs.children();
    const spawners = procs.spawner?.() ?? [];
    const read = () => ({
      server: procs.server ? threadCpuSplitUs(procs.server) : { main: 0, other: 0 },
      children: kids.map(cpuSplit),
      spawner: spawners.reduce((a, p) => a + processCpuUs(p), 0),
    });
    // The client's own CPU is read innermost, so that reading the others' is not counted as its.
    const t0 = read();
    const c0 = process.cpuUsage();
    const r = await streamOnce(client, sessionId, prompt, chunks);
    const c1 = process.cpuUsage(c0);
    const t1 = read();
    if (i >= 0) {
      const byChild = kids.map((_, k) => ({ all: t1.children[k]!.all - t0.children[k]!.all, main: t1.children[k]!.main - t0.children[k]!.main }));
      const busiest = byChild.reduce((a, b) => (b.all > a.all ? b : a), { all: 0, main: 0 });
      const children = byChild.reduce((a, b) => a + b.all, 0);
      cpu.server += t1.server.main + t1.server.other - t0.server.main - t0.server.other;
      cpu.serverMain += t1.server.main - t0.server.main;
      cpu.children += children;
      cpu.sessionChild += busiest.all;
      cpu.sessionChildMain += busiest.main;
      cpu.otherChildren += children - busiest.all;
      cpu.spawner += t1.spawner - t0.spawner;
      cpu.client += c1.user + c1.system;
    }
    if (r.chunks !== chunks) throw new Error(`expected ${chunks} chunks, got ${r.chunks}`);
    if (i >= 0) ms.push(r.ms);
  }
  const medianMs = [...ms].sort((a, b) => a - b)[Math.floor(ms.length / 2)]!;
  const per = (us: number) => Math.round((us / (chunks * runs)) * 10) / 10;
  const cpuUsPerUpdate = Object.fromEntries(Object.entries(cpu).map(([k, us]) => [k, per(us)])) as unknown as StreamCpu;
  return { cpuUsPerUpdate, runs: ms.map((x) => Math.round(x * 10) / 10), medianMs: Math.round(medianMs * 10) / 10, chunks, updatesPerSecond: Math.round(chunks / (medianMs / 1000)), warmups };
}

/** A process's CPU µs, all threads and the main one (0 once the process is gone). */
function cpuSplit(pid: number): { all: number; main: number } {
  try {
    const { main, other } = threadCpuSplitUs(pid);
    return { all: main + other, main };
  } catch {
    return { all: 0, main: 0 };
  }
}
