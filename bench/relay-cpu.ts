/**
 * Where the relay round trip's time goes: the `_troupe/session_state` round trip of daemon-bench's
 * `roundTrip.lean` series (lean HTTP client, raw keep-alive POST + SSE reader), through `troupe serve`
 * and through the relay floor (bench/relay-floor.ts: the least relay in front of the least agent on
 * the same SDK), with the CPU each request costs each process: the server's main thread and its
 * other threads (V8's GC and compiler workers, libuv's pool), the agent child's, and the client's.
 *
 * Each round measures, in turn: the daemon and the floor as the scheduler places them, then both
 * with every process (client, server, child) pinned to one CPU (`taskset`): on one core no wake-up
 * needs another CPU, and the round trip is the sum of the three processes' work.
 *
 * Every series runs on one session in service: BENCH_RELAY_WARMUP (16,000) untimed requests first,
 * by which time V8 has optimized the path in all three processes (bench/README.md, "Fresh and in
 * service"), then BENCH_RELAY_RTT (3000) timed.
 *
 * Run: `npm run build && node dist/bench/relay-cpu.js` (about 2 minutes). BENCH_RELAY_ROUNDS (3).
 * Writes bench/results/relay-cpu.json (BENCH_RELAY_OUT).
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { LeanHttpClient } from './daemon-lean.js';
import { childPids, loadAverages, resultHeader, startDaemon, startRelayFloor, stopProcess, summarize, threadCpuSplitUs, type Summary } from './daemon-support.js';

const N = Number(process.env.BENCH_RELAY_RTT ?? 3000);
const WARMUP = Number(process.env.BENCH_RELAY_WARMUP ?? 16_000);
const ROUNDS = Number(process.env.BENCH_RELAY_ROUNDS ?? 3);
const OUT = process.env.BENCH_RELAY_OUT ?? 'bench/results/relay-cpu.json';
const ALL_CPUS = `0-${cpus().length - 1}`;

const pin = (pid: number, cpu: string) => execFileSync('taskset', ['-a', '-p', '-c', cpu, String(pid)], { stdio: 'ignore' });

interface Series {
  latencyUs: Summary;
  /** CPU µs per request, by process (and thread group). */
  cpuUsPerRequest: { serverMain: number; serverOther: number; childMain: number; childOther: number; client: number };
}

/** Timed round trips on one session, with the CPU every process spent on them. */
async function series(url: string, headers: Record<string, string>, server: ChildProcess, pinned: boolean): Promise<Series> {
  const client = await LeanHttpClient.at(url, headers).init();
  const cwd = mkdtempSync(join(tmpdir(), 'troupe-relay-cpu-cwd-'));
  try {
    const sessionId = await client.newSession(cwd);
    // The session's child: the floor has one child; the daemon's pool (size 1) refills after the
    // session takes its child, so the session's is the oldest (lowest pid: pids grow here).
    const child = Math.min(...childPids(server.pid!));
    if (pinned) for (const pid of [process.pid, server.pid!, ...childPids(server.pid!)]) pin(pid, '0');
    const params = { sessionId };
    for (let i = 0; i < WARMUP; i++) await client.request('_troupe/session_state', params);
    const s0 = threadCpuSplitUs(server.pid!);
    const c0 = threadCpuSplitUs(child);
    const u0 = process.cpuUsage();
    const us: number[] = [];
    for (let i = 0; i < N; i++) {
      const t0 = performance.now();
      await client.request('_troupe/session_state', params);
      us.push((performance.now() - t0) * 1000);
    }
    const u = process.cpuUsage(u0);
    const s1 = threadCpuSplitUs(server.pid!);
    const c1 = threadCpuSplitUs(child);
    const per = (x: number) => Math.round((x / N) * 10) / 10;
    return {
      latencyUs: summarize(us, 1),
      cpuUsPerRequest: {
        serverMain: per(s1.main - s0.main),
        serverOther: per(s1.other - s0.other),
        childMain: per(c1.main - c0.main),
        childOther: per(c1.other - c0.other),
        client: per(u.user + u.system),
      },
    };
  } finally {
    client.close();
    rmSync(cwd, { recursive: true, force: true });
    if (pinned) pin(process.pid, ALL_CPUS);
  }
}

async function daemonSeries(pinned: boolean): Promise<Series> {
  const home = mkdtempSync(join(tmpdir(), 'troupe-relay-cpu-'));
  const d = await startDaemon({ home, args: ['--pool', '1'] });
  try {
    return await series(d.url, d.headers, d.proc, pinned);
  } finally {
    await d.stop();
    rmSync(home, { recursive: true, force: true });
  }
}

async function floorSeries(pinned: boolean): Promise<Series> {
  const f = await startRelayFloor();
  try {
    return await series(f.url, {}, f.proc, pinned);
  } finally {
    await stopProcess(f.proc);
  }
}

const budget = setTimeout(() => {
  console.error('relay-cpu: over its 360 s budget');
  process.exit(1);
}, 360_000);
budget.unref();

const loadAverageAtStart = loadAverages();
const rounds: Record<string, Series>[] = [];
for (let r = 0; r < ROUNDS; r++) {
  rounds.push({ daemon: await daemonSeries(false), floor: await floorSeries(false), daemonOneCpu: await daemonSeries(true), floorOneCpu: await floorSeries(true) });
  console.error(`round ${r + 1}/${ROUNDS}`, JSON.stringify(Object.fromEntries(Object.entries(rounds[r]!).map(([k, v]) => [k, v.latencyUs.p50]))));
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const summary = Object.fromEntries(
  Object.keys(rounds[0]!).map((k) => {
    const all = rounds.map((x) => x[k]!);
    const cpu = Object.fromEntries(Object.keys(all[0]!.cpuUsPerRequest).map((c) => [c, median(all.map((s) => s.cpuUsPerRequest[c as keyof Series['cpuUsPerRequest']]))]));
    return [k, { p50Us: median(all.map((s) => s.latencyUs.p50)), p99Us: median(all.map((s) => s.latencyUs.p99)), cpuUsPerRequest: cpu }];
  }),
);
const result = {
  ...resultHeader('relay-cpu', loadAverageAtStart),
  loadAverageAtEnd: loadAverages(),
  counts: { timedPerSeries: N, untimedPerSeries: WARMUP, rounds: ROUNDS },
  note: 'lean HTTP `_troupe/session_state` round trips; CPU µs per request from /proc/<pid>/task/*/schedstat (server: main thread and other threads; child: the session\'s agent) and process.cpuUsage (client); *OneCpu: client, server and children pinned to CPU 0 with taskset. summary = median of the rounds',
  summary,
  rounds,
};
writeFileSync(OUT, JSON.stringify(result, null, 1) + '\n');
console.log(JSON.stringify(summary, null, 1));
