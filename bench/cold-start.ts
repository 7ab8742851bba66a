/**
 * A cold daemon child, phase by phase: `troupe acp --supervised` spawned as the daemon spawns one for
 * a `session/new` when its pool is empty (`--max-old-space-size=512`, a pipe on fd 3, `initialize`
 * written at once, `session/new` on its answer), then a one-line prompt. Times from just before
 * spawn(): the hello on fd 3, the `initialize` and `session/new` responses, and the prompt's own
 * round trip; and the child's CPU (main thread, and all threads: /proc/<pid>/task/*\/schedstat) when
 * the `session/new` response is in, with its minor page faults by then (`faults`: fresh pages touched,
 * each costing `machine.pageFaultUs`, bench/machine-probe.ts). No daemon in between: daemon-bench's `coldSessionNew` is the
 * same through `troupe serve`, about 5 ms more here (spawn, relay, HTTP).
 *
 * A/B: BENCH_TROUPE_BIN_A (another checkout's bin/troupe.js, built) and this checkout's, spawned
 * alternately (the order flips every round), BENCH_COLD_SPAWNS (16) each; the process floor
 * (`node -e ""` spawn → exit) is measured in the same rounds. Also records how each checkout's agent
 * started (`started` in its debug log: the agent script and its code cache, or the bundle).
 * Run: `npm run build && BENCH_TROUPE_BIN_A=/path/to/base/bin/troupe.js node dist/bench/cold-start.js`.
 * Writes bench/results/cold-start.json (BENCH_COLD_OUT).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { abCheckouts, benchBudget, inRoundOrder, nodeSpawnToExitMs, RpcChild } from './acp-rpc.js';
import { summarize } from './acp-stats.js';
import { machineCosts } from './machine-probe.js';
import { procStatFields } from '../src/core/proc-stat.js';
import { threadCpuUs } from './daemon-support.js';

const SPAWNS = Number(process.env.BENCH_COLD_SPAWNS ?? 16);
const OUT = process.env.BENCH_COLD_OUT ?? 'bench/results/cold-start.json';
const BINS = abCheckouts();

const live = benchBudget('cold-start', 240_000);

const mainThreadCpuUs = (pid: number) => Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1000;
/** Minor page faults of the whole process so far (proc(5) field 10, `minflt`): each is a fresh page touched. */
const minorFaults = (pid: number) => Number(procStatFields(pid)?.[10 - 3]);

async function coldChild(bin: string, env: NodeJS.ProcessEnv, cwd: string) {
  const rpc = new RpcChild(['--max-old-space-size=512', bin, 'acp', '--supervised'], env, { controlPipe: true });
  live.add(rpc);
  try {
    const hello = new Promise<number>((r) => (rpc.proc.stdio[3] as Readable).once('data', () => r(performance.now())));
    const init = await rpc.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
    const created = await rpc.request('session/new', { cwd, mcpServers: [] });
    const cpuMs = threadCpuUs(rpc.pid) / 1000;
    const mainCpuMs = mainThreadCpuUs(rpc.pid) / 1000;
    const faults = minorFaults(rpc.pid);
    const prompt = await rpc.request('session/prompt', { sessionId: created.result.sessionId, prompt: [{ type: 'text', text: 'tiny' }] });
    const t0 = rpc.spawnedAt;
    return { helloMs: (await hello) - t0, initializeMs: init.at - t0, sessionNewMs: created.at - t0, cpuMs, mainCpuMs, faults, firstPromptMs: prompt.ms };
  } finally {
    live.delete(rpc);
    await rpc.close();
  }
}

/** How a checkout's agent starts, from its debug log (`started {...}`). */
async function startedFrom(bin: string, env: NodeJS.ProcessEnv): Promise<unknown> {
  const rpc = new RpcChild(['--max-old-space-size=512', bin, 'acp', '--supervised'], { ...env, TROUPE_LOG: 'debug' }, { controlPipe: true });
  await rpc.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
  await rpc.close();
  const line = rpc.stderr.split('\n').find((l) => l.includes('troupe acp: started'));
  return line ? JSON.parse(line.slice(line.indexOf('{'))) : 'not logged (older build)';
}

async function main(): Promise<void> {
  const home = mkdtempSync(join(tmpdir(), 'troupe-cold-start-'));
  const cwd = mkdtempSync(join(tmpdir(), 'troupe-cold-start-ws-'));
  writeFileSync(join(home, 'script.json'), JSON.stringify({ replies: [{ when: 'tiny', items: [{ text: 'ok' }] }] }));
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '', TROUPE_HOME: home, HOME: home, TROUPE_SCRIPT: join(home, 'script.json'), TROUPE_MODEL: 'scripted/replay', TROUPE_HEARTBEAT_MS: '1000' };
  const loadAverageAtStart = loadavg();
  const runs: Record<string, Awaited<ReturnType<typeof coldChild>>[]> = {};
  const floor: number[] = [];
  const started: Record<string, unknown> = {};
  try {
    for (const [name, bin] of Object.entries(BINS)) started[name] = await startedFrom(bin, env);
    for (let s = 0; s < SPAWNS; s++) {
      floor.push(await nodeSpawnToExitMs());
      for (const name of inRoundOrder(BINS, s)) (runs[name] ??= []).push(await coldChild(BINS[name]!, env, cwd));
    }
  } finally {
    for (const c of live) c.kill();
    rmSync(home, { recursive: true, force: true });
    rmSync(cwd, { recursive: true, force: true });
  }
  const figures = (rs: Awaited<ReturnType<typeof coldChild>>[]) =>
    Object.fromEntries((['helloMs', 'initializeMs', 'sessionNewMs', 'mainCpuMs', 'cpuMs', 'faults', 'firstPromptMs'] as const).map((k) => [k, summarize(rs.map((r) => r[k]), 1)]));
  const byCheckout = Object.fromEntries(Object.entries(runs).map(([name, rs]) => [name, { bin: BINS[name], started: started[name], ...figures(rs) }]));
  const ratio = (key: 'sessionNewMs' | 'mainCpuMs') => +(figures(runs.after!)[key]!.p50 / figures(runs.before!)[key]!.p50).toFixed(3);
  const result = {
    note: 'cold troupe acp --supervised child, no daemon: ms from spawn() to each response; CPU ms of the child when session/new has answered (bench/cold-start.ts)',
    loadAverageAtStart,
    loadAverageAtEnd: loadavg(),
    spawnsPerCheckout: SPAWNS,
    nodeSpawnToExitMs: summarize(floor, 1),
    machine: machineCosts(),
    ...byCheckout,
    ...(runs.before && runs.after
      ? { afterOverBefore: { sessionNewMsP50: ratio('sessionNewMs'), mainCpuMsP50: ratio('mainCpuMs') } }
      : {}),
  };
  mkdirSync(dirname(OUT), { recursive: true });
  writeFileSync(OUT, JSON.stringify(result, null, 2) + '\n');
  process.stdout.write(JSON.stringify(result, null, 2) + '\n');
}

await main();
