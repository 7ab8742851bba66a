/**
 * Session log recheck benchmark: what reading again the logs changed since the index was written
 * (src/store/session-log-recheck.ts, a daemon's start) costs with 10,000 stored sessions: the longest
 * stretch it holds the event loop, and its wall time, when no log changed (a stat each) and when
 * every log did (a home copied or restored: every log read again), next to the longest gap of an
 * idle loop in the same run (the machine's noise). Run:
 * `npm run build && node dist/bench/index-recheck-bench.js`. Writes bench/results/index-recheck-bench.json.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../src/core/ports.js';
import { newSessionId } from '../src/core/ids.js';
import { nextTurn } from '../src/core/next-turn.js';
import { FileEventLog } from '../src/store/file-event-log.store.js';
import { sessionIndexPath, sessionLogPath } from '../src/store/paths.js';
import { SessionIndex } from '../src/store/session-index.store.js';
import { recheckChangedLogs } from '../src/store/session-log-recheck.js';

const SESSIONS = Number(process.env.BENCH_RECHECK_SESSIONS ?? 10_000);

/**
 * Runs `work` while a chain of `setImmediate`s measures the longest gap between turns of the loop,
 * in wall time (`heldMs`, which a loaded machine inflates: it takes the CPU away) and in the
 * process's CPU time (`heldCpuMs`, what the loop really spent at once; the thread pool's stats
 * count in it too).
 */
async function held<T>(work: () => Promise<T>): Promise<{ heldMs: number; heldCpuMs: number; wallMs: number; result: T }> {
  let longest = 0;
  let longestCpu = 0;
  let last = performance.now();
  let lastCpu = process.cpuUsage();
  let running = true;
  const tick = () => {
    const now = performance.now();
    const cpu = process.cpuUsage(lastCpu);
    longest = Math.max(longest, now - last);
    longestCpu = Math.max(longestCpu, (cpu.user + cpu.system) / 1000);
    last = now;
    lastCpu = process.cpuUsage();
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  const t0 = performance.now();
  const result = await work();
  const wallMs = performance.now() - t0;
  running = false;
  tick();
  const round = (ms: number) => Math.round(ms * 100) / 100;
  return { heldMs: round(longest), heldCpuMs: round(longestCpu), wallMs: Math.round(wallMs), result };
}

/** `n` sessions of a short turn each (9 events), their logs in /dev/shm (no fsync costs), copied to `dir`. */
async function seed(dir: string, n: number): Promise<string[]> {
  const scratch = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'troupe-recheck-seed-'));
  const ids: string[] = [];
  try {
    const one = async () => {
      const id = newSessionId();
      ids.push(id);
      const log = await FileEventLog.forSession(scratch, id, { create: true, durability: { sync: 'never' } });
      log.append({ type: 'session_created', sessionId: id, cwd: '/home/someone/project', additionalDirectories: [], model: 'scripted/demo', mode: 'default' });
      log.append({ type: 'session_configured', sessionId: id, title: 'fix the flaky test in the parser' });
      log.append({ type: 'turn_started', sessionId: id, turnId: 'turn_1' } as never);
      for (let i = 0; i < 5; i++) log.append({ type: 'agent_message_chunk', sessionId: id, turnId: 'turn_1', messageId: 'msg_1', text: `word ${i} ` });
      log.append({ type: 'turn_completed', sessionId: id, turnId: 'turn_1', stopReason: 'end_turn', steps: 1 });
      await log.close();
    };
    for (let i = 0; i < n; i += 64) await Promise.all(Array.from({ length: Math.min(64, n - i) }, one));
    cpSync(scratch, dir, { recursive: true });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return ids;
}

async function run(dir: string): Promise<{ heldMs: number; heldCpuMs: number; wallMs: number; looked: number; read: number; changed: number }> {
  const index = await SessionIndex.open(dir, { logger: silentLogger });
  // As a daemon does before it serves (the list's order made once, not by the recheck's first page).
  await index.prepareWrites();
  const r = await held(() => recheckChangedLogs(index, { isOpen: () => false, pause: nextTurn, logger: silentLogger }));
  await index.flush();
  return { heldMs: r.heldMs, heldCpuMs: r.heldCpuMs, wallMs: r.wallMs, ...r.result };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'troupe-recheck-bench-'));
  try {
    const ids = await seed(dir, SESSIONS);
    // The index made from the logs, then written after them all: nothing changed since.
    await (await SessionIndex.open(dir, { logger: silentLogger })).flush();
    const path = sessionIndexPath(dir);
    writeFileSync(path, readFileSync(path));
    // The machine's own noise, in the same run: the longest gap of an idle loop over 2 s.
    const idle = await held(() => new Promise((r) => setTimeout(r, 2000)));
    const unchanged = await run(dir);
    // Every log changed after the index (a restored home): each is read again.
    await new Promise((r) => setTimeout(r, 20));
    const now = new Date();
    for (const id of ids) utimesSync(sessionLogPath(dir, id), now, now);
    const allChanged = await run(dir);
    const result = { at: new Date().toISOString(), sessions: SESSIONS, cpus: cpus().length, loadavg: loadavg(), idle: { heldMs: idle.heldMs, heldCpuMs: idle.heldCpuMs, wallMs: idle.wallMs }, unchanged, allChanged };
    process.stdout.write(JSON.stringify(result, null, 1) + '\n');
    mkdirSync('bench/results', { recursive: true });
    writeFileSync('bench/results/index-recheck-bench.json', JSON.stringify(result, null, 1) + '\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
