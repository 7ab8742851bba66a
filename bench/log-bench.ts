/**
 * Event log benchmark: append throughput under each durability policy, and replay decode rate,
 * each against a JSON-lines baseline (same events, JSON.stringify per line, same fsync policy)
 * measured in the same run. Run: `npm run build && node dist/bench/log-bench.js`.
 * Writes bench/results/log-bench.json. Bounded to well under a minute.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { open, readFile, type FileHandle } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentEvent, AgentEventInput } from '../src/core/events.js';
import { FileEventLog } from '../src/store/file-event-log.store.js';
import type { SyncPolicy } from '../src/store/durability.js';
import { readLogFile } from '../src/store/log-file.reader.js';
import { encodeEventRecord, encodeHeaderRecord } from '../src/store/log-record.codec.js';

const SID = 'ses_bench';
const APPEND_EVENTS = Number(process.env.BENCH_APPEND_EVENTS ?? 300_000);
const ALWAYS_EVENTS = Number(process.env.BENCH_ALWAYS_EVENTS ?? 100_000);
const REPLAY_EVENTS = Number(process.env.BENCH_REPLAY_EVENTS ?? 500_000);
const SINGLE_RECORDS = Number(process.env.BENCH_SINGLE_RECORDS ?? 100_000);
const BURST = 100;
const RUNS = 3;
const GROUP_MS = 5;

/** A streaming-shaped workload: text chunks, a tool call now and then, a turn boundary every 1000. */
function input(i: number): AgentEventInput {
  const turnId = `turn_${Math.floor(i / 1000)}`;
  if (i % 1000 === 999) return { type: 'turn_completed', sessionId: SID, turnId, stopReason: 'end_turn', steps: 3 };
  if (i % 250 === 0) return { type: 'tool_call_updated', sessionId: SID, turnId, toolCallId: `call_${i}`, status: 'completed', output: `ok ${i}` };
  return { type: 'agent_message_chunk', sessionId: SID, turnId, messageId: `msg_${Math.floor(i / 1000)}`, text: `token ${i} and some more text ` };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const nextTick = (): Promise<void> => new Promise((r) => setImmediate(r));

const syncCounts: Record<string, number[]> = {};

async function appendLog(dir: string, policy: SyncPolicy, n: number, burst = BURST): Promise<number> {
  const path = join(dir, `append-${policy}-${Math.random().toString(36).slice(2)}.log`);
  const t0 = performance.now();
  const log = await FileEventLog.create(path, { sessionId: SID, durability: { sync: policy, groupCommitMs: GROUP_MS } });
  for (let i = 0; i < n; ) {
    for (const end = Math.min(n, i + burst); i < end; i++) log.append(input(i));
    await nextTick();
  }
  await log.close();
  const s = (performance.now() - t0) / 1000;
  (syncCounts[`${policy}/${burst}`] ??= []).push(log.stats().syncs);
  rmSync(path);
  return n / s;
}

/** The baseline: one JSON line per event, batched writes, and the same fsync policy. */
class JsonlWriter {
  private pending: string[] = [];
  private seq = 0;
  private end = 0;
  private timer: NodeJS.Timeout | undefined;
  private syncDue = false;
  private running: Promise<void> | undefined;
  private again = false;
  constructor(private readonly fh: FileHandle, private readonly policy: SyncPolicy) {}
  append(e: AgentEventInput): void {
    const event = { ...e, seq: ++this.seq, ts: Date.now() };
    this.pending.push(JSON.stringify(event));
    const barrier = this.policy === 'always' || (this.policy === 'group' && e.type === 'turn_completed');
    if (barrier) {
      this.syncDue = true;
      setImmediate(() => this.kick());
    } else this.timer ??= setTimeout(() => {
      this.timer = undefined;
      if (this.policy === 'group') this.syncDue = true;
      this.kick();
    }, GROUP_MS);
  }
  private kick(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.drain().finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        this.kick();
      }
    });
  }
  private async drain(): Promise<void> {
    while (this.pending.length > 0 || this.syncDue) {
      const sync = this.syncDue;
      this.syncDue = false;
      if (this.pending.length > 0) {
        const buf = Buffer.from(this.pending.join('\n') + '\n');
        this.pending = [];
        await this.fh.write(buf, 0, buf.length, this.end);
        this.end += buf.length;
      }
      if (sync) await this.fh.datasync();
    }
  }
  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.syncDue = true;
    this.kick();
    while (this.running) await this.running;
    await this.fh.close();
  }
}

async function appendJsonl(dir: string, policy: SyncPolicy, n: number, burst = BURST): Promise<number> {
  const path = join(dir, `append-${policy}-${Math.random().toString(36).slice(2)}.jsonl`);
  const t0 = performance.now();
  const w = new JsonlWriter(await open(path, 'wx'), policy);
  for (let i = 0; i < n; ) {
    for (const end = Math.min(n, i + burst); i < end; i++) w.append(input(i));
    await nextTick();
  }
  await w.close();
  const s = (performance.now() - t0) / 1000;
  rmSync(path);
  return n / s;
}

function stamped(n: number): AgentEvent[] {
  return Array.from({ length: n }, (_, i) => ({ ...input(i), seq: i + 1, ts: 1_764_000_000_000 + i }) as AgentEvent);
}

async function replayRate(path: string, expected: number): Promise<number> {
  const t0 = performance.now();
  const { events } = await readLogFile(path);
  const s = (performance.now() - t0) / 1000;
  if (events.length !== expected) throw new Error(`replay read ${events.length} events, expected ${expected}`);
  return expected / s;
}

async function replayJsonl(path: string, expected: number): Promise<number> {
  const t0 = performance.now();
  const text = await readFile(path, 'utf8');
  const events: unknown[] = [];
  let start = 0;
  for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
    events.push(JSON.parse(text.slice(start, nl)));
    start = nl + 1;
  }
  const s = (performance.now() - t0) / 1000;
  if (events.length !== expected) throw new Error(`jsonl replay read ${events.length}`);
  return expected / s;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'troupe-log-bench-'));
  const started = performance.now();
  const result: Record<string, unknown> = {
    bench: 'log-bench',
    date: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model,
    workload: `streaming mix (chunks, a tool update every 250, a turn boundary every 1000), appended in bursts of ${BURST} per event-loop turn; median of ${RUNS} runs`,
  };
  try {
    const append: Record<string, unknown> = {};
    for (const policy of ['group', 'always', 'never'] as SyncPolicy[]) {
      const n = policy === 'always' ? ALWAYS_EVENTS : APPEND_EVENTS;
      const log: number[] = [];
      const jsonl: number[] = [];
      for (let r = 0; r < RUNS; r++) {
        log.push(await appendLog(dir, policy, n));
        jsonl.push(await appendJsonl(dir, policy, n));
      }
      const l = median(log);
      const j = median(jsonl);
      append[policy] = {
        events: n,
        groupCommitMs: policy === 'always' ? undefined : GROUP_MS,
        logEventsPerSec: Math.round(l),
        jsonlEventsPerSec: Math.round(j),
        ratioVsJsonl: +(l / j).toFixed(2),
        logFdatasyncs: syncCounts[`${policy}/${BURST}`],
        runs: { log: log.map(Math.round), jsonl: jsonl.map(Math.round) },
      };
      console.error(`append ${policy}: log ${Math.round(l)}/s, jsonl ${Math.round(j)}/s`);
    }
    // Worst case for 'always': one event per event-loop turn, so every event waits for its own sync
    // unless the previous sync is still running.
    {
      const n = Number(process.env.BENCH_ALWAYS_SINGLE_EVENTS ?? 20000);
      const l = await appendLog(dir, 'always', n, 1);
      const j = await appendJsonl(dir, 'always', n, 1);
      append['always-one-event-per-turn'] = { events: n, logEventsPerSec: Math.round(l), jsonlEventsPerSec: Math.round(j), ratioVsJsonl: +(l / j).toFixed(2), logFdatasyncs: syncCounts['always/1'], runs: 1 };
      console.error(`append always, 1 per turn: log ${Math.round(l)}/s, jsonl ${Math.round(j)}/s`);
    }
    result.append = append;

    // Replay: a coalesced log as the writer produces it, and a worst case of one event per record.
    const events = stamped(REPLAY_EVENTS);
    const coalesced = join(dir, 'replay.log');
    const writerLog = await FileEventLog.create(coalesced, { sessionId: SID, durability: { sync: 'never', groupCommitMs: 1000 } });
    for (let i = 0; i < REPLAY_EVENTS; ) {
      for (const end = Math.min(REPLAY_EVENTS, i + 1000); i < end; i++) writerLog.append(input(i));
      await nextTick();
    }
    await writerLog.close();
    const single = join(dir, 'single.log');
    const parts = [encodeHeaderRecord({ troupeLog: 1, sessionId: SID, createdAt: 0, baseSeq: 0 })];
    for (let i = 0; i < SINGLE_RECORDS; i++) parts.push(encodeEventRecord([events[i]!]));
    writeFileSync(single, Buffer.concat(parts));
    const jsonl = join(dir, 'replay.jsonl');
    writeFileSync(jsonl, events.map((e) => JSON.stringify(e)).join('\n') + '\n');
    const jsonlSingle = join(dir, 'single.jsonl');
    writeFileSync(jsonlSingle, events.slice(0, SINGLE_RECORDS).map((e) => JSON.stringify(e)).join('\n') + '\n');
    const rc: number[] = [];
    const rs: number[] = [];
    const rj: number[] = [];
    const rjs: number[] = [];
    for (let r = 0; r < RUNS; r++) {
      rc.push(await replayRate(coalesced, REPLAY_EVENTS));
      rj.push(await replayJsonl(jsonl, REPLAY_EVENTS));
      rs.push(await replayRate(single, SINGLE_RECORDS));
      rjs.push(await replayJsonl(jsonlSingle, SINGLE_RECORDS));
    }
    const scan = (await readLogFile(coalesced)).scan;
    result.replay = {
      coalesced: {
        events: REPLAY_EVENTS,
        records: scan.records - 1,
        bytes: scan.fileBytes,
        jsonlBytes: readFileSync(jsonl).length,
        logEventsPerSec: Math.round(median(rc)),
        jsonlEventsPerSec: Math.round(median(rj)),
        ratioVsJsonl: +(median(rc) / median(rj)).toFixed(2),
      },
      oneEventPerRecord: {
        events: SINGLE_RECORDS,
        records: SINGLE_RECORDS,
        logEventsPerSec: Math.round(median(rs)),
        jsonlEventsPerSec: Math.round(median(rjs)),
        ratioVsJsonl: +(median(rs) / median(rjs)).toFixed(2),
      },
    };
    console.error(`replay coalesced: log ${Math.round(median(rc))}/s, jsonl ${Math.round(median(rj))}/s; one per record: log ${Math.round(median(rs))}/s, jsonl ${Math.round(median(rjs))}/s`);
    result.targets = {
      replayAtLeast1MPerSec: median(rc) >= 1_000_000,
      groupAppendAtLeast300kPerSec: ((append.group as { logEventsPerSec: number }).logEventsPerSec) >= 300_000,
    };
    result.durationSec = +((performance.now() - started) / 1000).toFixed(1);
    mkdirSync('bench/results', { recursive: true });
    writeFileSync('bench/results/log-bench.json', JSON.stringify(result, null, 2) + '\n');
    process.stdout.write(JSON.stringify(result, null, 2) + '\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
