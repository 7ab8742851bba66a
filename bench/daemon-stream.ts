/**
 * Streaming series of the daemon benchmark: one long scripted reply received through the daemon vs
 * straight from a `troupe acp` child over stdio, and many sessions streaming at once to many SSE
 * and WebSocket clients (through the daemon, and through the in-process reference).
 */
import { cpuTicks } from './daemon-support.js';
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
}

export interface StreamRuns {
  /** CPU time per update over the timed runs (µs), by process group: where the work went. */
  cpuUsPerUpdate: { server: number; children: number; client: number };
  runs: number[];
  medianMs: number;
  chunks: number;
  updatesPerSecond: number;
}

/** `runs` long replies after one untimed warm-up (JIT), each in a fresh session made by `fresh`; the median run's rate. */
export async function streamRuns(fresh: () => Promise<{ client: BenchClient; sessionId: string }>, prompt: string, chunks: number, runs: number, procs: Procs, settle: () => Promise<void> = async () => undefined): Promise<StreamRuns> {
  const ms: number[] = [];
  const cpu = { server: 0, children: 0, client: 0 };
  for (let i = -1; i < runs; i++) {
    const { client, sessionId } = await fresh();
    // A daemon refills its pool after each session/new: let that child finish booting first.
    await settle();
    const kids = procs.children();
    const ticks = () => ({ server: procs.server ? cpuTicks(procs.server) : 0, children: kids.reduce((a, p) => a + cpuTicks(p), 0) });
    const [t0, c0] = [ticks(), process.cpuUsage()];
    const r = await streamOnce(client, sessionId, prompt, chunks);
    const [t1, c1] = [ticks(), process.cpuUsage(c0)];
    if (i >= 0) {
      // Clock ticks are 10 ms.
      cpu.server += (t1.server - t0.server) * 10_000;
      cpu.children += (t1.children - t0.children) * 10_000;
      cpu.client += c1.user + c1.system;
    }
    if (r.chunks !== chunks) throw new Error(`expected ${chunks} chunks, got ${r.chunks}`);
    if (i >= 0) ms.push(r.ms);
  }
  const medianMs = [...ms].sort((a, b) => a - b)[Math.floor(ms.length / 2)]!;
  const per = (us: number) => Math.round((us / (chunks * runs)) * 10) / 10;
  return { cpuUsPerUpdate: { server: per(cpu.server), children: per(cpu.children), client: per(cpu.client) }, runs: ms.map((x) => Math.round(x * 10) / 10), medianMs: Math.round(medianMs * 10) / 10, chunks, updatesPerSecond: Math.round(chunks / (medianMs / 1000)) };
}

