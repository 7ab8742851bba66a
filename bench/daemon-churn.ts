/**
 * Churn: does the daemon give back what clients and sessions take? Peers' daemons grow without
 * bound under reconnecting clients (docs/daemon.md, "Monitoring"); this bench drives one daemon
 * through many client lifetimes and session lifetimes and reads its live heap (after a full GC,
 * through the inspector: bench/daemon-heap.ts), its file descriptors and its children at
 * checkpoints. The baseline is the same daemon after the warm-up cycles of each phase: what a leak
 * would show is growth per cycle after it.
 *
 * - `connections` phase: one session stays open, watched all along by one WebSocket client. Each
 *   cycle a new client connects, resumes that session, prompts, and goes, in turn: SDK HTTP client
 *   (closes), SDK WebSocket client (closes), lean HTTP (DELETE), lean WebSocket (close frame), lean
 *   HTTP that vanishes mid-reply (sockets destroyed, no DELETE: reaped after `--connection-idle-ms`)
 *   and lean WebSocket that vanishes mid-reply (no close frame); every sixth cycle a reader of the
 *   session's /v1 event feed also comes and leaves after its first chunk.
 * - `sessions` phase: each cycle a client makes a session, prompts, and ends it: `session/close`
 *   (the session stays stored: its index entry is what it may keep) or DELETE /v1/sessions/:id (a
 *   tombstone), in turn. One cycle in four it is an editor's one connection, open throughout; the
 *   others connect for the cycle.
 * - `crashes` phase: each cycle a new session's child is killed (SIGKILL) mid-reply; the prompt gets
 *   `agent_crashed`, the restarted child serves the next prompt, and the session is closed.
 *
 * Before each checkpoint the bench waits until /metrics shows the daemon back at rest (only the
 * watcher's connection, only the long session live, the pool full, no event feed open).
 *
 * Between the phases, `replay`: the long session's whole log (tens of thousands of events) read from
 * its /v1 event feed, against a `session/load` replay of it over ACP in the same run.
 *
 * Run: `npm run build && node dist/bench/daemon-churn.js` (~1 min). Writes
 * bench/results/daemon-churn.json. Counts: BENCH_CHURN_CONNECTIONS (2400), BENCH_CHURN_SESSIONS
 * (150), BENCH_CHURN_CRASHES (60), BENCH_CHURN_CHECKPOINTS (6 per phase, the first after the warm-up).
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { childPids, cpuTicks, CountingClient, loadAverages, resultHeader, scriptEnv, sleep, startDaemon, type Served } from './daemon-support.js';
import { DaemonInspector } from './daemon-heap.js';
import { LeanHttpClient, LeanWsClient, type BenchClient } from './daemon-lean.js';

const int = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const CONNECTION_CYCLES = int('BENCH_CHURN_CONNECTIONS', 2400);
const SESSION_CYCLES = int('BENCH_CHURN_SESSIONS', 150);
const CRASH_CYCLES = int('BENCH_CHURN_CRASHES', 60);
const CHECKPOINTS = int('BENCH_CHURN_CHECKPOINTS', 6);
const POOL = 2;
const CONNECTION_IDLE_MS = 1000;
const BURST_ITEMS = 200;

const started = Date.now();
const loadAverageAtStart = loadAverages();
const home = mkdtempSync(join(tmpdir(), 'troupe-churn-'));
const words = Array.from({ length: BURST_ITEMS }, (_, i) => ({ text: `w${i} ` }));
const d = await startDaemon({
  home,
  args: ['--pool', String(POOL), '--connection-idle-ms', String(CONNECTION_IDLE_MS)],
  env: scriptEnv(home, {
    replies: [
      { when: 'burst', items: words },
      { when: 'tiny', items: [{ text: 'ok' }] },
      // A turn that is surely still running when the crash phase kills its child.
      { when: 'stall', items: [{ text: 'working ' }, { delay_ms: 10_000 }, { text: 'done' }] },
    ],
  }),
  nodeArgs: ['--inspect=127.0.0.1:0'],
});
const watchdog = setTimeout(() => {
  d.proc.kill('SIGKILL');
  process.exit(1);
}, 600_000);

async function metrics(s: Served): Promise<Record<string, number>> {
  const text = await (await fetch(`${s.url}/metrics`, { headers: s.headers })).text();
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const m = /^(troupe_[a-z_]+) (\S+)$/.exec(line);
    if (m) out[m[1]!] = Number(m[2]);
  }
  return out;
}

interface Checkpoint {
  cycles: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  rss: number;
  fds: number;
  children: number;
  connections: number;
  sessionsLive: number;
  sessionsHeld: number;
  feedsOpen: number;
  sessionsStored: number;
  waitedMs: number;
}

/** Connections open at rest: the long session's watcher, and from phase 2 on the editor's. */
let restingConnections = 1;

/** Waits for the daemon to be at rest, then reads it. */
async function checkpoint(inspector: DaemonInspector, cycles: number): Promise<Checkpoint> {
  const t0 = Date.now();
  let m = await metrics(d);
  // At rest: the watcher's connection (and the editor's) only, the long session's child only, the pool refilled.
  while (m.troupe_acp_connections !== restingConnections || m.troupe_sessions_live !== 1 || m.troupe_event_feeds_open !== 0 || m.troupe_pool_warm !== POOL || childPids(d.proc.pid!).length !== 1 + POOL) {
    if (Date.now() - t0 > 30_000) throw new Error(`the daemon did not come to rest: ${JSON.stringify(m)}, children ${childPids(d.proc.pid!).length}`);
    await sleep(100);
    m = await metrics(d);
  }
  const waitedMs = Date.now() - t0;
  const heap = await inspector.gcHeap();
  return {
    cycles,
    heapUsed: heap.heapUsed,
    external: heap.external,
    arrayBuffers: heap.arrayBuffers,
    rss: heap.rss,
    fds: readdirSync(`/proc/${d.proc.pid}/fd`).length,
    children: childPids(d.proc.pid!).length,
    connections: m.troupe_acp_connections!,
    sessionsLive: m.troupe_sessions_live!,
    sessionsHeld: m.troupe_sessions_held!,
    feedsOpen: m.troupe_event_feeds_open!,
    sessionsStored: m.troupe_sessions_stored!,
    waitedMs,
  };
}

/** Least-squares slope of y over x: growth per cycle. */
function slope(points: { x: number; y: number }[]): number {
  const n = points.length;
  const mx = points.reduce((a, p) => a + p.x, 0) / n;
  const my = points.reduce((a, p) => a + p.y, 0) / n;
  const num = points.reduce((a, p) => a + (p.x - mx) * (p.y - my), 0);
  const den = points.reduce((a, p) => a + (p.x - mx) ** 2, 0);
  return den === 0 ? 0 : num / den;
}

/**
 * Growth after the warm-up checkpoint: per cycle (least squares) and end over baseline. Bounded
 * buffers fill during the first cycles (the daemon-wide ring of the last 5,000 machine transitions
 * takes ~700 connection cycles, ~0.5 MB): `lateHeapUsedBytesPerCycle` fits the second half of the
 * checkpoints only, where a leak would still climb and a filled buffer is flat.
 */
function growth(points: Checkpoint[]) {
  const [base, ...rest] = points;
  const last = points[points.length - 1]!;
  const fit = (from: Checkpoint[], key: 'heapUsed' | 'external' | 'rss') => Math.round(slope(from.map((p) => ({ x: p.cycles, y: p[key] }))));
  const per = (key: 'heapUsed' | 'external' | 'rss') => fit(points, key);
  return {
    baselineCycles: base!.cycles,
    heapUsedBytesPerCycle: per('heapUsed'),
    lateHeapUsedBytesPerCycle: fit(points.slice(Math.floor(points.length / 2)), 'heapUsed'),
    externalBytesPerCycle: per('external'),
    rssBytesPerCycle: per('rss'),
    heapUsedEndOverBaseline: Math.round((last.heapUsed / base!.heapUsed) * 1000) / 1000,
    fdsEndMinusBaseline: last.fds - base!.fds,
    checkpointsAfterBaseline: rest.length,
  };
}

const everyCheckpoint = (total: number) => Math.max(1, Math.floor(total / CHECKPOINTS));
type Kind = 'sdk-http' | 'sdk-ws' | 'lean-http' | 'lean-ws' | 'lean-http-vanish' | 'lean-ws-vanish';
const KINDS: Kind[] = ['sdk-http', 'sdk-ws', 'lean-http', 'lean-ws', 'lean-http-vanish', 'lean-ws-vanish'];

function client(kind: Kind): BenchClient & { drop?(): void; init(): Promise<unknown> } {
  if (kind === 'sdk-http') return CountingClient.http(d.url, d.headers);
  if (kind === 'sdk-ws') return CountingClient.ws(d.url, d.headers);
  return kind.startsWith('lean-http') ? LeanHttpClient.at(d.url, d.headers) : new LeanWsClient(d.url, d.headers);
}

const text = (t: string) => [{ type: 'text', text: t }];

/**
 * The long session's whole log, read from the start: through its /v1 event feed (the daemon reads
 * the log file), and as a `session/load` replay over ACP (the session's child reads it), the
 * baseline. Each twice; the daemon's CPU time for each.
 */
async function replayFigures(sessionId: string) {
  const last = (await (await fetch(`${d.url}/v1/sessions/${sessionId}`, { headers: d.headers })).json()).lastSeq as number;
  const timed = async (f: () => Promise<void>) => {
    const cpu0 = cpuTicks(d.proc.pid!);
    const t0 = performance.now();
    await f();
    return { ms: Math.round(performance.now() - t0), daemonCpuMs: (cpuTicks(d.proc.pid!) - cpu0) * 10 };
  };
  const feed = () =>
    timed(async () => {
      const r = await fetch(`${d.url}/v1/sessions/${sessionId}/events?after=0`, { headers: d.headers });
      const reader = r.body!.getReader();
      const decoder = new TextDecoder();
      let tail = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) throw new Error('the feed ended before its last event');
        const text = tail + decoder.decode(value, { stream: true });
        if (text.includes(`\nid: ${last}\n`) || text.startsWith(`id: ${last}\n`)) break;
        tail = text.slice(-64);
      }
      await reader.cancel();
    });
  const load = () =>
    timed(async () => {
      const c = await new LeanWsClient(d.url, d.headers).init();
      await c.request('session/load', { sessionId, cwd: home, mcpServers: [] });
      c.close();
    });
  const feedRuns = [await feed(), await feed()];
  const loadRuns = [await load(), await load()];
  const best = (runs: { ms: number }[]) => Math.min(...runs.map((r) => r.ms));
  return { events: last, feedRuns, sessionLoadRuns: loadRuns, feedOverSessionLoad: Math.round((best(feedRuns) / best(loadRuns)) * 100) / 100 };
}

/** Opens the session's event feed from the start, reads its first chunk, and leaves mid-replay. */
async function watchFeed(sessionId: string): Promise<void> {
  const abort = new AbortController();
  const r = await fetch(`${d.url}/v1/sessions/${sessionId}/events?after=0`, { headers: d.headers, signal: abort.signal });
  if (!r.ok || !r.body) throw new Error(`event feed: HTTP ${r.status}`);
  const reader = r.body.getReader();
  await reader.read();
  abort.abort();
  await reader.cancel().catch(() => undefined);
}
let inspector: DaemonInspector | undefined;
let result: Record<string, unknown> = {};
try {
  inspector = await DaemonInspector.connect(d);
  const watcher = await new LeanWsClient(d.url, d.headers).init();
  const longSession = await watcher.newSession(home);

  // Phase 1: client lifetimes on one long session.
  const connectionPoints: Checkpoint[] = [];
  const cycleMs: number[] = [];
  const every = everyCheckpoint(CONNECTION_CYCLES);
  for (let i = 1; i <= CONNECTION_CYCLES; i++) {
    const kind = KINDS[i % KINDS.length]!;
    const t0 = performance.now();
    const c = client(kind);
    await c.init();
    await c.request('session/resume', { sessionId: longSession, cwd: home, mcpServers: [] });
    if (kind.endsWith('vanish')) {
      // Gone while its reply streams: the turn goes on, its answer has no one to reach.
      const from = c.chunkCount(longSession);
      void c.request('session/prompt', { sessionId: longSession, prompt: text('burst') }).catch(() => undefined);
      await c.chunksReach(longSession, from + 1);
      c.drop!();
    } else {
      await c.request('session/prompt', { sessionId: longSession, prompt: text('tiny') });
      c.close();
    }
    // A watcher of the session's /v1 event feed comes and goes too (the inspector, a dashboard).
    if (i % KINDS.length === 0) await watchFeed(longSession);
    cycleMs.push(performance.now() - t0);
    if (i % every === 0) connectionPoints.push(await checkpoint(inspector, i));
  }

  const replay = await replayFigures(longSession);

  // Phase 2: session lifetimes.
  const sessionPoints: Checkpoint[] = [];
  const everyS = everyCheckpoint(SESSION_CYCLES);
  // An editor's way: one connection for all its sessions, open throughout.
  const editor = await new LeanWsClient(d.url, d.headers).init();
  restingConnections = 2;
  for (let i = 1; i <= SESSION_CYCLES; i++) {
    const c = i % 4 === 1 ? editor : await (i % 2 ? new LeanWsClient(d.url, d.headers) : LeanHttpClient.at(d.url, d.headers)).init();
    const sessionId = await c.newSession(home);
    await c.request('session/prompt', { sessionId, prompt: text('tiny') });
    if (i % 2) await c.request('session/close', { sessionId });
    else {
      const r = await fetch(`${d.url}/v1/sessions/${sessionId}`, { method: 'DELETE', headers: d.headers });
      if (!r.ok) throw new Error(`DELETE /v1/sessions/${sessionId}: HTTP ${r.status}`);
    }
    if (c !== editor) c.close();
    if (i % everyS === 0) sessionPoints.push(await checkpoint(inspector, i));
  }

  // Phase 3: crashes. The child dies mid-reply (kill -9), the prompt gets agent_crashed, the next
  // one is served by the restarted child, and the session is closed.
  const crashPoints: Checkpoint[] = [];
  const everyC = everyCheckpoint(CRASH_CYCLES);
  for (let i = 1; i <= CRASH_CYCLES; i++) {
    const c = await (i % 2 ? LeanHttpClient.at(d.url, d.headers) : new LeanWsClient(d.url, d.headers)).init();
    const sessionId = await c.newSession(home);
    const pid = (await (await fetch(`${d.url}/v1/sessions/${sessionId}`, { headers: d.headers })).json()).child.pid as number;
    const streaming = c.request('session/prompt', { sessionId, prompt: text('stall') }).then(
      () => 'answered',
      (err: Error) => err.message,
    );
    await c.chunksReach(sessionId, 1);
    process.kill(pid, 'SIGKILL');
    const outcome = await streaming;
    if (!/process died/.test(outcome)) throw new Error(`crash cycle ${i}: the prompt got ${outcome}, not agent_crashed`);
    await c.request('session/prompt', { sessionId, prompt: text('tiny') });
    await c.request('session/close', { sessionId });
    c.close();
    if (i % everyC === 0) crashPoints.push(await checkpoint(inspector, i));
  }
  editor.close();
  watcher.close();

  result = {
    replay,
    connections: { cycles: CONNECTION_CYCLES, kinds: KINDS, cycleMsMedian: Math.round(cycleMs.sort((a, b) => a - b)[cycleMs.length >> 1]! * 100) / 100, growth: growth(connectionPoints), checkpoints: connectionPoints },
    sessions: { cycles: SESSION_CYCLES, ends: ['session/close', 'DELETE /v1/sessions/:id'], growth: growth(sessionPoints), checkpoints: sessionPoints },
    crashes: { cycles: CRASH_CYCLES, growth: growth(crashPoints), checkpoints: crashPoints },
  };
} finally {
  clearTimeout(watchdog);
  inspector?.close();
  await d.stop();
  rmSync(home, { recursive: true, force: true });
}

const out = {
  ...resultHeader('daemon-churn', loadAverageAtStart),
  what: 'the daemon after many client and session lifetimes: live heap after a full GC, fds and children at rest, at checkpoints; growth per cycle after the first checkpoint (the baseline, after the warm-up cycles)',
  daemonArgs: { pool: POOL, connectionIdleMs: CONNECTION_IDLE_MS },
  ...result,
  wallSeconds: Math.round((Date.now() - started) / 1000),
};
mkdirSync('bench/results', { recursive: true });
writeFileSync('bench/results/daemon-churn.json', JSON.stringify(out, null, 2) + '\n');
const growthOf = (phase: string) => (result[phase] as { growth: unknown }).growth;
console.log(JSON.stringify({ connections: growthOf('connections'), sessions: growthOf('sessions'), crashes: growthOf('crashes') }, null, 1));
