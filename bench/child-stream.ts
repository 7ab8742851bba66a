/**
 * Child streaming cost: CPU time a `troupe acp` process spends per streamed `session/update`, as a
 * plain stdio agent (what an editor runs) and as a supervised daemon child (`--supervised`, with the
 * fd 3 control channel read by this script the way a daemon reads it), in the same run, interleaved.
 * Run: `npm run build && node dist/bench/child-stream.js`
 * (about 30 s). Writes bench/results/child-stream.json; bench/README.md explains the series.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { execFileSync } from 'node:child_process';
import { benchBudget, RpcChild } from './acp-rpc.js';
import { threadCpuUs } from './daemon-support.js';
import { ControlFrameDecoder } from '../src/wire/control-frame.codec.js';

const int = (name: string, dflt: number) => Number(process.env[name] ?? dflt);
const COUNTS = {
  items: int('BENCH_CHILD_ITEMS', 4000),
  runs: int('BENCH_CHILD_RUNS', 7),
  warmups: int('BENCH_CHILD_WARMUPS', 3),
  firstItems: int('BENCH_CHILD_FIRST_ITEMS', 400),
  spawns: int('BENCH_CHILD_SPAWNS', 4),
};
const PROF_DIR = process.env.BENCH_CHILD_PROF;
// BENCH_TROUPE_BIN: another checkout's bin/troupe.js (e.g. the code before a change, for an A/B run).
const BIN = resolve(process.env.BENCH_TROUPE_BIN ?? 'bin/troupe.js');
const words = (n: number) => Array.from({ length: n }, (_, i) => ({ text: `w${i} ` }));
const SCRIPT = {
  chunkDelayMs: 0,
  replies: [
    { when: 'stream-long', items: words(COUNTS.items) },
    { when: 'stream-first', items: words(COUNTS.firstItems) },
  ],
};
type Mode = 'stdio' | 'supervised';

const live = benchBudget('child-stream', 240_000);

/** A child and, when supervised, what its control channel has reported per session. */
class Child {
  readonly rpc: RpcChild;
  /** Per session: the highest seq reported on fd 3, and the seq of the latest turn_completed. */
  private readonly reported = new Map<string, { seq: number; completed: number }>();
  private wake?: () => void;
  frames = 0;
  controlBytes = 0;

  constructor(
    readonly mode: Mode,
    env: NodeJS.ProcessEnv,
  ) {
    const nodeArgs = PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROF_DIR}`, `--cpu-prof-name=${mode}-${Date.now()}.cpuprofile`] : [];
    const args = [...nodeArgs, BIN, 'acp', ...(mode === 'supervised' ? ['--supervised'] : [])];
    this.rpc = new RpcChild(args, env, { controlPipe: mode === 'supervised' });
    live.add(this.rpc);
    if (mode === 'supervised') {
      const decoder = new ControlFrameDecoder();
      (this.rpc.proc.stdio[3] as Readable).on('data', (chunk: Buffer) => {
        this.controlBytes += chunk.length;
        for (const m of decoder.push(chunk)) {
          this.frames++;
          if (m.t !== 'events') continue;
          const r = this.reported.get(m.sessionId) ?? { seq: 0, completed: 0 };
          for (const e of m.events) {
            r.seq = Math.max(r.seq, e.seq);
            if (e.type === 'turn_completed') r.completed = e.seq;
          }
          this.reported.set(m.sessionId, r);
          this.wake?.();
        }
      });
    }
  }

  async init(): Promise<void> {
    await this.rpc.request('initialize', { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: 'child-stream', version: '1' } });
  }

  async newSession(cwd: string): Promise<string> {
    return (await this.rpc.request('session/new', { cwd, mcpServers: [] })).result.sessionId;
  }

  /**
   * One prompt, timed in child CPU from the request to the moment everything the child owes is out:
   * the response on stdout and, supervised, the control frame carrying the turn's last event.
   */
  async stream(sessionId: string, key: string): Promise<{ cpuUs: number; ms: number; updates: number }> {
    const before = threadCpuUs(this.rpc.pid);
    // Read before the request: the control frame may arrive before the response does.
    const done = this.reported.get(sessionId)?.completed ?? 0;
    const t0 = performance.now();
    const reply = await this.rpc.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: key }] });
    if (this.mode === 'supervised') {
      while (!this.turnReported(sessionId, done)) {
        await new Promise<void>((r) => (this.wake = r));
      }
    }
    const ms = performance.now() - t0;
    return { cpuUs: threadCpuUs(this.rpc.pid) - before, ms, updates: reply.notifications };
  }

  private turnReported(sessionId: string, before: number): boolean {
    return (this.reported.get(sessionId)?.completed ?? 0) > before;
  }

  close(): Promise<number | null> {
    live.delete(this.rpc);
    return this.rpc.close();
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)]! : NaN;
};
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;

async function main(): Promise<void> {
  const home = mkdtempSync(join(tmpdir(), 'troupe-child-stream-'));
  const cwd = mkdtempSync(join(tmpdir(), 'troupe-child-stream-ws-'));
  const scriptPath = join(home, 'script.json');
  writeFileSync(scriptPath, JSON.stringify(SCRIPT));
  const env = { ...process.env, TROUPE_HOME: home, HOME: home, TROUPE_SCRIPT: scriptPath, TROUPE_MODEL: 'scripted/replay', TROUPE_HEARTBEAT_MS: '1000' };
  delete (env as Record<string, unknown>).TROUPE_LOG;
  const loadAverageAtStart = loadavg();
  try {
    // Warm children: warm-up replies first (the JIT needs a few to settle), then runs interleaved
    // (the order flips every round).
    const warm = { stdio: new Child('stdio', env), supervised: new Child('supervised', env) };
    const runs: Record<Mode, { cpuUs: number; ms: number; updates: number }[]> = { stdio: [], supervised: [] };
    for (const c of Object.values(warm)) await c.init();
    for (let w = 0; w < COUNTS.warmups; w++) for (const c of Object.values(warm)) await c.stream(await c.newSession(cwd), 'stream-long');
    for (let r = 0; r < COUNTS.runs; r++) {
      const order: Mode[] = r % 2 ? ['supervised', 'stdio'] : ['stdio', 'supervised'];
      for (const mode of order) {
        const c = warm[mode];
        runs[mode].push(await c.stream(await c.newSession(cwd), 'stream-long'));
      }
    }
    const controlFramesPerReply = round(warm.supervised.frames / (COUNTS.runs + COUNTS.warmups), 0);
    const controlBytesPerUpdate = round(warm.supervised.controlBytes / ((COUNTS.runs + COUNTS.warmups) * COUNTS.items), 0);
    await Promise.all(Object.values(warm).map((c) => c.close()));

    // Fresh children: the first reply of a new process (cold code: the JIT has not seen this path
    // yet), as each child of the daemon bench plays it: 400 updates in its aggregate series, 4000 in
    // its streaming series (every session there is a new child).
    const fresh = async (key: string) => {
      const out: Record<Mode, { cpuUs: number; ms: number; updates: number }[]> = { stdio: [], supervised: [] };
      for (let s = 0; s < COUNTS.spawns; s++) {
        const order: Mode[] = s % 2 ? ['supervised', 'stdio'] : ['stdio', 'supervised'];
        for (const mode of order) {
          const c = new Child(mode, env);
          await c.init();
          const session = await c.newSession(cwd);
          await new Promise((r) => setTimeout(r, 150)); // let a supervised child finish loading its session machinery
          out[mode].push(await c.stream(session, key));
          await c.close();
        }
      }
      return out;
    };
    const first = await fresh('stream-first');
    const firstLong = await fresh('stream-long');

    const summary = (xs: { cpuUs: number; ms: number; updates: number }[]) => ({
      cpuUsPerUpdate: round(median(xs.map((x) => x.cpuUs / x.updates))),
      runsCpuUsPerUpdate: xs.map((x) => round(x.cpuUs / x.updates)),
      updatesPerSecond: round(median(xs.map((x) => (x.updates / x.ms) * 1000)), 0),
      updatesPerReply: xs[0]?.updates,
    });
    const warmSummary = { stdio: summary(runs.stdio), supervised: summary(runs.supervised) };
    const firstSummary = { stdio: summary(first.stdio), supervised: summary(first.supervised) };
    let srcCommit = 'unknown';
    try {
      srcCommit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    } catch {
      // not a git checkout (an exported tree): BENCH_COMMIT says which
    }
    const result = {
      bench: 'child-stream',
      // The code measured is the children's (BENCH_TROUPE_BIN's checkout when given): BENCH_COMMIT names it.
      srcCommit: process.env.BENCH_COMMIT ?? srcCommit,
      troupeBin: BIN,
      at: new Date().toISOString(),
      node: process.version,
      loadAverageAtStart,
      loadAverageAtEnd: loadavg(),
      counts: COUNTS,
      what: 'CPU µs of the troupe acp process (all threads, /proc/<pid>/task/*/schedstat) per session/update, from the prompt request until the response and, supervised, the control frame with turn_completed',
      warm: {
        ...warmSummary,
        supervisedOverStdio: round(warmSummary.supervised.cpuUsPerUpdate / warmSummary.stdio.cpuUsPerUpdate, 2),
        controlFramesPerReply,
        controlBytesPerUpdate,
      },
      firstReply: { ...firstSummary, supervisedOverStdio: round(firstSummary.supervised.cpuUsPerUpdate / firstSummary.stdio.cpuUsPerUpdate, 2) },
      firstLongReply: { stdio: summary(firstLong.stdio), supervised: summary(firstLong.supervised) },
    };
    writeFileSync(process.env.BENCH_CHILD_OUT ?? 'bench/results/child-stream.json', JSON.stringify(result, null, 2) + '\n');
    process.stdout.write(JSON.stringify(result, null, 2) + '\n');
  } finally {
    for (const c of live) c.kill();
    rmSync(home, { recursive: true, force: true });
    rmSync(cwd, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`child-stream failed: ${(err as Error).stack}\n`);
    for (const c of live) c.kill();
    process.exit(1);
  },
);
