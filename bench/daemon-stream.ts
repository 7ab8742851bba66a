/**
 * Streaming series of the daemon benchmark: one long scripted reply received through the daemon vs
 * straight from a `troupe acp` child over stdio, and many sessions streaming at once to many SSE
 * and WebSocket clients (through the daemon, and through the in-process reference).
 */
import { cpuTicks, type CountingClient } from './daemon-support.js';

const now = () => performance.now();

/** One prompt whose keyed reply is many text items; resolves once the response and `chunks` updates are in. */
export async function streamOnce(client: CountingClient, sessionId: string, prompt: string, chunks?: number): Promise<{ ms: number; chunks: number }> {
  const before = client.chunkCount(sessionId);
  const t0 = now();
  await client.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: prompt }] });
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
export async function streamRuns(fresh: () => Promise<{ client: CountingClient; sessionId: string }>, prompt: string, chunks: number, runs: number, procs: Procs, settle: () => Promise<void> = async () => undefined): Promise<StreamRuns> {
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

export interface Streamer {
  /** The connection that sends the prompt. */
  client: CountingClient;
  sessionId: string;
  /** Other connections attached to the same session, which receive its updates too. */
  watchers: CountingClient[];
}

export interface AggregateResult {
  /** CPU time spent per delivered event, by process group (µs): where the work went. */
  cpuUsPerEvent: { server: number; children: number; clients: number };
  sessions: number;
  clients: { sse: number; ws: number };
  chunksPerSession: number;
  eventsDelivered: number;
  ms: number;
  eventsPerSecond: number;
}

/** Every session streams its long reply at once; counts message chunks delivered to every attached client. */
export async function aggregate(streamers: Streamer[], prompt: string, chunks: number, clients: { sse: number; ws: number }, procs: Procs): Promise<AggregateResult> {
  const kids = procs.children();
  const ticks = () => ({ server: procs.server ? cpuTicks(procs.server) : 0, children: kids.reduce((a, p) => a + cpuTicks(p), 0), clients: process.cpuUsage() });
  const before = ticks();
  const t0 = now();
  await Promise.all(
    streamers.map(async (s) => {
      const targets = [s.client, ...s.watchers].map((c) => ({ c, from: c.chunkCount(s.sessionId) }));
      await s.client.agent.request('session/prompt', { sessionId: s.sessionId, prompt: [{ type: 'text', text: prompt }] });
      await Promise.all(targets.map(({ c, from }) => c.chunksReach(s.sessionId, from + chunks)));
    }),
  );
  const ms = now() - t0;
  const eventsDelivered = streamers.reduce((a, s) => a + chunks * (1 + s.watchers.length), 0);
  const after = ticks();
  const clientUs = after.clients.user + after.clients.system - before.clients.user - before.clients.system;
  // Clock ticks are 10 ms.
  const per = (us: number) => Math.round((us / eventsDelivered) * 10) / 10;
  const cpuUsPerEvent = { server: per((after.server - before.server) * 10_000), children: per((after.children - before.children) * 10_000), clients: per(clientUs) };
  return { cpuUsPerEvent, sessions: streamers.length, clients, chunksPerSession: chunks, eventsDelivered, ms: Math.round(ms), eventsPerSecond: Math.round(eventsDelivered / (ms / 1000)) };
}
