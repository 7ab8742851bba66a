/**
 * The session-creation part of the daemon benchmark alone (bench/daemon-bench.ts has it all): warm
 * pool and cold `session/new` through a real `troupe serve` (cold twice: children started the default way,
 * the default, and from the startup snapshot with `--snapshot`), and `initialize` + `session/new` to an idle
 * `troupe acp` over stdio, with the process floor, in one run. For quick A/B comparisons while
 * working on child start-up; it writes nothing, it prints JSON.
 * Run: `npm run build && node dist/bench/session-new-bench.js`
 * Counts: BENCH_WARM_NEWS (16), BENCH_COLD_NEWS (10), BENCH_STDIO_FIRST_NEWS (6), BENCH_REF_NEWS (50:
 * the in-process reference, interleaved with the warm series, the target's baseline); BENCH_ROUNDS (1)
 * repeats warm and cold alternately, each round on a fresh daemon; BENCH_COLD_SNAPSHOT=0 skips the
 * `--snapshot` series (e.g. to run this script against an older build that has no such option).
 */
import { type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { scriptEnv, startDaemon, startReferenceServer, summarize, type Served } from './daemon-support.js';
import { daemonSessionNew, IDLE_BEFORE_SAMPLE_MS, nodeSpawnFloor, ReferenceSessionNews, SESSION_NEW_WARMUP, stdioFirstSessionNew } from './daemon-latency.js';

const int = (name: string, dflt: number) => Number(process.env[name] ?? dflt);
const COUNTS = { warm: int('BENCH_WARM_NEWS', 16), cold: int('BENCH_COLD_NEWS', 10), stdio: int('BENCH_STDIO_FIRST_NEWS', 6), rounds: int('BENCH_ROUNDS', 1), ref: int('BENCH_REF_NEWS', 50), coldSnapshot: int('BENCH_COLD_SNAPSHOT', 1) };
const SCRIPT = { replies: [{ when: 'tiny', items: [{ text: 'ok' }] }] };

const dirs: string[] = [];
const tmp = (p: string) => {
  const dir = mkdtempSync(join(tmpdir(), p));
  dirs.push(dir);
  return dir;
};
const procs = new Set<ChildProcess>();
const watchdog = setTimeout(() => {
  process.stderr.write('session-new-bench: over the time budget; killing everything\n');
  for (const p of procs) p.kill('SIGKILL');
  process.exit(1);
}, int('BENCH_BUDGET_MS', 180_000));
watchdog.unref();

async function withDaemon<T>(pool: number, f: (d: Served) => Promise<T>, extra: string[] = []): Promise<T> {
  const home = tmp('troupe-snbench-');
  const d = await startDaemon({ home, args: ['--pool', String(pool), ...extra], env: scriptEnv(home, SCRIPT) });
  procs.add(d.proc);
  try {
    return await f(d);
  } finally {
    await d.stop();
    procs.delete(d.proc);
  }
}

async function main(): Promise<void> {
  const cwd = tmp('troupe-snbench-ws-');
  const loadAtStart = loadavg().map((x) => Math.round(x * 100) / 100);
  const warm: number[] = [];
  const frozen: number[] = [];
  const cold: number[] = [];
  const coldSnapshot: number[] = [];
  const refHome = tmp('troupe-snbench-ref-');
  const ref = COUNTS.ref ? await startReferenceServer(refHome, scriptEnv(refHome, SCRIPT), 4) : undefined;
  if (ref) procs.add(ref.proc);
  const refNews = ref ? await ReferenceSessionNews.open(ref.url, cwd) : undefined;
  await refNews?.run(SESSION_NEW_WARMUP);
  const reference: number[] = [];
  for (let r = 0; r < COUNTS.rounds; r++) {
    if (COUNTS.warm) {
      const between = refNews ? async () => void reference.push(...(await refNews.run(Math.ceil(COUNTS.ref / (2 * COUNTS.warm)), IDLE_BEFORE_SAMPLE_MS))) : undefined;
      const runs = await withDaemon(2, (d) => daemonSessionNew(d, 2, COUNTS.warm, cwd, { freezeRefill: true, warmup: SESSION_NEW_WARMUP, ...(between ? { between } : {}) }));
      warm.push(...runs.samples.all);
      frozen.push(...runs.samples.refillFrozen);
    }
    if (COUNTS.cold) {
      cold.push(...(await withDaemon(0, (d) => daemonSessionNew(d, 0, COUNTS.cold, cwd))).samples.all);
      if (COUNTS.coldSnapshot) coldSnapshot.push(...(await withDaemon(0, (d) => daemonSessionNew(d, 0, COUNTS.cold, cwd), ['--snapshot'])).samples.all);
    }
  }
  refNews?.close();
  const stdioHome = tmp('troupe-snbench-stdio-');
  const stdio = COUNTS.stdio ? await stdioFirstSessionNew(COUNTS.stdio, { TROUPE_HOME: stdioHome, HOME: stdioHome, ...scriptEnv(stdioHome, SCRIPT) }, cwd, (c) => procs.add(c.proc)) : undefined;
  const floor = await nodeSpawnFloor(5);
  process.stdout.write(
    JSON.stringify(
      {
        loadAtStart,
        loadAtEnd: loadavg().map((x) => Math.round(x * 100) / 100),
        warmPoolMs: warm.length ? summarize(warm) : undefined,
        warmPoolRefillFrozenMs: frozen.length ? summarize(frozen) : undefined,
        referenceInProcessMs: reference.length ? summarize(reference) : undefined,
        warmOverReferenceP50: warm.length && reference.length ? Math.round((summarize(warm).p50 / summarize(reference).p50) * 1000) / 1000 : undefined,
        snapshotBuilt: existsSync('dist/acp-snapshot/acp.blob'),
        coldMs: cold.length ? summarize(cold) : undefined,
        coldFromSnapshotMs: coldSnapshot.length ? summarize(coldSnapshot) : undefined,
        stdioIdleChildInitAndNewMs: stdio,
        nodeSpawnToExitMs: floor,
      },
      null,
      1,
    ) + '\n',
  );
}

try {
  await main();
} finally {
  for (const p of procs) p.kill('SIGKILL');
  clearTimeout(watchdog);
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
}
