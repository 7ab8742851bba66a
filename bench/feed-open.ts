/**
 * Opening a session's event feed (`GET /v1/sessions/:id/events`) on a long log, and what it costs
 * every other client of the daemon meanwhile. Opening a feed scans the session's log (frames and
 * CRCs, spec/event-log.md §1) to learn its seqs and where its records start; this bench writes one
 * log of BENCH_FEED_LOG_MB (512) MiB of real events with the real log writer (`FileEventLog`: text
 * chunks, and a tool output of 32 KiB every fourth event), starts a daemon on it, and while an
 * outside probe asks `GET /v1/health` every 5 ms (bench/daemon-probe.ts, its own process):
 *
 * - `open`: BENCH_FEED_OPENS (5) times, a feed opened at the log's last seq (nothing to replay: the
 *   open alone), timed to its response headers, then closed (its last watcher gone, the next open
 *   scans again), and the probe's latencies and the daemon's own longest stall (/metrics,
 *   src/daemon/loop-watch.ts) over each open;
 * - `replay`: one feed from seq 0, read to its last event (every event of the log through SSE);
 * - `delete`: the session deleted (DELETE /v1/sessions/:id: its log scanned, then replaced by its tombstone).
 *
 * Baselines, in the same run: `scanMs`, the scan of the same file in this process
 * (`scanLogFile`, synchronous: the CPU floor of an open, the page cache warm as for the daemon);
 * and the probe's latencies with the daemon idle. `ratios` divide by them: a daemon that scans on
 * its loop shows a stall about as long as the scan (ratio ~1); one that does not, a small fraction.
 *
 * Run: `npm run build && node dist/bench/feed-open.js` (~1–2 min, 2× the log's size on /tmp
 * briefly). Writes bench/results/feed-open.json (BENCH_FEED_OUT names another file).
 */
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentEvent, AgentEventInput } from '../src/core/events.js';
import { newSessionId } from '../src/core/ids.js';
import { FileEventLog, SessionIndex, scanLogFile, sessionLogPath, sessionsDir } from '../src/store/index.js';
import { DEFAULT_MODE_ID } from '../src/tools/index.js';
import { loadAverages, ratio, resultHeader, scriptEnv, startDaemon, summarize } from './daemon-support.js';
import { loopMetrics, startProbe } from './daemon-scale.js';

const int = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const LOG_MB = int('BENCH_FEED_LOG_MB', 512);
const OPENS = int('BENCH_FEED_OPENS', 5);
const OUT = process.env.BENCH_FEED_OUT ?? 'bench/results/feed-open.json';
const SID = newSessionId();
const OUTPUT = 'x'.repeat(32 * 1024);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The probe's answers that were pending at some time in [from, to] (epoch ms): one asked before an
 * open began and held up by it counts (daemon-scale's `loopFigures` takes only those asked inside).
 */
function overlapping(samples: [number, number, number][], from: number, to: number) {
  const lat = samples.filter(([at, ms]) => at >= from && at - ms <= to).map(([, ms]) => ms);
  return { samples: lat.length, latencyMs: summarize(lat.length ? lat : [NaN], 2), over50ms: lat.filter((x) => x > 50).length };
}

/** A streaming turn's shape: text chunks, a large tool output every fourth event, a turn end every 1000. */
function input(i: number): AgentEventInput {
  const turnId = `turn_${Math.floor(i / 1000)}`;
  if (i % 1000 === 999) return { type: 'turn_completed', sessionId: SID, turnId, stopReason: 'end_turn', steps: 3 };
  if (i % 4 === 0) return { type: 'tool_call_updated', sessionId: SID, turnId, toolCallId: `call_${i}`, status: 'completed', output: `${i} ${OUTPUT}` };
  return { type: 'agent_message_chunk', sessionId: SID, turnId, messageId: `msg_${Math.floor(i / 1000)}`, text: `token ${i} and some more text ` };
}

/** The session's log of about `mb` MiB, and its index entry, as `troupe acp` writes them. */
async function writeSession(home: string, mb: number): Promise<{ lastSeq: number; bytes: number; writeMs: number }> {
  const t0 = performance.now();
  const dir = sessionsDir(home);
  const index = await SessionIndex.open(dir);
  const log = await FileEventLog.forSession(dir, SID, { create: true, durability: { sync: 'never' }, retention: { maxEvents: 1000, maxBytes: 1 << 20 } });
  const created = log.append({ type: 'session_created', sessionId: SID, cwd: home, additionalDirectories: [], model: 'scripted/replay', mode: DEFAULT_MODE_ID });
  let last: AgentEvent = created;
  for (let i = 0; log.stats().writtenBytes < mb * 1024 * 1024; ) {
    for (const end = i + 256; i < end; i++) last = log.append(input(i));
    await new Promise((r) => setImmediate(r));
  }
  await log.whenDurable(last.seq);
  await log.close();
  await index.applyEvents([created, last]);
  await index.flush();
  return { lastSeq: last.seq, bytes: statSync(sessionLogPath(dir, SID)).size, writeMs: Math.round(performance.now() - t0) };
}

const loadAverageAtStart = loadAverages();
const home = mkdtempSync(join(tmpdir(), 'troupe-feed-open-'));
const procs: { kill(signal: NodeJS.Signals): void }[] = [];
const budget = setTimeout(() => {
  console.error('feed-open: over its 600 s budget');
  for (const p of procs) p.kill('SIGKILL');
  process.exit(1);
}, 600_000);
try {
  const log = await writeSession(home, LOG_MB);
  const path = sessionLogPath(sessionsDir(home), SID);
  const scanMs: number[] = [];
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    const scan = scanLogFile(path);
    scanMs.push(performance.now() - t);
    if (scan.lastSeq !== log.lastSeq) throw new Error(`the scan found ${scan.lastSeq}, not ${log.lastSeq}`);
  }
  const d = await startDaemon({ home, args: ['--pool', '0'], env: scriptEnv(home, { replies: [] }) });
  procs.push(d.proc);
  try {
    const feed = (after: number) => fetch(`${d.url}/v1/sessions/${SID}/events?after=${after}`, { headers: d.headers });
    const probe = startProbe(`${d.url}/v1/health`, (p) => procs.push(p));
    await sleep(1000);
    const idle = { from: Date.now(), to: 0 };
    await sleep(1500);
    idle.to = Date.now();
    const opens: { ms: number; from: number; to: number; daemon: Record<string, number> }[] = [];
    for (let i = 0; i < OPENS; i++) {
      await loopMetrics(d); // a new window of the daemon's own figures
      const from = Date.now();
      const t = performance.now();
      const res = await feed(log.lastSeq);
      const ms = performance.now() - t;
      if (res.status !== 200) throw new Error(`the feed answered ${res.status}: ${await res.text()}`);
      await res.body!.cancel();
      const to = Date.now();
      await sleep(300); // the feed closes with its last watcher: the next open scans again
      opens.push({ ms, from, to, daemon: await loopMetrics(d) });
    }
    await loopMetrics(d);
    const replay = { from: Date.now(), to: 0, ms: 0, events: 0 };
    const t = performance.now();
    const res = await feed(0);
    let text = '';
    let lastId = 0;
    for await (const chunk of res.body!.pipeThrough(new TextDecoderStream())) {
      text += chunk;
      const cut = text.lastIndexOf('\n\n');
      if (cut < 0) continue;
      for (const m of text.slice(0, cut).matchAll(/^id: (\d+)$/gm)) {
        const id = Number(m[1]);
        if (id !== lastId + 1) throw new Error(`the replay skipped from ${lastId} to ${id}`);
        lastId = id;
        replay.events++;
      }
      text = text.slice(cut + 2);
      if (lastId === log.lastSeq) break;
    }
    replay.ms = Math.round(performance.now() - t);
    replay.to = Date.now();
    const replayDaemon = await loopMetrics(d);
    // Deleting the session: its log is scanned for its last seq before its tombstone replaces it.
    const del = { from: Date.now(), to: 0, ms: 0 };
    const td = performance.now();
    const gone = await fetch(`${d.url}/v1/sessions/${SID}`, { method: 'DELETE', headers: d.headers });
    if (gone.status !== 200) throw new Error(`the delete answered ${gone.status}: ${await gone.text()}`);
    await gone.body!.cancel();
    del.ms = Math.round(performance.now() - td);
    del.to = Date.now();
    const deleteDaemon = await loopMetrics(d);
    const samples = await probe.stop();

    const scan = summarize(scanMs, 1);
    const idleProbe = overlapping(samples, idle.from, idle.to);
    const openWindows = opens.map((o) => overlapping(samples, o.from, o.to));
    const probeMaxDuringOpens = Math.max(...openWindows.map((w) => w.latencyMs.max));
    const openMs = summarize(opens.map((o) => o.ms), 1);
    const blockedMax = Math.max(...opens.map((o) => o.daemon.blockedMaxMs!));
    const replayProbe = overlapping(samples, replay.from, replay.to);
    const deleteProbe = overlapping(samples, del.from, del.to);
    const result = {
      ...resultHeader('feed-open', loadAverageAtStart),
      log: { mib: Math.round(log.bytes / 2 ** 20), events: log.lastSeq, writeMs: log.writeMs },
      note: 'open: a feed opened at the last seq (no replay), to its response headers, then closed; probe: GET /v1/health every 5 ms from another process; daemon: its own loop figures over the window (/metrics); baselines: the synchronous scan of the same log in the bench process, and the probe with the daemon idle',
      baseline: { scanMs: scan, idleProbe },
      open: { ms: openMs, probe: openWindows, probeMaxMs: probeMaxDuringOpens, daemon: opens.map((o) => o.daemon) },
      replay: { ms: replay.ms, events: replay.events, mibPerS: Math.round((log.bytes / 2 ** 20 / (replay.ms / 1000)) * 10) / 10, probe: replayProbe, daemon: replayDaemon },
      delete: { ms: del.ms, probe: deleteProbe, daemon: deleteDaemon },
      ratios: {
        openProbeMaxOverScan: ratio(probeMaxDuringOpens, scan.p50),
        openDaemonBlockedMaxOverScan: ratio(blockedMax, scan.p50),
        openOverScan: ratio(openMs.p50, scan.p50),
        openProbeMaxOverIdleProbeMax: ratio(probeMaxDuringOpens, idleProbe.latencyMs.max),
        replayProbeMaxOverIdleProbeMax: ratio(replayProbe.latencyMs.max, idleProbe.latencyMs.max),
        deleteProbeMaxOverScan: ratio(deleteProbe.latencyMs.max, scan.p50),
        deleteDaemonBlockedMaxOverScan: ratio(deleteDaemon.blockedMaxMs!, scan.p50),
      },
      wallSeconds: Math.round(performance.now() / 1000),
    };
    const out = JSON.stringify(result, null, 2);
    writeFileSync(OUT, out + '\n');
    console.log(out);
  } finally {
    await d.stop();
  }
} finally {
  clearTimeout(budget);
  rmSync(home, { recursive: true, force: true });
}
