/**
 * `troupe acp` benchmark: the real agent process on the offline scripted model, against baselines
 * measured in the same run — `node -e ""` (process floor) and a minimal SDK agent
 * (bench/acp-baseline.ts). Measures spawn → initialize, session/new, a one-line prompt, a tool
 * turn, PSS/RSS after a turn, and session/load of a ≥1000-event session in a fresh process; then
 * the import cost of each heavy module, to explain the start-up figures (bench/acp-imports.ts).
 * Run: `npm run build && node dist/bench/acp-bench.js` (the build makes the agent script and code cache `troupe acp` starts from); writes
 * bench/results/acp-bench.json. Counts can be lowered with BENCH_* variables (see COUNTS).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { readLogFile, sessionLogPath, sessionsDir } from '../src/store/index.js';
import { writeBaselineAgent } from './acp-baseline.js';
import { importCosts } from './acp-imports.js';
import { nodeSpawnToExitMs, RpcChild } from './acp-rpc.js';
import { ratio, summarize, targetCheck, type Summary } from './acp-stats.js';

const num = (name: string, dflt: number) => Number(process.env[name] ?? dflt);
const COUNTS = {
  spawns: num('BENCH_SPAWNS', 25),
  news: num('BENCH_NEWS', 200),
  prompts: num('BENCH_PROMPTS', 300),
  toolTurns: num('BENCH_TOOL_TURNS', 200),
  warmup: num('BENCH_WARMUP', 20),
  loads: num('BENCH_LOADS', 15),
  loadTurns: num('BENCH_LOAD_TURNS', 10),
  loadItems: num('BENCH_LOAD_ITEMS', 100),
  importRuns: num('BENCH_IMPORT_RUNS', 3),
};
type Mem = { pssKiB: number; rssKiB: number; ussKiB: number };
const HARD_LIMIT_MS = 150_000;
const BIN = resolve('bin/troupe.js');
const root = mkdtempSync(join(tmpdir(), 'troupe-acp-bench-'));
const live = new Set<RpcChild>();
const deadline = setTimeout(() => {
  process.stderr.write(`acp-bench: exceeded ${HARD_LIMIT_MS} ms; killing children\n`);
  for (const c of live) c.kill();
  process.exit(1);
}, HARD_LIMIT_MS);

// One script serves every phase: keyed replies never run out; the tool turns use plain replies in order.
const fill = Array.from({ length: COUNTS.loadItems }, (_, i) => ({ text: `chunk ${i} of a long streamed answer. ` }));
const toolReplies = Array.from({ length: COUNTS.toolTurns + COUNTS.warmup }, () => [[{ tool_call: { name: 'read_file', input: { path: 'a.txt' } } }], [{ text: 'done' }]]).flat();
const scriptPath = join(root, 'script.json');
writeFileSync(scriptPath, JSON.stringify({ chunkDelayMs: 0, replies: [{ when: 'ping', items: [{ text: 'pong' }] }, { when: 'fill', items: fill }, ...toolReplies] }));
const workspace = join(root, 'ws');
mkdirSync(workspace);
writeFileSync(join(workspace, 'a.txt'), 'hello from the bench\nsecond line\n');
const baselinePath = writeBaselineAgent(root);

// The V8 flags `troupe acp` sets for itself (bin/troupe.js) unless TROUPE_ACP_V8_FLAGS says otherwise:
// run the bench with TROUPE_ACP_V8_FLAGS= (empty) to measure the agent on V8's defaults.
const V8_FLAGS = process.env.TROUPE_ACP_V8_FLAGS;
function troupeEnv(home: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '',
    HOME: home,
    TROUPE_HOME: home,
    TROUPE_MODEL: 'scripted/replay',
    TROUPE_SCRIPT: scriptPath,
    TROUPE_DEMO_DELAY_MS: '0',
    ...(V8_FLAGS !== undefined ? { TROUPE_ACP_V8_FLAGS: V8_FLAGS } : {}),
  };
}
function start(kind: 'troupe' | 'baseline', home: string, extraEnv: NodeJS.ProcessEnv = {}): RpcChild {
  const args = kind === 'troupe' ? [BIN, 'acp'] : [baselinePath];
  const c = new RpcChild(args, { ...troupeEnv(home), ...extraEnv });
  live.add(c);
  c.proc.once('exit', () => live.delete(c));
  return c;
}
const init = (c: RpcChild) => c.request('initialize', { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: 'acp-bench', version: '1' } });
const newSession = (c: RpcChild) => c.request('session/new', { cwd: workspace, mcpServers: [] });
const prompt = (c: RpcChild, sessionId: string, text: string) => c.request('session/prompt', { sessionId, prompt: [{ type: 'text', text }] });

/** The commit measured: BENCH_COMMIT (set it when running from an exported tree), else git's HEAD. */
function commit(): string | null {
  if (process.env.BENCH_COMMIT) return process.env.BENCH_COMMIT;
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

function check(cond: unknown, what: string): void {
  if (!cond) throw new Error(`acp-bench: ${what}`);
}

/** Phase 1: cold starts, interleaved so that machine noise hits every series alike. */
async function spawnPhase() {
  const home = join(root, 'home-spawn');
  const s = { nodeEmpty: [] as number[], baselineInit: [] as number[], troupeInit: [] as number[], troupeFirstNew: [] as number[], troupeFirstPrompt: [] as number[], troupeExit: [] as number[] };
  const mem = { troupePss: [] as number[], troupeRss: [] as number[], troupeUss: [] as number[], baselinePss: [] as number[], baselineRss: [] as number[], baselineUss: [] as number[] };
  for (let i = 0; i < COUNTS.spawns; i++) {
    s.nodeEmpty.push(await nodeSpawnToExitMs());

    const b = start('baseline', home);
    s.baselineInit.push((await init(b)).at - b.spawnedAt);
    const bs = await newSession(b);
    await prompt(b, bs.result.sessionId, 'ping');
    const bm = b.memory();
    mem.baselinePss.push(bm.pssKiB);
    mem.baselineRss.push(bm.rssKiB);
    mem.baselineUss.push(bm.ussKiB);
    await b.close();

    const t = start('troupe', home);
    s.troupeInit.push((await init(t)).at - t.spawnedAt);
    const ts = await newSession(t);
    s.troupeFirstNew.push(ts.ms);
    const tp = await prompt(t, ts.result.sessionId, 'ping');
    check(tp.result.stopReason === 'end_turn' && tp.notifications >= 2, `first prompt: ${JSON.stringify(tp)}`);
    s.troupeFirstPrompt.push(tp.ms);
    const tm = t.memory();
    mem.troupePss.push(tm.pssKiB);
    mem.troupeRss.push(tm.rssKiB);
    mem.troupeUss.push(tm.ussKiB);
    const c0 = performance.now();
    check((await t.close()) === 0, `troupe acp exited non-zero; stderr: ${t.stderr}`);
    s.troupeExit.push(performance.now() - c0);
  }
  return { s, mem };
}

/** Phase 2: steady state in one warm process of each kind. */
async function steadyPhase(kind: 'troupe' | 'baseline') {
  const c = start(kind, join(root, `home-steady-${kind}`));
  await init(c);
  const news: number[] = [];
  for (let i = 0; i < COUNTS.news + COUNTS.warmup; i++) {
    const r = await newSession(c);
    if (i >= COUNTS.warmup) news.push(r.ms);
  }
  const sessionId = (await newSession(c)).result.sessionId as string;
  const prompts: number[] = [];
  for (let i = 0; i < COUNTS.prompts + COUNTS.warmup; i++) {
    const r = await prompt(c, sessionId, 'ping');
    check(r.result.stopReason === 'end_turn' && r.notifications >= 1, `${kind} prompt ${i}: ${JSON.stringify(r)}`);
    if (i >= COUNTS.warmup) prompts.push(r.ms);
  }
  const out: Record<string, unknown> = { news, prompts, memAfterPrompts: c.memory() };
  if (kind === 'troupe') {
    const toolSession = (await newSession(c)).result.sessionId as string;
    await c.request('session/set_mode', { sessionId: toolSession, modeId: 'bypass' });
    const tools: number[] = [];
    const updates: number[] = [];
    for (let i = 0; i < COUNTS.toolTurns + COUNTS.warmup; i++) {
      const r = await prompt(c, toolSession, 'tool');
      // user message, tool_call, tool_call_update(s), the text, usage: a tool that ran shows ≥ 4 updates.
      check(r.result.stopReason === 'end_turn' && r.result._meta?.troupe?.steps === 2 && r.notifications >= 4, `tool turn ${i}: ${JSON.stringify(r)}`);
      if (i >= COUNTS.warmup) (tools.push(r.ms), updates.push(r.notifications));
    }
    Object.assign(out, { tools, toolUpdatesPerTurn: summarize(updates), memAfterTools: c.memory() });
  }
  check((await c.close()) === 0, `${kind} exited non-zero: ${c.stderr}`);
  return out as { news: number[]; prompts: number[]; tools?: number[]; toolUpdatesPerTurn?: Summary; memAfterPrompts: Mem; memAfterTools?: Mem };
}

/** Phase 3: a ≥1000-event session, built in one process and loaded in fresh ones. */
async function loadPhase() {
  const home = join(root, 'home-load');
  const builder = start('troupe', home);
  await init(builder);
  const sessionId = (await newSession(builder)).result.sessionId as string;
  for (let i = 0; i < COUNTS.loadTurns; i++) check((await prompt(builder, sessionId, 'fill')).result.stopReason === 'end_turn', 'fill turn');
  check((await builder.close()) === 0, `builder exited non-zero: ${builder.stderr}`);
  const events = (await readLogFile(sessionLogPath(sessionsDir(home), sessionId))).events.length;
  check(events >= 1000, `the load session has only ${events} events; raise BENCH_LOAD_TURNS or BENCH_LOAD_ITEMS`);

  const cold: number[] = [];
  const warm: number[] = [];
  let replayed = 0;
  for (let i = 0; i < COUNTS.loads; i++) {
    const c = start('troupe', home);
    await init(c);
    const r = await c.request('session/load', { sessionId, cwd: workspace, mcpServers: [] });
    replayed = r.notifications;
    check(replayed >= events * 0.9, `session/load replayed ${replayed} updates for ${events} events`);
    cold.push(r.ms);
    await c.request('session/close', { sessionId });
    warm.push((await c.request('session/load', { sessionId, cwd: workspace, mcpServers: [] })).ms);
    check((await c.close()) === 0, `load child exited non-zero: ${c.stderr}`);
  }
  // What a cold load defers: the session's engine opens after the response, so the first prompt
  // sent right behind it waits for it. Measured after the series above (each prompt adds a turn).
  const firstPrompt: number[] = [];
  for (let i = 0; i < COUNTS.loads; i++) {
    const c = start('troupe', home);
    await init(c);
    await c.request('session/load', { sessionId, cwd: workspace, mcpServers: [] });
    const r = await prompt(c, sessionId, 'ping');
    check(r.result.stopReason === 'end_turn', `prompt after load: ${JSON.stringify(r)}`);
    firstPrompt.push(r.ms);
    check((await c.close()) === 0, `load child exited non-zero: ${c.stderr}`);
  }
  // The baseline replays the same number of updates of the same text size, from memory: with the
  // SDK's ndJsonStream (one write per message), and with a coalescing writer (one write per loop turn).
  const base: number[] = [];
  const corked: number[] = [];
  for (let i = 0; i < COUNTS.loads * 2; i++) {
    const cork = i % 2 === 1;
    const c = start('baseline', home, { BASELINE_REPLAY_UPDATES: String(replayed), BASELINE_REPLAY_TEXT: fill[0]!.text, BASELINE_CORKED: cork ? '1' : '0' });
    await init(c);
    const r = await c.request('session/load', { sessionId: 'ses_x', cwd: workspace, mcpServers: [] });
    check(r.notifications === replayed, 'baseline replay count');
    (cork ? corked : base).push(r.ms);
    await c.close();
  }
  return { events, replayedUpdates: replayed, cold, warm, firstPrompt, base, corked };
}

const MiB = (kib: number) => Math.round((kib / 1024) * 100) / 100;
const mib = (m: Mem) => ({ pssMiB: MiB(m.pssKiB), rssMiB: MiB(m.rssKiB), ussMiB: MiB(m.ussKiB) });

async function main(): Promise<void> {
  const started = performance.now();
  // Other work on a 2-core machine moves every figure; the load average says how busy it was.
  const loadBefore = loadavg().map((x) => Math.round(x * 100) / 100);
  const { s, mem } = await spawnPhase();
  const tSteady = await steadyPhase('troupe');
  const bSteady = await steadyPhase('baseline');
  const load = await loadPhase();
  const imports = await importCosts(COUNTS.importRuns);

  const spawnInit = summarize(s.troupeInit);
  const baseInit = summarize(s.baselineInit);
  const floor = summarize(s.nodeEmpty);
  const news = summarize(tSteady.news, 3);
  const baseNews = summarize(bSteady.news, 3);
  const prompts = summarize(tSteady.prompts, 3);
  const basePrompts = summarize(bSteady.prompts, 3);
  const pss = summarize(mem.troupePss.map(MiB));
  const loadCold = summarize(load.cold);
  const loadBase = summarize(load.base);
  const fifth = Math.max(1, Math.floor(tSteady.prompts.length / 5));

  const result = {
    bench: 'acp-bench',
    date: new Date().toISOString(),
    commit: commit(),
    node: process.version,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model.trim(),
    loadAverage: { before: loadBefore, after: loadavg().map((x) => Math.round(x * 100) / 100) },
    command: 'npm run build && node dist/bench/acp-bench.js',
    model: 'scripted/replay (TROUPE_SCRIPT, chunkDelayMs 0), TROUPE_HOME in a temp dir, no client fs/terminal',
    v8Flags: V8_FLAGS === undefined ? 'bin/troupe.js defaults' : V8_FLAGS === '' ? "none (V8's defaults)" : V8_FLAGS,
    counts: COUNTS,
    unit: 'ms unless named MiB; p50/p90/p99 nearest-rank; steady-state series exclude the first `warmup` operations',
    spawn: {
      nodeEmptySpawnToExit: floor,
      baselineSpawnToInitialize: baseInit,
      troupeSpawnToInitialize: spawnInit,
      ratioVsNodeEmpty: ratio(spawnInit, floor),
      ratioVsBaseline: ratio(spawnInit, baseInit),
      troupeFirstSessionNew: summarize(s.troupeFirstNew),
      troupeFirstPrompt: summarize(s.troupeFirstPrompt),
      troupeStdinEndToExit: summarize(s.troupeExit),
    },
    sessionNew: { troupe: news, baseline: baseNews, ratioVsBaseline: ratio(news, baseNews) },
    oneLinePrompt: {
      troupe: prompts,
      baseline: basePrompts,
      ratioVsBaseline: ratio(prompts, basePrompts),
      troupeFirstFifth: summarize(tSteady.prompts.slice(0, fifth), 3),
      troupeLastFifth: summarize(tSteady.prompts.slice(-fifth), 3),
    },
    toolTurn: { troupe: summarize(tSteady.tools!, 3), ratioVsOneLinePrompt: ratio(summarize(tSteady.tools!, 3), prompts), updatesPerTurn: tSteady.toolUpdatesPerTurn },
    memoryAfterOneTurn: {
      troupePssMiB: pss,
      troupeRssMiB: summarize(mem.troupeRss.map(MiB)),
      troupeUssMiB: summarize(mem.troupeUss.map(MiB)),
      baselinePssMiB: summarize(mem.baselinePss.map(MiB)),
      baselineUssMiB: summarize(mem.baselineUss.map(MiB)),
      note: 'PSS shares the node binary and libraries among the node processes running at that moment (here the bench and the child, more on a busy machine), so it varies with the machine; USS (private pages) does not',
      baselineRssMiB: summarize(mem.baselineRss.map(MiB)),
      ratioPssVsBaseline: ratio(pss, summarize(mem.baselinePss.map(MiB))),
      troupeAfterSteadyPrompts: mib(tSteady.memAfterPrompts),
      troupeAfterSteadyTools: mib(tSteady.memAfterTools!),
    },
    sessionLoad: {
      events: load.events,
      replayedUpdates: load.replayedUpdates,
      troupeColdInFreshProcess: loadCold,
      troupeWarmReloadAfterClose: summarize(load.warm),
      troupeFirstPromptRightAfterColdLoad: summarize(load.firstPrompt),
      baselineSameReplayFromMemory: loadBase,
      baselineSameReplayCorkedWriter: summarize(load.corked),
      ratioVsBaseline: ratio(loadCold, loadBase),
    },
    startupBreakdown: {
      note: 'each module imported alone in a fresh node process (p50): import time and process RSS after it; figures overlap (shared dependencies)',
      imports,
    },
    targets: [
      targetCheck('spawn → initialize p50 ≤ 120 ms', 120, spawnInit.p50),
      targetCheck('session/new p50 ≤ 5 ms', 5, news.p50),
      targetCheck('one-line prompt round trip p50 ≤ 15 ms', 15, prompts.p50),
      targetCheck('PSS after a turn p50 ≤ 40 MiB', 40, pss.p50),
      targetCheck('session/load of ≥1000 events in a fresh process p50 ≤ 30 ms', 30, loadCold.p50),
    ],
    wallSeconds: 0,
  };
  result.wallSeconds = Math.round((performance.now() - started) / 100) / 10;
  mkdirSync('bench/results', { recursive: true });
  writeFileSync('bench/results/acp-bench.json', JSON.stringify(result, null, 2) + '\n');
  process.stdout.write(JSON.stringify({ targets: result.targets, spawn: result.spawn, wallSeconds: result.wallSeconds }, null, 2) + '\n');
}

main()
  .catch((err) => {
    process.stderr.write(`acp-bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exitCode = 1;
  })
  .finally(() => {
    for (const c of live) c.kill();
    clearTimeout(deadline);
    rmSync(root, { recursive: true, force: true });
  });
