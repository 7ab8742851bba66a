/**
 * The aggregate series of daemon-bench, repeated on the same sessions: how the daemon's aggregate
 * throughput moves as its children serve one long reply after another. daemon-bench judges the
 * aggregate on each session's first replies, in child processes whose code V8 has not optimized yet
 * (bench/README.md, child-stream); a session in service has streamed before. A diagnostic, not a
 * target: it reports every round, the first included.
 *
 * `BENCH_ROUNDS_SESSIONS` (100) sessions, half opened by a lean SSE client and half by a lean WS
 * client (bench/daemon-lean.ts), each with a second lean client of the other kind attached (as
 * daemon-bench's `sseAndWsPerSession`), each session first served one `tiny` prompt; then
 * `BENCH_ROUNDS` (6) rounds in which every session streams a reply of `BENCH_ROUNDS_ITEMS` (4000)
 * text items at once. Also reports the daemon's own loop figures over the run and how its watchdog
 * judged silent children (killed as hung, or waited for as short of CPU), from /metrics. Writes
 * bench/results/aggregate-rounds.json.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { childPids, loadAverages, spawnerPids, resultHeader, scriptEnv, sleep, startDaemon, summarize } from './daemon-support.js';
import { LeanHttpClient, LeanWsClient } from './daemon-lean.js';
import { aggregate, type AggregateResult } from './daemon-aggregate.js';
import { loopMetrics } from './daemon-scale.js';

/** How the supervisor judged silent children over the run (spec/daemon.md §Supervision, Heartbeats). */
async function watchdogVerdicts(d: { url: string; headers: Record<string, string> }): Promise<{ killedAsHung: number; waitedForAsSlow: number }> {
  const text = await (await fetch(d.url + '/metrics', { headers: d.headers })).text();
  const sum = (re: RegExp) => [...text.matchAll(re)].reduce((n, m) => n + Number(m[1]), 0);
  return { killedAsHung: sum(/^troupe_child_exits_total\{[^}]*reason="hung"[^}]*\} (\d+)$/gm), waitedForAsSlow: sum(/^troupe_child_slow_waits_total (\d+)$/gm) };
}

const int = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const SESSIONS = int('BENCH_ROUNDS_SESSIONS', 100);
const ROUNDS = int('BENCH_ROUNDS', 6);
const ITEMS = int('BENCH_ROUNDS_ITEMS', 4000);

const started = Date.now();
const loadAverageAtStart = loadAverages();
const home = mkdtempSync(join(tmpdir(), 'troupe-agg-rounds-'));
const words = Array.from({ length: ITEMS }, (_, i) => ({ text: `w${i} ` }));
// BENCH_CHILD_NICE=N: the children at niceness N (--child-nice), to see what the daemon's priority changes.
const childNice = process.env.BENCH_CHILD_NICE;
const d = await startDaemon({ home, args: childNice ? ['--child-nice', childNice] : [], env: scriptEnv(home, { replies: [{ when: 'long', items: words }, { when: 'tiny', items: [{ text: 'ok' }] }] }) });
const watchdog = setTimeout(() => {
  d.proc.kill('SIGKILL');
  process.exit(1);
}, 300_000);
const rounds: AggregateResult[] = [];
let daemonLoop: Record<string, number> | undefined;
let verdicts: { killedAsHung: number; waitedForAsSlow: number } | undefined;
try {
  type Kind = 'sse' | 'ws';
  const open = (kind: Kind) => (kind === 'sse' ? LeanHttpClient.at(d.url, d.headers) : new LeanWsClient(d.url, d.headers)).init();
  const kinds: Kind[] = Array.from({ length: SESSIONS }, (_, i) => (i % 2 === 0 ? 'sse' : 'ws'));
  const clients = await Promise.all(kinds.map(open));
  const sessions: string[] = [];
  // One at a time, as a person opening sessions would: the pool hands out two, the rest are spawned.
  for (const c of clients) sessions.push(await c.newSession(home));
  await Promise.all(clients.map((c, i) => c.request('session/prompt', { sessionId: sessions[i], prompt: [{ type: 'text', text: 'tiny' }] })));
  const watchers = await Promise.all(kinds.map((k) => open(k === 'sse' ? 'ws' : 'sse')));
  await Promise.all(watchers.map((w, i) => w.request('_troupe/session_state', { sessionId: sessions[i] })));
  await sleep(2000);
  const streamers = clients.map((client, i) => ({ client, sessionId: sessions[i]!, watchers: [watchers[i]!] }));
  const procs = { server: d.proc.pid!, children: () => childPids(d.proc.pid!), spawner: () => spawnerPids(d.proc.pid!) };
  for (let r = 0; r < ROUNDS; r++) {
    const result = await aggregate(streamers, 'long', ITEMS, { sse: SESSIONS, ws: SESSIONS }, procs);
    rounds.push(result);
    console.error(`round ${r}: ${result.eventsPerSecond} events/s, CPU µs per event ${JSON.stringify(result.cpuUsPerEvent)}`);
  }
  for (const c of [...clients, ...watchers]) c.close();
  // The first scrape of the run: the loop figures cover all of it.
  daemonLoop = await loopMetrics(d);
  verdicts = await watchdogVerdicts(d);
} finally {
  clearTimeout(watchdog);
  await d.stop();
  rmSync(home, { recursive: true, force: true });
}
const perSecond = rounds.map((r) => r.eventsPerSecond);
const result = {
  ...resultHeader('aggregate-rounds', loadAverageAtStart),
  sessions: SESSIONS,
  childNice: childNice ?? 'default',
  clients: { sse: SESSIONS, ws: SESSIONS },
  itemsPerReply: ITEMS,
  eventsPerSecondByRound: perSecond,
  bestRound: Math.max(...perSecond),
  medianOfLaterRounds: perSecond.length > 1 ? summarize(perSecond.slice(1), 0).p50 : undefined,
  daemonLoop,
  watchdog: verdicts,
  rounds,
  wallSeconds: Math.round((Date.now() - started) / 1000),
};
mkdirSync('bench/results', { recursive: true });
writeFileSync('bench/results/aggregate-rounds.json', JSON.stringify(result, null, 2) + '\n');
console.log(JSON.stringify({ eventsPerSecondByRound: perSecond, medianOfLaterRounds: result.medianOfLaterRounds, daemonLoop, watchdog: verdicts }));
