/**
 * Aggregate streaming of the daemon benchmark (scale.fresh.aggregate): many sessions streaming at
 * once to many SSE and WebSocket clients, through the daemon and through the in-process reference,
 * with the SDK's clients and with the lean clients of bench/daemon-lean.ts.
 */
import { processCpuUs } from './daemon-support.js';
import { LeanHttpClient, LeanWsClient, type BenchClient } from './daemon-lean.js';
import type { Procs } from './daemon-stream.js';

const now = () => performance.now();

export interface Streamer {
  /** The connection that sends the prompt. */
  client: BenchClient;
  sessionId: string;
  /** Other connections attached to the same session, which receive its updates too. */
  watchers: BenchClient[];
}

export interface AggregateResult {
  /**
   * CPU time spent per delivered event, by process group (µs): where the work went. From every
   * thread's schedstat (bench/daemon-stream.ts, `StreamCpu`); `spawner`: a daemon's spawner, on its own.
   */
  cpuUsPerEvent: { server: number; children: number; spawner: number; clients: number };
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
  const spawners = procs.spawner?.() ?? [];
  const others = () => ({ server: procs.server ? processCpuUs(procs.server) : 0, children: kids.reduce((a, p) => a + processCpuUs(p), 0), spawner: spawners.reduce((a, p) => a + processCpuUs(p), 0) });
  // The clients' CPU (this process's) is read innermost: reading the others' is not counted as theirs.
  const before = others();
  const clients0 = process.cpuUsage();
  const t0 = now();
  await Promise.all(
    streamers.map(async (s) => {
      const targets = [s.client, ...s.watchers].map((c) => ({ c, from: c.chunkCount(s.sessionId) }));
      await s.client.request('session/prompt', { sessionId: s.sessionId, prompt: [{ type: 'text', text: prompt }] });
      await Promise.all(targets.map(({ c, from }) => c.chunksReach(s.sessionId, from + chunks)));
    }),
  );
  const ms = now() - t0;
  const eventsDelivered = streamers.reduce((a, s) => a + chunks * (1 + s.watchers.length), 0);
  const clientCpu = process.cpuUsage(clients0);
  const after = others();
  const per = (us: number) => Math.round((us / eventsDelivered) * 10) / 10;
  const cpuUsPerEvent = { server: per(after.server - before.server), children: per(after.children - before.children), spawner: per(after.spawner - before.spawner), clients: per(clientCpu.user + clientCpu.system) };
  return { cpuUsPerEvent, sessions: streamers.length, clients, chunksPerSession: chunks, eventsDelivered, ms: Math.round(ms), eventsPerSecond: Math.round(eventsDelivered / (ms / 1000)) };
}

const TINY = [{ type: 'text', text: 'tiny' }];
type Kind = 'sse' | 'ws';
const kinds = (list: { kind: Kind }[]) => ({ sse: list.filter((s) => s.kind === 'sse').length, ws: list.filter((s) => s.kind === 'ws').length });
const lean = (kind: Kind, url: string, headers: Record<string, string>): LeanHttpClient | LeanWsClient => (kind === 'sse' ? LeanHttpClient.at(url, headers) : new LeanWsClient(url, headers));
const other = (kind: Kind): Kind => (kind === 'sse' ? 'ws' : 'sse');

export interface LeanAggregate {
  note: string;
  oneClientPerSession: AggregateResult;
  sseAndWsPerSession?: AggregateResult;
  /**
   * The same sessions streaming long replies (`long`), last: the daemon's with both clients attached,
   * the reference's with its one. The children's fixed cost per turn and their code's warm-up then
   * weigh less per update (bench/README.md).
   */
  longReplies?: AggregateResult;
}

/** A second, long-reply workload for the lean aggregate: the scripted reply's key and its items. */
export interface LongReplies {
  prompt: string;
  chunks: number;
}

/**
 * The aggregate series with lean clients (bench/daemon-lean.ts) on sessions that already live in the
 * daemon (their SDK clients closed first): one lean client per session of the same kind as its SDK
 * client, attached by an untimed `tiny` prompt; then a second lean client of the other kind per
 * session, attached by a `_troupe/session_state` request.
 */
export async function leanAggregateDaemon(url: string, headers: Record<string, string>, sessions: { sessionId: string; kind: Kind }[], chunks: number, procs: Procs, long?: LongReplies): Promise<LeanAggregate> {
  const clients = await Promise.all(sessions.map((s) => lean(s.kind, url, headers).init()));
  const watchers: (LeanHttpClient | LeanWsClient)[] = [];
  try {
    await Promise.all(sessions.map((s, i) => clients[i]!.request('session/prompt', { sessionId: s.sessionId, prompt: TINY })));
    const oneClientPerSession = await aggregate(sessions.map((s, i) => ({ client: clients[i]!, sessionId: s.sessionId, watchers: [] })), 'stream-agg', chunks, kinds(sessions), procs);
    watchers.push(...(await Promise.all(sessions.map((s) => lean(other(s.kind), url, headers).init()))));
    await Promise.all(sessions.map((s, i) => watchers[i]!.request('_troupe/session_state', { sessionId: s.sessionId })));
    const both = sessions.map((s, i) => ({ client: clients[i]!, sessionId: s.sessionId, watchers: [watchers[i]!] }));
    const sseAndWsPerSession = await aggregate(both, 'stream-agg', chunks, { sse: sessions.length, ws: sessions.length }, procs);
    const longReplies = long ? await aggregate(both, long.prompt, long.chunks, { sse: sessions.length, ws: sessions.length }, procs) : undefined;
    return { note: LEAN_NOTE, oneClientPerSession, sseAndWsPerSession, ...(longReplies ? { longReplies } : {}) };
  } finally {
    for (const c of [...clients, ...watchers]) c.close();
  }
}

/** The reference with lean clients: each opens its own session (a reference host serves one connection). */
export async function leanAggregateReference(url: string, n: number, chunks: number, cwd: string, procs: Procs, long?: LongReplies): Promise<LeanAggregate> {
  const sessions: { client: LeanHttpClient | LeanWsClient; sessionId: string; kind: Kind }[] = [];
  try {
    // One at a time: the reference opens a host per connection and refills its stock of them slowly.
    for (let i = 0; i < n; i++) {
      const kind: Kind = i % 2 === 0 ? 'sse' : 'ws';
      for (let attempt = 0; ; attempt++) {
        const client = lean(kind, url, {});
        try {
          await client.init();
          sessions.push({ client, sessionId: await client.newSession(cwd), kind });
          break;
        } catch (err) {
          client.close();
          if (attempt >= 50) throw err;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    }
    await Promise.all(sessions.map((s) => s.client.request('session/prompt', { sessionId: s.sessionId, prompt: TINY })));
    const one = sessions.map((s) => ({ client: s.client, sessionId: s.sessionId, watchers: [] }));
    const oneClientPerSession = await aggregate(one, 'stream-agg', chunks, kinds(sessions), procs);
    const longReplies = long ? await aggregate(one, long.prompt, long.chunks, kinds(sessions), procs) : undefined;
    return { note: LEAN_NOTE, oneClientPerSession, ...(longReplies ? { longReplies } : {}) };
  } finally {
    for (const s of sessions) s.client.close();
  }
}

const LEAN_NOTE = 'lean clients (bench/daemon-lean.ts): every update counted and checked (seq increasing per session, SSE ids contiguous), not JSON-parsed; the aggregate target is judged on this series';
