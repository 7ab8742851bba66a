/**
 * What a child's start costs the daemon's loop, through its spawner process (src/actors/child-spawner.ts)
 * against the baseline of Node's own spawn() in the same process (what the daemon did before), in
 * one run, interleaved: the time the call holds the caller's loop, the time until the child's pipes
 * are usable (the spawner's `handed`; spawn()'s return), and until the child's first bytes on fd 3
 * arrive (a `troupe acp` child's hello). `BENCH_SPAWNS` (30) of each; `BENCH_SPAWN_HOGS` (0) busy
 * processes first, to see the same on saturated cores (where spawn()'s wait for the exec grows).
 * Writes bench/results/spawner-handover.json (or `BENCH_HANDOVER_OUT`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Readable } from 'node:stream';
import { ChildSpawner } from '../src/actors/child-spawner.js';
import { silentLogger } from '../src/core/ports.js';
import { ratio, summarize } from './acp-stats.js';
import { loadAverages, resultHeader, sleep } from './daemon-support.js';

const OUT = process.env.BENCH_HANDOVER_OUT ?? 'bench/results/spawner-handover.json';
const SPAWNS = Number(process.env.BENCH_SPAWNS ?? 30);
const HOGS = Number(process.env.BENCH_SPAWN_HOGS ?? 0);
// A child that says hello on fd 3 at once and exits when its stdin ends.
const ARGS = ['-e', 'require("fs").writeSync(3, "hi"); process.stdin.resume().on("end", () => process.exit(0))'];

const firstBytes = (stream: Readable) => new Promise((r) => stream.once('data', r));

async function main(): Promise<void> {
  const loadAverageAtStart = loadAverages();
  const hogs: ChildProcess[] = Array.from({ length: HOGS }, () => spawn(process.execPath, ['-e', 'for (;;);'], { stdio: 'ignore' }));
  const spawner = new ChildSpawner(silentLogger);
  const s = { spawnerCall: [] as number[], spawnerHanded: [] as number[], spawnerHello: [] as number[], directCall: [] as number[], directHello: [] as number[] };
  try {
    // One untimed of each: the spawner process's own start, and code paths warmed.
    (await spawner.spawn({ command: process.execPath, args: ARGS, env: process.env })).stdin.end();
    spawn(process.execPath, ARGS, { stdio: ['pipe', 'pipe', 'pipe', 'pipe'] }).stdin!.end();
    for (let i = 0; i < SPAWNS; i++) {
      let t0 = performance.now();
      const spawning = spawner.spawn({ command: process.execPath, args: ARGS, env: process.env });
      s.spawnerCall.push(performance.now() - t0);
      const child = await spawning;
      s.spawnerHanded.push(performance.now() - t0);
      await firstBytes(child.control);
      s.spawnerHello.push(performance.now() - t0);
      child.stdin.end();

      t0 = performance.now();
      const direct = spawn(process.execPath, ARGS, { stdio: ['pipe', 'pipe', 'pipe', 'pipe'] });
      s.directCall.push(performance.now() - t0);
      await firstBytes(direct.stdio[3] as Readable);
      s.directHello.push(performance.now() - t0);
      direct.stdin!.end();
      await sleep(30);
    }
  } finally {
    hogs.forEach((h) => h.kill('SIGKILL'));
    await spawner.close();
  }
  const sum = Object.fromEntries(Object.entries(s).map(([k, v]) => [k, summarize(v, 3)])) as Record<keyof typeof s, ReturnType<typeof summarize>>;
  const result = {
    ...resultHeader('spawner-handover', loadAverageAtStart),
    spawns: SPAWNS,
    hogs: HOGS,
    ms: sum,
    ratios: {
      callHoldsLoopVsDirect: ratio(sum.spawnerCall, sum.directCall),
      helloVsDirect: ratio(sum.spawnerHello, sum.directHello),
    },
    note: 'spawnerCall: the synchronous part of ChildSpawner.spawn() (the only time it holds the loop); directCall: child_process.spawn() (fork, then a wait for the exec); *Hello: until the child\'s first bytes on fd 3',
  };
  mkdirSync(dirname(OUT), { recursive: true });
  writeFileSync(OUT, JSON.stringify(result, null, 2) + '\n');
  console.log(JSON.stringify({ ms: Object.fromEntries(Object.entries(sum).map(([k, v]) => [k, { p50: v.p50, p99: v.p99, max: v.max }])), ratios: result.ratios }));
}

await main();
