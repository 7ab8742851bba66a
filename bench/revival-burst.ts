/**
 * revival-burst: a daemon started again while every client reconnects at once. N clients (half SSE,
 * half WebSocket) each create a session in one burst (`session/new`: this run's baseline, as both
 * bursts start N cold children, `--pool 0`); the daemon is stopped and started again on the same
 * home, and N new clients each `session/load` one of those sessions, all at once. Between the two,
 * a wake burst: the first burst's clients stay attached while their sessions' children stop idle
 * (`--idle-ms`), then each sends its session a prompt, all at once (the relay still holds those
 * sessions: they wake, rather than revive). Every burst runs
 * under the event-loop probe (GET /v1/health every 5 ms, from a process of its own) and are read
 * with the daemon's own figures (/metrics: the longest stall, split into blocked and starved).
 *
 * BENCH_TROUPE_BIN_A: another checkout's bin/troupe.js (built), run alternately with this one as
 * `before` / `after`. Counts: BENCH_REVIVALS (100), BENCH_ROUNDS (3). Writes
 * bench/results/revival-burst.json (BENCH_REVIVAL_OUT).
 *
 *   npm run build && node dist/bench/revival-burst.js
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { CountingClient, loadAverages, resultHeader, scriptEnv, sleep, startDaemon, summarize, type Served } from './daemon-support.js';
import { burst, loopFigures, loopMetrics, startProbe } from './daemon-scale.js';
import { abCheckouts, inRoundOrder } from './acp-rpc.js';

const int = (name: string, dflt: number) => Number(process.env[name] ?? dflt);
const N = int('BENCH_REVIVALS', 100);
const ROUNDS = int('BENCH_ROUNDS', 3);
const OUT = process.env.BENCH_REVIVAL_OUT ?? 'bench/results/revival-burst.json';
const BINS = abCheckouts();

const tracked = new Set<ChildProcess>();
const track = (p: ChildProcess) => tracked.add(p);

/** What one burst did to the daemon's loop, and how long it took. */
interface Watched {
  wallMs: number;
  failed: number;
  probeMaxMs: number;
  probeP99Ms: number;
  probeOver50: number;
  probeLateMaxMs: number;
  blockedMaxMs: number;
  starvedMaxMs: number;
}

/** Runs `work` (which returns its window and failures) under the probe, after a second of quiet. */
async function watched(d: Served, work: () => Promise<{ from: number; to: number; failed: number }>): Promise<Watched> {
  const probe = startProbe(d.url + '/v1/health', track);
  await sleep(1000);
  await loopMetrics(d); // starts the daemon's window
  const { from, to, failed } = await work();
  const inDaemon = await loopMetrics(d);
  await sleep(300);
  const loop = loopFigures(await probe.stop(), from, to);
  return { wallMs: to - from, failed, probeMaxMs: loop.latencyMs.max, probeP99Ms: loop.latencyMs.p99, probeOver50: loop.over50ms, probeLateMaxMs: loop.probeLateMaxMs, blockedMaxMs: inDaemon.blockedMaxMs!, starvedMaxMs: inDaemon.starvedMaxMs! };
}

/** `ids.length` clients connect, then each loads one session, all at once. */
async function loadBurst(d: Served, ids: readonly string[], cwd: string) {
  const clients = await Promise.all(ids.map((_, i) => (i % 2 ? CountingClient.ws(d.url, d.headers) : CountingClient.http(d.url, d.headers)).init()));
  const from = Date.now();
  const settled = await Promise.allSettled(clients.map((c, i) => c.request('session/load', { sessionId: ids[i], cwd, mcpServers: [] })));
  const to = Date.now();
  for (const c of clients) c.close();
  return { from, to, failed: settled.filter((r) => r.status === 'rejected').length };
}

/** Waits until no session has a child (each stopped idle), for at most a minute. */
async function allStopped(d: Served): Promise<void> {
  for (const end = Date.now() + 60_000; Date.now() < end; await sleep(200)) {
    const health = await (await fetch(d.url + '/v1/health')).json();
    if (health.sessions?.live === 0) return;
  }
  throw new Error('the sessions did not all stop idle within a minute');
}

/** Each session of `b` is sent a prompt by its client, all at once. */
async function wakeBurst(sessions: { client: CountingClient; sessionId: string }[]) {
  const from = Date.now();
  const settled = await Promise.allSettled(sessions.map((s) => s.client.request('session/prompt', { sessionId: s.sessionId, prompt: [{ type: 'text', text: 'tiny' }] })));
  return { from, to: Date.now(), failed: settled.filter((r) => r.status === 'rejected').length };
}

async function round(bin: string): Promise<{ newBurst: Watched; wakeBurst: Watched; revivalBurst: Watched }> {
  const home = mkdtempSync(join(tmpdir(), 'troupe-revival-'));
  const cwd = mkdtempSync(join(tmpdir(), 'troupe-revival-ws-'));
  const env = scriptEnv(home, { replies: [{ when: 'tiny', items: [{ text: 'ok' }] }] });
  // Idle children stop 2 s after their last message: the wake burst waits for all of them to.
  const start = () => startDaemon({ home, env, args: ['--pool', '0', '--idle-ms', '2000'], bin });
  try {
    let d = await start();
    let made: Awaited<ReturnType<typeof burst>> | undefined;
    const newBurst = await watched(d, async () => (made = await burst(d.url, d.headers, N, cwd)));
    const ids = made!.sessions.map((s) => s.sessionId);
    await allStopped(d);
    const woken = await watched(d, () => wakeBurst(made!.sessions));
    for (const c of made!.clients) c.close();
    await d.stop();
    d = await start();
    const revivalBurst = await watched(d, () => loadBurst(d, ids, cwd));
    await d.stop();
    return { newBurst, wakeBurst: woken, revivalBurst };
  } finally {
    rmSync(home, { recursive: true, force: true });
    rmSync(cwd, { recursive: true, force: true });
  }
}

const loadAverageAtStart = loadAverages();
const runs: Record<string, Awaited<ReturnType<typeof round>>[]> = {};
try {
  for (let r = 0; r < ROUNDS; r++) {
    for (const name of inRoundOrder(BINS, r)) {
      process.stderr.write(`round ${r + 1}: ${name}\n`);
      (runs[name] ??= []).push(await round(BINS[name]!));
    }
  }
} finally {
  for (const p of tracked) p.kill('SIGKILL');
}
// Nearest-rank p50 (of an odd count of rounds, the middle one), and the worst round: a stall bound is about the worst.
const keys = ['wallMs', 'probeMaxMs', 'probeP99Ms', 'blockedMaxMs', 'starvedMaxMs'] as const;
type Figures = Record<(typeof keys)[number], number>;
const over = (ws: Watched[], f: (xs: number[]) => number) => Object.fromEntries(keys.map((k) => [k, f(ws.map((w) => w[k]))])) as Figures;
const median = (xs: number[]) => summarize(xs, 1).p50;
const worst = (xs: number[]) => Math.max(...xs);
// null where the baseline was 0 (no stall to compare with).
const ratios = (a: Figures, b: Figures) => Object.fromEntries(keys.map((k) => [k, b[k] ? +(a[k] / b[k]).toFixed(3) : null]));
const byCheckout = Object.fromEntries(
  Object.entries(runs).map(([name, rs]) => {
    const [nb, wb, rb] = [rs.map((r) => r.newBurst), rs.map((r) => r.wakeBurst), rs.map((r) => r.revivalBurst)];
    const medians = { newBurst: over(nb, median), wakeBurst: over(wb, median), revivalBurst: over(rb, median) };
    const worsts = { newBurst: over(nb, worst), wakeBurst: over(wb, worst), revivalBurst: over(rb, worst) };
    return [
      name,
      {
        bin: BINS[name],
        medians,
        worst: worsts,
        wakeOverNew: { medians: ratios(medians.wakeBurst, medians.newBurst), worst: ratios(worsts.wakeBurst, worsts.newBurst) },
        revivalOverNew: { medians: ratios(medians.revivalBurst, medians.newBurst), worst: ratios(worsts.revivalBurst, worsts.newBurst) },
        rounds: rs,
      },
    ];
  }),
);
const result = {
  ...resultHeader('revival-burst', loadAverageAtStart),
  note: 'N sessions created in one burst of session/new (the baseline); their clients, still attached, wait until every child stopped idle (--idle-ms 2000), then each prompts its session at once (wakeBurst); the daemon started again, then N session/loads at once, each from its own client (half SSE, half WebSocket), --pool 0; probe: GET /v1/health every 5 ms from its own process; blocked/starved: the daemon\'s /metrics over the burst (src/daemon/loop-watch.ts); medians over rounds',
  counts: { sessions: N, rounds: ROUNDS },
  ...byCheckout,
  ...(runs.before && runs.after
    ? {
        afterOverBefore: {
          wakeMedians: ratios(byCheckout.after!.medians.wakeBurst, byCheckout.before!.medians.wakeBurst),
          wakeWorst: ratios(byCheckout.after!.worst.wakeBurst, byCheckout.before!.worst.wakeBurst),
          revivalMedians: ratios(byCheckout.after!.medians.revivalBurst, byCheckout.before!.medians.revivalBurst),
          revivalWorst: ratios(byCheckout.after!.worst.revivalBurst, byCheckout.before!.worst.revivalBurst),
        },
      }
    : {}),
  loadAverageAtEnd: loadAverages(),
};
mkdirSync(dirname(OUT), { recursive: true });
writeFileSync(OUT, JSON.stringify(result, null, 2) + '\n');
// On the terminal, without the rounds (in the file).
const brief = Object.fromEntries(Object.entries(result).map(([k, v]) => [k, k in byCheckout ? { ...(v as object), rounds: undefined } : v]));
process.stdout.write(JSON.stringify(brief, null, 2) + '\n');
