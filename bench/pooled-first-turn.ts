/**
 * A pooled child's first turn: what the warm-up (src/acp/warm-up.ts) buys and costs. Each run spawns
 * `troupe acp --supervised` with a control pipe on fd 3, as the daemon's pool does, and lets it go
 * idle before asking it anything (as a pooled child waits); then times, in the child's CPU, its
 * `initialize` + `session/new` and its first turn (a one-word reply, or 400 text items), until the
 * response is in and the control frame with `turn_completed` has been read. It also records the CPU
 * the child spent from spawn until idle (start-up plus warm-up) and its PSS a few seconds after.
 * A/B: BENCH_TROUPE_BIN_A (baseline checkout's bin/troupe.js) and the checkout's own, interleaved.
 * Run: `npm run build && BENCH_TROUPE_BIN_A=/path/to/base/bin/troupe.js node dist/bench/pooled-first-turn.js`.
 * BENCH_POOLED_SNAPSHOT=1 starts children from each checkout's startup snapshot instead of the bundle.
 * Writes bench/results/pooled-first-turn.json (BENCH_POOLED_OUT); bench/README.md explains the figures.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { benchBudget, RpcChild } from './acp-rpc.js';
import { threadCpuUs } from './daemon-support.js';
import { ControlFrameDecoder } from '../src/wire/control-frame.codec.js';

const SPAWNS = Number(process.env.BENCH_POOLED_SPAWNS ?? 4);
const PSS_AFTER_MS = Number(process.env.BENCH_POOLED_PSS_AFTER_MS ?? 3000);
const SNAPSHOT = process.env.BENCH_POOLED_SNAPSHOT === '1';
const BINS: Record<string, string> = { after: resolve('bin/troupe.js') };
if (process.env.BENCH_TROUPE_BIN_A) BINS.before = resolve(process.env.BENCH_TROUPE_BIN_A);
const SCRIPT = {
  chunkDelayMs: 0,
  replies: [
    { when: 'one-word', items: [{ text: 'pong' }] },
    { when: 'stream-first', items: Array.from({ length: 400 }, (_, i) => ({ text: `w${i} ` })) },
  ],
};
const live = benchBudget('pooled-first-turn', 300_000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Idle: under 0.3 ms of CPU in each of 3 consecutive 150 ms windows (heartbeats cost less). */
async function idle(pid: number): Promise<void> {
  let last = threadCpuUs(pid);
  for (let quiet = 0, n = 0; quiet < 3 && n < 200; n++) {
    await sleep(150);
    const now = threadCpuUs(pid);
    quiet = now - last < 300 ? quiet + 1 : 0;
    last = now;
  }
}

async function run(bin: string, key: string, env: NodeJS.ProcessEnv, cwd: string) {
  const blob = join(dirname(dirname(bin)), 'dist/acp-snapshot/acp.blob');
  // V8 takes a blob only with the heap flags it was built with (its note lists them), as the daemon passes them.
  const flags = () => (JSON.parse(readFileSync(`${blob}.json`, 'utf8')) as { v8Flags: string[] }).v8Flags;
  const args = SNAPSHOT && existsSync(blob) ? [...flags(), '--snapshot-blob', blob, 'acp', '--supervised'] : [bin, 'acp', '--supervised'];
  const rpc = new RpcChild(args, env, { controlPipe: true });
  live.add(rpc);
  let completed = 0;
  let wake: (() => void) | undefined;
  const decoder = new ControlFrameDecoder();
  (rpc.proc.stdio[3] as Readable).on('data', (chunk: Buffer) => {
    for (const m of decoder.push(chunk)) {
      if (m.t === 'events' && m.events.some((e) => e.type === 'turn_completed')) completed++;
      wake?.();
    }
  });
  try {
    await idle(rpc.pid);
    const idleCpuMs = threadCpuUs(rpc.pid) / 1000;
    await sleep(PSS_AFTER_MS);
    const memory = rpc.memory();
    const c0 = threadCpuUs(rpc.pid);
    await rpc.request('initialize', { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: 'pooled-first-turn', version: '1' } });
    const sessionId = (await rpc.request('session/new', { cwd, mcpServers: [] })).result.sessionId;
    const c1 = threadCpuUs(rpc.pid);
    const reply = await rpc.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: key }] });
    while (completed < 1) await new Promise<void>((r) => (wake = r));
    const c2 = threadCpuUs(rpc.pid);
    return { idleCpuMs, pssKiB: memory.pssKiB, ussKiB: memory.ussKiB, initNewCpuUs: c1 - c0, turnCpuUs: c2 - c1, updates: reply.notifications, stderr: rpc.stderr.trim() };
  } finally {
    live.delete(rpc);
    await rpc.close();
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const r1 = (x: number) => Math.round(x * 10) / 10;

async function main(): Promise<void> {
  const home = mkdtempSync(join(tmpdir(), 'troupe-pooled-first-turn-'));
  const cwd = mkdtempSync(join(tmpdir(), 'troupe-pooled-first-turn-ws-'));
  writeFileSync(join(home, 'script.json'), JSON.stringify(SCRIPT));
  const env = { ...process.env, TROUPE_HOME: home, HOME: home, TROUPE_SCRIPT: join(home, 'script.json'), TROUPE_MODEL: 'scripted/replay', TROUPE_HEARTBEAT_MS: '1000' };
  delete (env as Record<string, unknown>).TROUPE_LOG;
  delete (env as Record<string, unknown>).NODE_OPTIONS;
  const loadAverageAtStart = loadavg();
  const raw: Record<string, Record<string, Awaited<ReturnType<typeof run>>[]>> = {};
  try {
    const names = Object.keys(BINS);
    for (let s = 0; s < SPAWNS; s++) {
      for (const key of ['one-word', 'stream-first']) {
        for (const name of s % 2 ? [...names].reverse() : names) {
          const r = await run(BINS[name]!, key, env, cwd);
          if (r.stderr) process.stderr.write(`${name}: ${r.stderr}\n`);
          ((raw[name] ??= {})[key] ??= []).push(r);
        }
      }
    }
  } finally {
    for (const c of live) c.kill();
    rmSync(home, { recursive: true, force: true });
    rmSync(cwd, { recursive: true, force: true });
  }
  const summary = Object.fromEntries(
    Object.entries(raw).map(([name, byKey]) => {
      const all = Object.values(byKey).flat();
      const oneWord = byKey['one-word'] ?? [];
      const stream = byKey['stream-first'] ?? [];
      return [
        name,
        {
          bin: BINS[name],
          idleCpuMs: r1(median(all.map((r) => r.idleCpuMs))),
          idlePssKiB: median(all.map((r) => r.pssKiB)),
          idleUssKiB: median(all.map((r) => r.ussKiB)),
          initAndNewCpuUs: r1(median(all.map((r) => r.initNewCpuUs))),
          oneWordTurnCpuUs: r1(median(oneWord.map((r) => r.turnCpuUs))),
          firstReply400CpuUsPerUpdate: r1(median(stream.map((r) => r.turnCpuUs / r.updates))),
          runs: {
            idleCpuMs: all.map((r) => r1(r.idleCpuMs)),
            idlePssKiB: all.map((r) => r.pssKiB),
            oneWordTurnCpuUs: oneWord.map((r) => r1(r.turnCpuUs)),
            firstReply400CpuUsPerUpdate: stream.map((r) => r1(r.turnCpuUs / r.updates)),
            updatesPer400Reply: stream[0]?.updates,
          },
        },
      ];
    }),
  );
  const result = {
    bench: 'pooled-first-turn',
    at: new Date().toISOString(),
    node: process.version,
    from: SNAPSHOT ? 'startup snapshot' : 'bundle',
    spawns: SPAWNS,
    loadAverageAtStart,
    loadAverageAtEnd: loadavg(),
    what: "a supervised child left idle before its first request, as in the daemon's pool: CPU (all threads) from spawn to idle, PSS/USS some seconds later, then CPU of initialize + session/new and of its first turn (response + turn_completed on fd 3)",
    ...summary,
  };
  writeFileSync(process.env.BENCH_POOLED_OUT ?? 'bench/results/pooled-first-turn.json', JSON.stringify(result, null, 2) + '\n');
  process.stdout.write(JSON.stringify(result, null, 2) + '\n');
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`pooled-first-turn failed: ${(err as Error).stack}\n`);
    for (const c of live) c.kill();
    process.exit(1);
  },
);
