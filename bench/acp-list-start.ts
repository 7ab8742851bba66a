/**
 * An editor's `troupe acp` (no daemon) starting on a home of stored sessions: spawn → `initialize`
 * answered, and the first `session/list`, sent as an editor sends it, right after that answer
 * (request → response, and spawn → response). Two homes of BENCH_LIST_SESSIONS (300) sessions: one
 * whose index was written after its logs (nothing to read again), one whose logs were all touched
 * after it (every log read again before the first list: the worst case, a copied home).
 *
 * A/B: BENCH_TROUPE_BIN_A (another checkout's bin/troupe.js, built) and this checkout's, spawned
 * alternately, BENCH_LIST_SPAWNS (12) each per home. Run:
 * `npm run build && BENCH_TROUPE_BIN_A=/path/to/base/bin/troupe.js node dist/bench/acp-list-start.js`.
 * Writes bench/results/acp-list-start.json (BENCH_LIST_OUT).
 */
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { newSessionId } from '../src/core/ids.js';
import { FileEventLog } from '../src/store/file-event-log.store.js';
import { sessionLogPath, sessionsDir } from '../src/store/paths.js';
import { SessionIndex } from '../src/store/session-index.store.js';
import { abCheckouts, benchBudget, inRoundOrder, RpcChild } from './acp-rpc.js';
import { summarize } from './acp-stats.js';

const SESSIONS = Number(process.env.BENCH_LIST_SESSIONS ?? 300);
const SPAWNS = Number(process.env.BENCH_LIST_SPAWNS ?? 12);
const OUT = process.env.BENCH_LIST_OUT ?? 'bench/results/acp-list-start.json';
const BINS = abCheckouts();
const live = benchBudget('acp-list-start', 300_000);

/** A home of `SESSIONS` sessions of one titled turn each, its index written after the logs. */
async function storedHome(): Promise<{ home: string; ids: string[] }> {
  const home = mkdtempSync(join(tmpdir(), 'troupe-list-start-'));
  const dir = sessionsDir(home);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const ids: string[] = [];
  for (let i = 0; i < SESSIONS; i++) {
    const id = newSessionId();
    const log = await FileEventLog.forSession(dir, id, { create: true });
    log.append({ type: 'session_created', sessionId: id, cwd: home, additionalDirectories: [], model: 'scripted/demo', mode: 'default' });
    log.append({ type: 'session_configured', sessionId: id, title: `session ${i}` });
    log.append({ type: 'turn_started', sessionId: id, turnId: 'turn_1', maxSteps: 10 });
    await log.whenDurable(log.append({ type: 'turn_completed', sessionId: id, turnId: 'turn_1', stopReason: 'end_turn', steps: 1 }).seq);
    await log.close();
    ids.push(id);
  }
  // Rebuilt from the logs and written now: after every log.
  await (await SessionIndex.open(dir)).flush();
  return { home, ids };
}

async function start(bin: string, home: string) {
  const rpc = new RpcChild([bin, 'acp'], { PATH: process.env.PATH ?? '', HOME: home, TROUPE_HOME: home });
  live.add(rpc);
  try {
    const init = await rpc.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
    const list = await rpc.request('session/list', {});
    if (list.result.sessions.length !== Math.min(50, SESSIONS)) throw new Error(`listed ${list.result.sessions.length}`);
    return { initializeMs: init.at - rpc.spawnedAt, listMs: list.ms, spawnToListMs: list.at - rpc.spawnedAt };
  } finally {
    await rpc.close();
    live.delete(rpc);
  }
}

async function main(): Promise<void> {
  const unchanged = await storedHome();
  const touched = await storedHome();
  // Every log changed after the index (ctime now): each is read again at every start.
  await new Promise((r) => setTimeout(r, 20));
  const now = new Date();
  for (const id of touched.ids) utimesSync(sessionLogPath(sessionsDir(touched.home), id), now, now);
  const homes = { unchanged: unchanged.home, touched: touched.home };
  const samples: Record<string, Record<string, { initializeMs: number[]; listMs: number[]; spawnToListMs: number[] }>> = {};
  const load = loadavg()[0];
  for (let round = 0; round < SPAWNS; round++) {
    for (const [homeName, home] of Object.entries(homes)) {
      for (const name of inRoundOrder(BINS, round)) {
        const r = await start(BINS[name]!, home);
        const s = ((samples[homeName] ??= {})[name] ??= { initializeMs: [], listMs: [], spawnToListMs: [] });
        s.initializeMs.push(r.initializeMs);
        s.listMs.push(r.listMs);
        s.spawnToListMs.push(r.spawnToListMs);
      }
    }
  }
  const results = Object.fromEntries(
    Object.entries(samples).map(([h, byBin]) => [h, Object.fromEntries(Object.entries(byBin).map(([b, s]) => [b, { initializeMs: summarize(s.initializeMs), listMs: summarize(s.listMs), spawnToListMs: summarize(s.spawnToListMs) }]))]),
  );
  const out = { at: new Date().toISOString(), sessions: SESSIONS, spawns: SPAWNS, loadAtStart: load, loadAtEnd: loadavg()[0], bins: BINS, results };
  mkdirSync(dirname(OUT), { recursive: true });
  writeFileSync(OUT, JSON.stringify(out, null, 2) + '\n');
  console.log(JSON.stringify(out, null, 2));
  for (const home of Object.values(homes)) rmSync(home, { recursive: true, force: true });
  process.exit(0);
}

void main();
