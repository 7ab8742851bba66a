/**
 * Session index write benchmark: how long one write of an index holding 10,000 sessions holds the
 * event loop (the longest stretch between two turns of it while the write runs), and how long the
 * write takes, for the changes a daemon makes (a new session, a changed one, the first write after
 * it opened the index). Baseline, in the same run: the plain way, `JSON.stringify` of the whole
 * index written with the same atomic write. Run: `npm run build && node dist/bench/index-write-bench.js`.
 * Writes bench/results/index-write-bench.json. Bounded to well under a minute.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { newSessionId } from '../src/core/ids.js';
import { writeFileAtomic } from '../src/store/atomic-write.js';
import { sessionIndexPath } from '../src/store/paths.js';
import { SessionIndex } from '../src/store/session-index.store.js';
import type { SessionEntry } from '../src/store/session-summary.js';
import { summarize } from './acp-stats.js';

const SESSIONS = Number(process.env.BENCH_INDEX_SESSIONS ?? 10_000);
const WRITES = Number(process.env.BENCH_INDEX_WRITES ?? 20);
const OPENS = Number(process.env.BENCH_INDEX_OPENS ?? 5);

/**
 * Runs `work` while a chain of `setImmediate`s measures the gaps between turns of the loop: the
 * longest is how long the work held it at once. Returns that and the work's wall time (ms).
 */
async function held(work: () => Promise<unknown>): Promise<{ heldMs: number; wallMs: number }> {
  let longest = 0;
  let last = performance.now();
  let running = true;
  const tick = () => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  const t0 = performance.now();
  await work();
  const wallMs = performance.now() - t0;
  running = false;
  tick();
  return { heldMs: longest, wallMs };
}

function entry(createdAt: number): SessionEntry {
  const id = newSessionId(createdAt);
  return { id, cwd: '/home/someone/projects/some-project', model: 'anthropic/claude-sonnet-4-5', mode: 'default', createdAt, updatedAt: createdAt, status: 'closed', lastSeq: 120, title: 'fix the flaky test in the parser' };
}

/** An index file of `n` sessions, written the plain way (what the store reads back). */
function seed(dir: string, n: number): SessionEntry[] {
  mkdirSync(dir, { recursive: true });
  const t = Date.now() - n * 1000;
  const entries = Array.from({ length: n }, (_, i) => entry(t + i * 1000)).sort((a, b) => (a.id < b.id ? -1 : 1));
  writeFileSync(sessionIndexPath(dir), JSON.stringify({ version: 1, sessions: entries }, null, 1) + '\n');
  return entries;
}

type Figures = { heldMs: ReturnType<typeof summarize>; wallMs: ReturnType<typeof summarize> };
const figures = (xs: { heldMs: number; wallMs: number }[]): Figures => ({ heldMs: summarize(xs.map((x) => x.heldMs), 2), wallMs: summarize(xs.map((x) => x.wallMs), 2) });

async function troupeWrites(dir: string): Promise<Record<string, Figures>> {
  seed(dir, SESSIONS);
  const index = await SessionIndex.open(dir);
  const first = [await held(() => index.adopt(newEntryInput()))];
  const added: { heldMs: number; wallMs: number }[] = [];
  const changed: { heldMs: number; wallMs: number }[] = [];
  const ids = index.list({ limit: SESSIONS }).sessions.map((s) => s.id);
  for (let i = 0; i < WRITES; i++) {
    added.push(await held(() => index.adopt(newEntryInput())));
    changed.push(await held(() => index.setStatus(ids[(i * 7919) % ids.length]!, i % 2 ? 'closed' : 'active')));
  }
  const prepared: { heldMs: number; wallMs: number }[] = [];
  for (let i = 0; i < OPENS; i++) {
    const again = await SessionIndex.open(dir);
    await again.prepareWrites();
    prepared.push(await held(() => again.adopt(newEntryInput())));
  }
  return { firstWriteAfterOpen: figures(first), firstWriteAfterPrepareWrites: figures(prepared), newSession: figures(added), changedSession: figures(changed) };
}

function newEntryInput() {
  const e = entry(Date.now());
  return { id: e.id, cwd: e.cwd, model: e.model, mode: e.mode, createdAt: e.createdAt };
}

/** The plain way: the whole index through JSON.stringify, then the same atomic write. */
async function plainWrites(dir: string): Promise<Record<string, Figures>> {
  const entries = new Map(seed(dir, SESSIONS).map((e) => [e.id, e]));
  const path = sessionIndexPath(dir);
  const write = () => writeFileAtomic(path, JSON.stringify({ version: 1, sessions: [...entries.values()].sort((a, b) => (a.id < b.id ? -1 : 1)) }, null, 1) + '\n');
  const added: { heldMs: number; wallMs: number }[] = [];
  const changed: { heldMs: number; wallMs: number }[] = [];
  const ids = [...entries.keys()];
  for (let i = 0; i < WRITES; i++) {
    const e = entry(Date.now());
    entries.set(e.id, e);
    added.push(await held(write));
    const id = ids[(i * 7919) % ids.length]!;
    entries.set(id, { ...entries.get(id)!, status: i % 2 ? 'closed' : 'active', updatedAt: Date.now() });
    changed.push(await held(write));
  }
  return { newSession: figures(added), changedSession: figures(changed) };
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'troupe-index-bench-'));
  const deadline = setTimeout(() => {
    console.error('index-write-bench: over its 120 s budget');
    process.exit(1);
  }, 120_000);
  try {
    const started = Date.now();
    const loadAverageAtStart = loadavg();
    // Alternated, twice each: the machine's state drifts less between the two than across one long run.
    const troupe = [await troupeWrites(join(root, 't1'))];
    const plain = [await plainWrites(join(root, 'p1'))];
    troupe.push(await troupeWrites(join(root, 't2')));
    plain.push(await plainWrites(join(root, 'p2')));
    const p50 = (runs: Record<string, Figures>[], series: string, what: 'heldMs' | 'wallMs') => Math.min(...runs.map((r) => r[series]![what].p50));
    const ratio = (series: string, what: 'heldMs' | 'wallMs') => Math.round((p50(troupe, series, what) / p50(plain, series, what)) * 1000) / 1000;
    const result = {
      bench: 'index-write-bench',
      date: new Date(started).toISOString(),
      srcCommit: process.env.BENCH_COMMIT ?? 'working tree',
      node: process.version,
      cpus: cpus().length,
      loadAverageAtStart,
      command: 'npm run build && node dist/bench/index-write-bench.js',
      counts: { sessions: SESSIONS, writes: WRITES, opens: OPENS },
      note: 'heldMs: the longest stretch between two turns of the event loop while one write ran (nothing else running); wallMs: the write, from the change to the file renamed and its directory synced. Baseline (plain): JSON.stringify of the whole index, same atomic write. Two runs of each, alternated; ratios of the better p50s',
      troupe,
      plain,
      ratioVsPlain: {
        newSessionHeldP50: ratio('newSession', 'heldMs'),
        changedSessionHeldP50: ratio('changedSession', 'heldMs'),
        newSessionWallP50: ratio('newSession', 'wallMs'),
        changedSessionWallP50: ratio('changedSession', 'wallMs'),
      },
      wallSeconds: Math.round((Date.now() - started) / 100) / 10,
    };
    mkdirSync('bench/results', { recursive: true });
    writeFileSync('bench/results/index-write-bench.json', JSON.stringify(result, null, 1) + '\n');
    console.log(JSON.stringify({ ratioVsPlain: result.ratioVsPlain, troupe: troupe.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, [v.heldMs.p50, v.heldMs.max]]))), plain: plain.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, [v.heldMs.p50, v.heldMs.max]]))) }, null, 1));
  } finally {
    clearTimeout(deadline);
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
