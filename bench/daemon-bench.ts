/**
 * Daemon benchmark (issue 6): `troupe serve` against the SDK's reference `AcpServer` hosting the
 * same troupe agent in-process (bench/daemon-reference.ts), a `troupe acp` child over stdio and a
 * bare process, all measured in the same run, on the offline scripted/replay model, 127.0.0.1 only.
 * Run: `npm run build && node dist/bench/daemon-bench.js` (about 2–3 minutes on 2 cores).
 * Writes bench/results/daemon-bench.json; bench/README.md explains every series and its target.
 */
import { type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { childPids, CountingClient, refillWaiter, spawnerPids, gitDescribe, scriptEnv, spawnAcp, startDaemon, startReferenceServer, startRelayFloor, summarize, StdioChild, stopProcess, type Served } from './daemon-support.js';
import { LeanHttpClient, LeanStdioClient, LeanWsClient, type BenchClient } from './daemon-lean.js';
import { childStartSeries, type ChildStart } from './daemon-child-start.js';
import { daemonSessionNew, IDLE_BEFORE_SAMPLE_MS, nodeSpawnFloor, ReferenceSessionNews, SESSION_NEW_WARMUP, roundTrips, rttSeries, stdioFirstSessionNew, stdioRtt } from './daemon-latency.js';
import { streamRuns } from './daemon-stream.js';
import { seedStored } from './daemon-scale.js';
import { scaleSeries } from './daemon-scale-run.js';
import { judge } from './daemon-targets.js';
import { machineCosts } from './machine-probe.js';

const int = (name: string, dflt: number) => Number(process.env[name] ?? dflt);
export const COUNTS = {
  warmNews: int('BENCH_WARM_NEWS', 16),
  coldNews: int('BENCH_COLD_NEWS', 10),
  startChildren: int('BENCH_START_CHILDREN', 10),
  stdioFirstNews: int('BENCH_STDIO_FIRST_NEWS', 6),
  refNews: int('BENCH_REF_NEWS', 100),
  rtt: int('BENCH_RTT', 500),
  prompts: int('BENCH_PROMPTS', 100),
  warmup: int('BENCH_WARMUP', 50),
  steadyWarmup: int('BENCH_STEADY_WARMUP', 16_000),
  steadyRtt: int('BENCH_STEADY_RTT', 3000),
  streamItems: int('BENCH_STREAM_ITEMS', 4000),
  streamRuns: int('BENCH_STREAM_RUNS', 3),
  // Long replies before the warmChild series' timed runs: a child's CPU per update stops falling
  // after about six (bench/README.md, "Why a daemon child seemed to stream at 3× the CPU").
  warmChildWarmups: int('BENCH_WARM_CHILD_WARMUPS', 6),
  sessions: int('BENCH_SESSIONS', 100),
  aggItems: int('BENCH_AGG_ITEMS', 400),
  stored: int('BENCH_STORED', 10_000),
};
const MODEL = 'scripted/replay';
const words = (n: number) => Array.from({ length: n }, (_, i) => ({ text: `w${i} ` }));
const TINY = { when: 'tiny', items: [{ text: 'ok' }] };
const LONG = { when: 'stream-long', items: words(COUNTS.streamItems) };
const AGG = { when: 'stream-agg', items: words(COUNTS.aggItems) };
// A child reads and validates its whole script on first use (its first `initialize`): each daemon
// gets only the replies it plays, so that a big script does not weigh on session/new.
const SCRIPTS = { tiny: { replies: [TINY] }, stream: { replies: [LONG, TINY] }, agg: { replies: [AGG, TINY] }, all: { replies: [LONG, AGG, TINY] } };

const spawned = new Set<ChildProcess>();
const track = (p: ChildProcess) => (spawned.add(p), p.once('exit', () => spawned.delete(p)));
const killAll = () => {
  for (const p of spawned) p.kill('SIGKILL');
};
process.once('exit', killAll);
const watchdog = setTimeout(() => {
  process.stderr.write('daemon-bench: over the time budget (300 s); killing everything\n');
  killAll();
  process.exit(1);
}, int('BENCH_BUDGET_MS', 300_000));
watchdog.unref();

const log = (s: string) => process.stderr.write(`[daemon-bench ${new Date().toISOString().slice(11, 19)}] ${s}\n`);
const dirs: string[] = [];
const tmp = (p: string) => {
  const dir = mkdtempSync(join(tmpdir(), p));
  dirs.push(dir);
  return dir;
};

/** The reference server in its own process (enough ready hosts for the scale series), tracked for the watchdog. */
async function startReference(home: string): Promise<{ url: string; proc: ChildProcess }> {
  const ref = await startReferenceServer(home, scriptEnv(home, SCRIPTS.all), COUNTS.sessions + 16);
  track(ref.proc);
  return ref;
}

const daemons: Served[] = [];
async function daemon(home: string, args: string[], script: unknown, nodeArgs: string[] = []): Promise<Served> {
  const d = await startDaemon({ home, args, env: scriptEnv(home, script), nodeArgs });
  track(d.proc);
  daemons.push(d);
  return d;
}

async function main(): Promise<void> {
  const started = Date.now();
  const cwd = tmp('troupe-dbench-ws-');
  const result: Record<string, any> = {
    bench: 'daemon-bench',
    date: new Date().toISOString(),
    // What was measured: dist/ is built from the working tree, so say whether src/ differed from HEAD.
    srcCommit: gitDescribe(),
    node: process.version,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model,
    memTotalMiB: Math.round(totalmem() / 2 ** 20),
    // What a page fault, a syscall and an fdatasync cost here: they explain most of the cold start and
    // of a warm session/new (bench/README.md, "The machine").
    machine: machineCosts(),
    loadAverageAtStart: loadavg().map((x) => Math.round(x * 100) / 100),
    command: 'npm run build && node dist/bench/daemon-bench.js',
    model: `${MODEL} (TROUPE_SCRIPT, chunkDelayMs 0): keyed replies 'stream-long' (${COUNTS.streamItems} text items), 'stream-agg' (${COUNTS.aggItems}), 'tiny' (1)`,
    counts: COUNTS,
  };

  log('reference server (SDK AcpServer + troupe agent in-process)');
  const ref = await startReference(tmp('troupe-dbench-ref-'));
  const floor = await nodeSpawnFloor(5);

  log('warm pool: session/new (interleaved with the reference\'s), round trips');
  const warm = await daemon(tmp('troupe-dbench-warm-'), ['--pool', '2'], SCRIPTS.tiny);
  // Judged through the lean HTTP client, as the round trip, streaming and aggregate are; the SDK
  // client's series follows, reported beside it (sessionNew.sdkClient).
  const refNews = await ReferenceSessionNews.open(ref.url, cwd, 'lean');
  await refNews.run(SESSION_NEW_WARMUP);
  // For context: the reference's session/news one right after another, as this bench took them
  // until 2026-11-30 (the machine never idles in between).
  const refBackToBack = summarize(await refNews.run(COUNTS.refNews));
  // The judged series: a few reference samples before each daemon sample, every sample of both
  // after the same idle spell (IDLE_BEFORE_SAMPLE_MS): the target is a ratio, and this machine's
  // speed moves from minute to minute.
  const interleaved = async (client: 'lean' | 'sdk', freezeRefill: boolean, news: ReferenceSessionNews) => {
    const refSamples: number[] = [];
    const refPerSample = Math.ceil(COUNTS.refNews / (2 * COUNTS.warmNews));
    const runs = await daemonSessionNew(warm, 2, COUNTS.warmNews, cwd, {
      client,
      freezeRefill,
      warmup: SESSION_NEW_WARMUP,
      between: async () => void refSamples.push(...(await news.run(refPerSample, IDLE_BEFORE_SAMPLE_MS))),
    });
    return { runs, ref: summarize(refSamples) };
  };
  const judged = await interleaved('lean', true, refNews);
  refNews.close();
  const sdkRefNews = await ReferenceSessionNews.open(ref.url, cwd, 'sdk');
  await sdkRefNews.run(SESSION_NEW_WARMUP);
  const sdk = await interleaved('sdk', false, sdkRefNews);
  sdkRefNews.close();
  const warmRuns = judged.runs;
  const refNew = judged.ref;
  const warmNew = warmRuns.all;
  const rttCounts = { n: COUNTS.rtt, warmup: COUNTS.warmup, prompts: COUNTS.prompts };
  const http = await CountingClient.http(warm.url, warm.headers).init();
  const ws = await CountingClient.ws(warm.url, warm.headers).init();
  const httpSession = await http.newSession(cwd);
  const daemonHttp = await rttSeries(http.agent, httpSession, rttCounts);
  const wsSession = await ws.newSession(cwd);
  const daemonWs = await rttSeries(ws.agent, wsSession, rttCounts);
  const relayOnlyUs = await roundTrips(http.agent, '_troupe/session_state', { sessionId: 'ses_not_a_session' }, COUNTS.rtt, COUNTS.warmup);
  http.close();
  ws.close();
  // The same requests from the lean clients (bench/daemon-lean.ts): the relay without the SDK client's cost.
  const leanHttp = await LeanHttpClient.at(warm.url, warm.headers).init();
  const leanWs = await new LeanWsClient(warm.url, warm.headers).init();
  const leanDaemonHttp = await rttSeries(leanHttp, await leanHttp.newSession(cwd), rttCounts);
  const leanDaemonWs = await rttSeries(leanWs, await leanWs.newSession(cwd), rttCounts);
  const leanRelayOnlyUs = await roundTrips(leanHttp, '_troupe/session_state', { sessionId: 'ses_not_a_session' }, COUNTS.rtt, COUNTS.warmup);
  const leanRelayOnlyWsUs = await roundTrips(leanWs, '_troupe/session_state', { sessionId: 'ses_not_a_session' }, COUNTS.rtt, COUNTS.warmup);
  // In service: the same request on one session until V8 has optimized its path in the client, the
  // daemon and the session's child (bench/README.md, "Fresh and in service"), for the daemon, the
  // floor and stdio alike.
  const steadyDaemonHttp = await roundTrips(leanHttp, '_troupe/session_state', { sessionId: await leanHttp.newSession(cwd) }, COUNTS.steadyRtt, COUNTS.steadyWarmup);
  leanHttp.close();
  leanWs.close();
  await warm.stop();
  // The floor, right after: the least relay in front of the least agent on the same SDK, through the
  // same lean client (bench/relay-floor.ts), i.e. what this machine allows the round trip to be.
  const relayFloor = await startRelayFloor();
  track(relayFloor.proc);
  const leanFloor = await LeanHttpClient.at(relayFloor.url).init();
  const floorSession = await leanFloor.newSession(cwd);
  const leanRelayFloorUs = await roundTrips(leanFloor, '_troupe/session_state', { sessionId: floorSession }, COUNTS.rtt, COUNTS.warmup);
  const steadyFloor = await roundTrips(leanFloor, '_troupe/session_state', { sessionId: floorSession }, COUNTS.steadyRtt, COUNTS.steadyWarmup);
  leanFloor.close();
  await stopProcess(relayFloor.proc);

  log('streaming through the daemon');
  // `before` runs right before each session/new (a daemon's pool replaces the child the session takes).
  const fresh = (c: BenchClient, before: () => void = () => undefined) => async () => {
    before();
    return { client: c, sessionId: await c.newSession(cwd) };
  };
  // One session for the warm-up and every timed run: its process is warm (JIT) after the warm-up,
  // on the daemon (one child per session) as over stdio.
  const sticky = (c: BenchClient, before?: () => void) => {
    let s: Promise<{ client: BenchClient; sessionId: string }> | undefined;
    return () => (s ??= fresh(c, before)());
  };
  const streamer = await daemon(tmp('troupe-dbench-stream-'), ['--pool', '2'], SCRIPTS.stream);
  const sHttp = await CountingClient.http(streamer.url, streamer.headers).init();
  const sWs = await CountingClient.ws(streamer.url, streamer.headers).init();
  // A daemon refills its pool after each session/new: let that child start and finish booting first.
  const refill = refillWaiter(streamer.proc.pid!);
  const settle = () => refill.settle();
  const daemonProcs = { server: streamer.proc.pid!, children: () => childPids(streamer.proc.pid!), spawner: () => spawnerPids(streamer.proc.pid!) };
  const streamHttp = await streamRuns(fresh(sHttp, refill.expect), 'stream-long', COUNTS.streamItems, COUNTS.streamRuns, daemonProcs, settle);
  const streamWs = await streamRuns(fresh(sWs, refill.expect), 'stream-long', COUNTS.streamItems, COUNTS.streamRuns, daemonProcs, settle);
  sHttp.close();
  sWs.close();
  const lHttp = await LeanHttpClient.at(streamer.url, streamer.headers).init();
  const lWs = await new LeanWsClient(streamer.url, streamer.headers).init();
  const leanStreamHttp = await streamRuns(fresh(lHttp, refill.expect), 'stream-long', COUNTS.streamItems, COUNTS.streamRuns, daemonProcs, settle);
  const leanStreamWs = await streamRuns(fresh(lWs, refill.expect), 'stream-long', COUNTS.streamItems, COUNTS.streamRuns, daemonProcs, settle);
  const warmChildHttp = await streamRuns(sticky(lHttp, refill.expect), 'stream-long', COUNTS.streamItems, COUNTS.streamRuns, daemonProcs, settle, COUNTS.warmChildWarmups);
  const warmChildWs = await streamRuns(sticky(lWs, refill.expect), 'stream-long', COUNTS.streamItems, COUNTS.streamRuns, daemonProcs, settle, COUNTS.warmChildWarmups);
  lHttp.close();
  lWs.close();
  await streamer.stop();

  log('stdio: a troupe acp child without the daemon');
  const stdioHome = tmp('troupe-dbench-stdio-');
  const child = StdioChild.start({ TROUPE_HOME: stdioHome, HOME: stdioHome, ...scriptEnv(stdioHome, SCRIPTS.stream) });
  track(child.proc);
  const stdio = await stdioRtt(child, cwd, rttCounts);
  const streamStdio = await streamRuns(fresh(child.client), 'stream-long', COUNTS.streamItems, COUNTS.streamRuns, { children: () => [child.proc.pid!] });
  await child.close();
  const leanChild = spawnAcp({ TROUPE_HOME: stdioHome, HOME: stdioHome, ...scriptEnv(stdioHome, SCRIPTS.stream) });
  track(leanChild);
  const leanStdio = await new LeanStdioClient(leanChild).init();
  const leanStdioRtt = await rttSeries(leanStdio, await leanStdio.newSession(cwd), rttCounts);
  const leanStreamStdio = await streamRuns(fresh(leanStdio), 'stream-long', COUNTS.streamItems, COUNTS.streamRuns, { children: () => [leanChild.pid!] });
  // warmChild over stdio in a process of its own, with the daemon's session child's history: this
  // one has streamed the series above and answered the round trips, and its code is warmer for it.
  const warmStdioChild = spawnAcp({ TROUPE_HOME: stdioHome, HOME: stdioHome, ...scriptEnv(stdioHome, SCRIPTS.stream) });
  track(warmStdioChild);
  const warmStdio = await new LeanStdioClient(warmStdioChild).init();
  const warmChildStdio = await streamRuns(sticky(warmStdio), 'stream-long', COUNTS.streamItems, COUNTS.streamRuns, { children: () => [warmStdioChild.pid!] }, undefined, COUNTS.warmChildWarmups);
  warmStdio.close();
  await stopProcess(warmStdioChild);
  // After the streaming runs, which it would otherwise warm up.
  const steadyStdio = await roundTrips(leanStdio, '_troupe/session_state', { sessionId: await leanStdio.newSession(cwd) }, COUNTS.steadyRtt, COUNTS.steadyWarmup);
  leanStdio.close();
  await stopProcess(leanChild);
  const stdioFirstNew = await stdioFirstSessionNew(COUNTS.stdioFirstNews, { TROUPE_HOME: stdioHome, HOME: stdioHome, ...scriptEnv(stdioHome, SCRIPTS.tiny) }, cwd, (c) => track(c.proc));

  log('reference: round trips, streaming');
  const refClient = await CountingClient.http(ref.url).init();
  const refHttp = await rttSeries(refClient.agent, await refClient.newSession(cwd), rttCounts);
  const streamRef = await streamRuns(fresh(refClient), 'stream-long', COUNTS.streamItems, COUNTS.streamRuns, { server: ref.proc.pid!, children: () => [] });
  refClient.close();
  const leanRef = await LeanHttpClient.at(ref.url).init();
  const leanRefHttp = await rttSeries(leanRef, await leanRef.newSession(cwd), rttCounts);
  const leanStreamRef = await streamRuns(fresh(leanRef), 'stream-long', COUNTS.streamItems, COUNTS.streamRuns, { server: ref.proc.pid!, children: () => [] });
  leanRef.close();

  log('cold: session/new with --pool 0');
  const cold = await daemon(tmp('troupe-dbench-cold-'), ['--pool', '0'], SCRIPTS.tiny);
  const coldNew = (await daemonSessionNew(cold, 0, COUNTS.coldNews, cwd)).all;
  await cold.stop();
  log('child start: default (`bundle`: the agent script and its code cache) and --snapshot, cold session/new and idle memory');
  const childStart: Record<string, ChildStart> = {};
  for (const [name, args] of [['bundle', []], ['snapshot', ['--snapshot']]] as const) {
    const d = await daemon(tmp(`troupe-dbench-start-${name}-`), ['--pool', '0', ...args], SCRIPTS.tiny);
    childStart[name] = await childStartSeries(d, COUNTS.startChildren, cwd);
    await d.stop();
  }

  log(`scale: seeding ${COUNTS.stored} stored sessions`);
  const scaleHome = tmp('troupe-dbench-scale-');
  const seedMs = await seedStored(scaleHome, COUNTS.stored, cwd, MODEL);
  const scale = await scaleSeries({
    storedDaemon: () => daemon(scaleHome, ['--pool', '2'], SCRIPTS.all),
    // The inspector lets the bench collect the daemon's garbage before reading its memory.
    freshDaemon: () => daemon(tmp('troupe-dbench-fresh-'), ['--pool', '2'], SCRIPTS.all, ['--inspect=127.0.0.1:0']),
    ref,
    counts: COUNTS,
    cwd,
    track,
    log,
  });
  await stopProcess(ref.proc);

  Object.assign(result, {
    sessionNew: {
      note: `daemon series: one session/new at a time through the lean HTTP client (bench/daemon-lean.ts), after the pool is full and its children idle and then ${IDLE_BEFORE_SAMPLE_MS} ms of nothing; referenceInProcessMs: the reference's, interleaved with it (a few before each daemon sample), each after the same ${IDLE_BEFORE_SAMPLE_MS} ms; referenceBackToBackMs: the reference's one right after another (not judged: the machine never idles in between, which no warm-pool sample can have); daemonWarmPoolRefillFrozenMs: interleaved with the warm series, the child the pool spawns to refill itself is frozen (SIGSTOP) until the response is in (does its boot slow session/new?); stdioIdleChildInitAndNewMs: initialize + session/new sent to an idle, never-used \`troupe acp\` over stdio (what the relay asks of a pooled child)`,
      daemonWarmPoolMs: warmNew,
      daemonWarmPoolRefillFrozenMs: warmRuns.refillFrozen,
      daemonColdMs: coldNew,
      childStart: { note: 'daemons with --pool 0, children started the default way (key `bundle`: bin/troupe.js, the agent script with its code cache) and from the startup snapshot (--snapshot): cold session/new one at a time, then the idle children\'s memory 2 s and 12 s later (bench/daemon-child-start.ts)', ...childStart },
      stdioIdleChildInitAndNewMs: stdioFirstNew,
      referenceInProcessMs: refNew,
      referenceBackToBackMs: refBackToBack,
      sdkClient: {
        note: 'the same warm series and its interleaved reference series through the SDK HTTP client (not judged: the client\'s own CPU, 1.5–2.5 ms per request after an idle spell, is in both)',
        daemonWarmPoolMs: sdk.runs.all,
        referenceInProcessMs: sdk.ref,
      },
      nodeSpawnToExitMs: floor,
    },
    roundTrip: {
      note: 'sequential requests through the SDK clients; sessionStateUs = `_troupe/session_state` (µs); relayOnlyUs = the same for an unknown session, answered by the relay without a child; tinyPromptMs = a prompt whose reply is one text item (ms)',
      daemonHttp,
      daemonWs,
      relayOnlyUs,
      stdioDirect: stdio,
      referenceHttp: refHttp,
      lean: {
        note: 'the same requests from the lean clients of bench/daemon-lean.ts (raw keep-alive HTTP POST + raw SSE reader; raw `ws`; NDJSON on stdio): what the server takes, without the SDK client\'s own ~0.5 ms per HTTP request. The relay round-trip target is judged on this series',
        daemonHttp: leanDaemonHttp,
        daemonWs: leanDaemonWs,
        relayOnlyUs: leanRelayOnlyUs,
        relayOnlyWsUs: leanRelayOnlyWsUs,
        relayFloorUs: leanRelayFloorUs,
        stdioDirect: leanStdioRtt,
        referenceHttp: leanRefHttp,
        steady: {
          note: `in service: \`_troupe/session_state\` on one session, ${COUNTS.steadyRtt} timed after ${COUNTS.steadyWarmup} untimed (V8 has optimized the path in the client, the server and the child by then; the series above have ${COUNTS.warmup} untimed on a fresh session). Daemon HTTP (a new session on the warm daemon), the relay floor (its session of relayFloorUs, continued), stdio (a new session on the lean stdio child)`,
          daemonHttpUs: steadyDaemonHttp,
          relayFloorUs: steadyFloor,
          stdioDirectUs: steadyStdio,
        },
      },
    },
    streaming: {
      daemonHttp: streamHttp,
      daemonWs: streamWs,
      stdioDirect: streamStdio,
      referenceHttp: streamRef,
      lean: {
        note: 'the same runs received by the lean clients (bench/daemon-lean.ts): every update counted, its seq checked to increase per session and SSE ids to be contiguous, updates not JSON-parsed; the streaming target is judged on this series',
        daemonHttp: leanStreamHttp,
        daemonWs: leanStreamWs,
        stdioDirect: leanStreamStdio,
        referenceHttp: leanStreamRef,
        warmChild: {
          note: 'lean clients, one session for `warmups` untimed long replies and all timed runs, through the daemon and over stdio alike (a stdio process of its own, with the same history as the daemon\'s session child): both JIT-warm, where in the series above each daemon run is a fresh child process and the stdio child a long-lived one; a diagnostic of how much of the gap to stdio is a cold child',
          daemonHttp: warmChildHttp,
          daemonWs: warmChildWs,
          stdioDirect: warmChildStdio,
        },
      },
    },
    scale: { storedSeedMs: seedMs, ...scale },
  });
  result.targets = judge(result);
  result.loadAverageAtEnd = loadavg().map((x) => Math.round(x * 100) / 100);
  result.wallSeconds = Math.round((Date.now() - started) / 1000);
  mkdirSync('bench/results', { recursive: true });
  writeFileSync('bench/results/daemon-bench.json', JSON.stringify(result, null, 2) + '\n');
  process.stdout.write(JSON.stringify({ targets: result.targets, wallSeconds: result.wallSeconds }, null, 2) + '\n');
}

try {
  await main();
  process.exitCode = 0;
} catch (err) {
  log(`failed: ${(err as Error).stack}`);
  for (const d of daemons) log(`daemon ${d.home} stderr tail:\n${d.stderr().split('\n').filter((l) => !l.includes('"hb"')).slice(-30).join('\n')}`);
  process.exitCode = 1;
} finally {
  killAll();
  clearTimeout(watchdog);
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
}
