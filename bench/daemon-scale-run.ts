/**
 * The scale part of the daemon benchmark, run on a home that already holds the stored sessions:
 * startup, a burst of N concurrent `session/new`s under the event-loop probe, memory of the idle
 * children and of the daemon per session, aggregate streaming to N SSE + N WebSocket clients, and
 * the same burst, memory and streaming on the in-process reference.
 */
import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { aggregate, leanAggregateDaemon, leanAggregateReference, type Streamer } from './daemon-aggregate.js';
import { burst, loopFigures, loopMetrics, ownMemoryKb, pssOf, startProbe, type Burst } from './daemon-scale.js';
import { DaemonInspector } from './daemon-heap.js';
import { childPids, CountingClient, spawnerPids, memoryKb, sleep, summarize, waitIdle, type Served } from './daemon-support.js';

interface ScaleDeps {
  /** A daemon on the home holding the stored sessions. */
  storedDaemon: () => Promise<Served>;
  /** A daemon on a fresh home (the burst, memory and streaming figures), started with `--inspect=127.0.0.1:0`. */
  freshDaemon: () => Promise<Served>;
  ref: { url: string; proc: ChildProcess };
  counts: { sessions: number; aggItems: number; stored: number; streamItems: number };
  cwd: string;
  track: (p: ChildProcess) => void;
  log: (s: string) => void;
}

const fdCount = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;
const memAvailableKb = () => Number(/^MemAvailable:\s+(\d+)/m.exec(readFileSync('/proc/meminfo', 'utf8'))?.[1]);
const openFilesLimit = (pid: number) => Number(/^Max open files\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/limits`, 'utf8'))?.[1]);
const mib = (kb: number) => Math.round((kb / 1024) * 100) / 100;

async function timed<T>(f: () => Promise<T>): Promise<[T, number]> {
  const t0 = performance.now();
  const v = await f();
  return [v, Math.round((performance.now() - t0) * 100) / 100];
}

/** One untimed `tiny` prompt per session, so that no first-prompt cost lands in the aggregate window. */
async function warmUp(sessions: { client: CountingClient; sessionId: string }[]): Promise<void> {
  await Promise.all(sessions.map((s) => s.client.agent.request('session/prompt', { sessionId: s.sessionId, prompt: [{ type: 'text', text: 'tiny' }] })));
}

const burstSummary = (b: Burst) => ({ requested: b.clients.length, created: b.sessions.length, failed: b.failed, errors: b.errors, wallMs: b.wallMs, sessionNewMs: b.sessionNewMs, sessionsPerSecond: Math.round((b.sessions.length / b.wallMs) * 1000 * 10) / 10 });

/** The daemon with the stored sessions: startup, list and health latency, then the same burst (does it hold?). */
async function storedSeries({ storedDaemon, counts, cwd, track, log }: ScaleDeps) {
  const [d, startupMs] = await timed(storedDaemon);
  const api = async (path: string) => (await fetch(d.url + path, { headers: d.headers })).json() as Promise<any>;
  const health = await api('/v1/health');
  const [, healthMs] = await timed(() => api('/v1/health'));
  const [, sessionsRouteMs] = await timed(() => api('/v1/sessions'));
  await waitIdle(() => childPids(d.proc.pid!), 100);
  log(`stored: burst of ${counts.sessions} session/new with ${counts.stored} sessions stored`);
  const probe = startProbe(d.url + '/v1/health', track);
  await sleep(1000);
  const idleTo = Date.now();
  await loopMetrics(d);
  const b = await burst(d.url, d.headers, counts.sessions, cwd);
  const inDaemon = await loopMetrics(d);
  await sleep(300);
  const samples = await probe.stop();
  for (const c of b.clients) c.close();
  const [, stopMs] = await timed(() => d.stop());
  return {
    stored: counts.stored,
    daemonStartupMs: startupMs,
    health,
    healthMs,
    sessionsRouteMs,
    burst: burstSummary(b),
    eventLoop: { idle: loopFigures(samples, idleTo - 1000, idleTo), duringBurst: loopFigures(samples, b.from, b.to), inDaemonDuringBurst: inDaemon },
    daemonStopMs: stopMs,
  };
}

export async function scaleSeries(deps: ScaleDeps) {
  const withStored = await storedSeries(deps);
  return { withStored, fresh: await freshSeries(deps) };
}

async function freshSeries({ freshDaemon, ref, counts, cwd, track, log }: ScaleDeps) {
  const N = counts.sessions;
  const [d, startupMs] = await timed(freshDaemon);
  const pid = d.proc.pid!;
  const daemonProcs = { server: pid, children: () => childPids(pid), spawner: () => spawnerPids(pid) };
  const api = async (path: string) => (await fetch(d.url + path, { headers: d.headers })).json() as Promise<any>;
  const healthBefore = await api('/v1/health');
  await waitIdle(() => childPids(pid), 100);
  const inspector = await DaemonInspector.connect(d);
  const heapBefore = await inspector.gcHeap();
  const daemonBefore = memoryKb(pid)!;
  const ownBefore = ownMemoryKb(pid);
  const fdsBefore = fdCount(pid);
  const fdLimit = openFilesLimit(pid);

  log(`fresh: burst of ${N} session/new (half SSE, half WebSocket) under the event-loop probe`);
  const probe = startProbe(d.url + '/v1/health', track);
  await sleep(1000);
  const idleTo = Date.now();
  await loopMetrics(d);
  const b = await burst(d.url, d.headers, N, cwd);
  const inDaemon = await loopMetrics(d);
  await sleep(300);
  const samples = await probe.stop();
  const loop = { idle: loopFigures(samples, idleTo - 1000, idleTo), burst: loopFigures(samples, b.from, b.to) };

  await waitIdle(() => childPids(pid), 200, 60_000);
  await sleep(2000);
  const listed = (await api('/v1/sessions')).sessions as { id: string; child: { pid: number; state: string } | null }[];
  const sessionPids = listed.filter((s) => b.sessions.some((x) => x.sessionId === s.id) && s.child?.pid).map((s) => s.child!.pid);
  const childPss = pssOf(sessionPids);
  const daemonAfter = memoryKb(pid)!;
  const heapAfter = await inspector.gcHeap();
  const daemonAfterGc = memoryKb(pid)!;
  const ownAfter = ownMemoryKb(pid);
  inspector.close();
  const fdsAfter = fdCount(pid);
  const healthAfter = await api('/v1/health');

  const live = b.sessions.length;
  log('fresh: aggregate streaming, one client per session, then N SSE + N WebSocket clients');
  await warmUp(b.sessions);
  const oneEach = await aggregate(b.sessions.map((s) => ({ client: s.client, sessionId: s.sessionId, watchers: [] })), 'stream-agg', counts.aggItems, { sse: b.sessions.filter((s) => s.kind === 'sse').length, ws: b.sessions.filter((s) => s.kind === 'ws').length }, daemonProcs);
  const watchers = await Promise.all(b.sessions.map((s) => (s.kind === 'sse' ? CountingClient.ws(d.url, d.headers) : CountingClient.http(d.url, d.headers)).init()));
  // A connection that sends a message for a session is attached to it and gets its updates.
  await Promise.all(b.sessions.map((s, i) => watchers[i]!.agent.request('_troupe/session_state' as never, { sessionId: s.sessionId } as never)));
  const streamers: Streamer[] = b.sessions.map((s, i) => ({ client: s.client, sessionId: s.sessionId, watchers: [watchers[i]!] }));
  const fanOut = await aggregate(streamers, 'stream-agg', counts.aggItems, { sse: live, ws: live }, daemonProcs);
  for (const c of [...b.clients, ...watchers]) c.close();
  log('fresh: aggregate streaming with lean clients');
  const long = { prompt: 'stream-long', chunks: counts.streamItems };
  const leanAgg = await leanAggregateDaemon(d.url, d.headers, b.sessions, counts.aggItems, daemonProcs, long);
  const [, stopMs] = await timed(() => d.stop());

  log(`reference: burst of ${N} session/new, memory, aggregate streaming`);
  await sleep(500);
  // Both readings after a full GC, as the daemon's are (garbage of earlier series would be counted).
  const refGc = async () => void (await fetch(ref.url + '/gc', { method: 'POST' })).arrayBuffer();
  await refGc();
  const refBefore = memoryKb(ref.proc.pid!)!;
  const refOwnBefore = ownMemoryKb(ref.proc.pid!);
  const refProbe = startProbe(ref.url + '/health', track);
  await sleep(1000);
  const refIdleTo = Date.now();
  const rb = await burst(ref.url, {}, N, cwd);
  await sleep(300);
  const refSamples = await refProbe.stop();
  await sleep(2000);
  await refGc();
  const refAfter = memoryKb(ref.proc.pid!)!;
  const refOwnAfter = ownMemoryKb(ref.proc.pid!);
  await warmUp(rb.sessions);
  const refAgg = await aggregate(rb.sessions.map((s) => ({ client: s.client, sessionId: s.sessionId, watchers: [] })), 'stream-agg', counts.aggItems, { sse: rb.sessions.filter((s) => s.kind === 'sse').length, ws: rb.sessions.filter((s) => s.kind === 'ws').length }, { server: ref.proc.pid!, children: () => [] });
  for (const c of rb.clients) c.close();
  const refLeanAgg = await leanAggregateReference(ref.url, N, counts.aggItems, cwd, { server: ref.proc.pid!, children: () => [] }, long);

  const perChildKb = childPss.reduce((a, x) => a + x, 0) / Math.max(1, childPss.length);
  const daemonPerSessionKb = (daemonAfter.pss - daemonBefore.pss) / live;
  const availableKb = memAvailableKb();
  const fdsPerSession = (fdsAfter - fdsBefore) / live;
  return {
    daemonStartupMs: startupMs,
    healthBefore,
    healthAfter,
    burst: burstSummary(b),
    referenceBurst: burstSummary(rb),
    eventLoop: {
      measured: 'GET /v1/health latency from a separate probe process, one request every 5 ms (one in flight): an upper bound on how long the daemon loop was blocked, CPU contention from the children booting on 2 cores included',
      daemonIdle: loop.idle,
      daemonDuringBurst: loop.burst,
      daemonInDaemonDuringBurst: inDaemon,
      referenceIdle: loopFigures(refSamples, refIdleTo - 1000, refIdleTo),
      referenceDuringBurst: loopFigures(refSamples, rb.from, rb.to),
    },
    memory: {
      childPssMiB: summarize(childPss.map(mib), 2),
      daemonPssMiB: { before: mib(daemonBefore.pss), after: mib(daemonAfter.pss) },
      daemonPerSessionKiB: Math.round(daemonPerSessionKb * 10) / 10,
      daemonPerSessionAfterGcKiB: {
        anonymous: Math.round(((ownAfter.anon - ownBefore.anon) / live) * 10) / 10,
        pss: Math.round(((daemonAfterGc.pss - daemonBefore.pss) / live) * 10) / 10,
        heapUsed: Math.round(((heapAfter.heapUsed - heapBefore.heapUsed) / 1024 / live) * 10) / 10,
        measured: 'both ends after a full GC (inspector HeapProfiler.collectGarbage): no session vs every session live and idle; anonymous = the daemon\'s heap + malloc memory (judged: PSS falls as children share the node binary\'s pages with the daemon, so its delta under-counts); includes the one-time compilation of the code the first sessions run (bench/daemon-live.ts separates it)',
      },
      daemonRssMiB: { before: mib(daemonBefore.rss), after: mib(daemonAfter.rss) },
      referencePssMiB: { before: mib(refBefore.pss), after: mib(refAfter.pss) },
      // Anonymous memory (heap + malloc), as the daemon's is judged: the reference's PSS moves with
      // how many other processes share the node binary's pages (the daemon and its hundred children
      // have just exited), and fell across the burst.
      referencePerSessionKiB: Math.round(((refOwnAfter.anon - refOwnBefore.anon) / rb.sessions.length) * 10) / 10,
      totalPerSessionMiB: { daemon: mib(perChildKb + daemonPerSessionKb), reference: mib((refOwnAfter.anon - refOwnBefore.anon) / rb.sessions.length) },
    },
    live: {
      measuredLive: childPss.length,
      fdsPerSession: Math.round(fdsPerSession * 10) / 10,
      openFilesLimit: fdLimit,
      memAvailableMiB: mib(availableKb),
      extrapolated: {
        note: `from ${live} live sessions: memory (child PSS mean + daemon PSS per session) against MemAvailable measured with them alive, fds against the open-files limit, spawn time from the burst rate`,
        sessionsByMemory: Math.floor(availableKb / (perChildKb + daemonPerSessionKb)) + live,
        sessionsByFds: Math.floor((fdLimit - fdsAfter) / Math.max(0.1, fdsPerSession)) + live,
        secondsToSpawn1000: Math.round(((b.wallMs / Math.max(1, live)) * 1000) / 100) / 10,
      },
    },
    aggregate: { daemonOneClientPerSession: oneEach, daemonSseAndWsPerSession: fanOut, referenceOneClientPerSession: refAgg, lean: { daemon: leanAgg, reference: refLeanAgg }, daemonStopMs: stopMs },
  };
}
