/**
 * The inspector's replay route while a session streams (docs/inspector.md): a page showing a
 * running session asks `GET /v1/sessions/:id/replay` about once a second. Until 2946fd0 every ask
 * read the whole log and replayed it; since, an ask that names the page's replay (`since`, `after`)
 * reads and folds only what the log gained. This bench times both on one long session, in the same
 * run: the whole ask (no cursor: what a page's first ask costs, and what every ask cost before) is
 * the baseline of the incremental one.
 *
 * One daemon and one session of BENCH_REPLAY_ITEMS (30000) streamed text items (about as many
 * events), then BENCH_REPLAY_ROUNDS (20) rounds: the session streams BENCH_REPLAY_GROWTH (50) more
 * items and ends its turn, then one incremental ask (the cursor of the previous incremental
 * answer; it reads the growth) and one whole ask. Each ask's wall time is taken with the daemon
 * otherwise idle; the daemon's CPU over each ask (every thread, from /proc schedstat) is
 * averaged over the rounds. Checked on the way: the incremental answers add up to the whole one.
 *
 * Run: `npm run build && node dist/bench/inspector-replay.js` (< 1 min). Writes
 * bench/results/inspector-replay.json.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadAverages, ratio, resultHeader, scriptEnv, startDaemon, summarize, threadCpuUs } from './daemon-support.js';
import { LeanHttpClient } from './daemon-lean.js';

const int = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const round = (x: number) => Math.round(x * 1000) / 1000;
const ITEMS = int('BENCH_REPLAY_ITEMS', 30_000);
const ROUNDS = int('BENCH_REPLAY_ROUNDS', 20);
const GROWTH = int('BENCH_REPLAY_GROWTH', 50);

interface Answer {
  replayId: string;
  after: number;
  lastSeq: number;
  transitions: { seq: number }[];
}

const loadAverageAtStart = loadAverages();
const home = mkdtempSync(join(tmpdir(), 'troupe-replay-bench-'));
const words = (n: number) => Array.from({ length: n }, (_, i) => ({ text: `w${i} ` }));
const d = await startDaemon({
  home,
  args: ['--pool', '1'],
  env: scriptEnv(home, { chunkDelayMs: 0, replies: [{ when: 'long', items: words(ITEMS) }, { when: 'grow', items: words(GROWTH) }] }),
});
const budget = setTimeout(() => {
  console.error('inspector-replay: over its 240 s budget');
  d.proc.kill('SIGKILL');
  process.exit(1);
}, 240_000);
try {
  const client = await LeanHttpClient.at(d.url, d.headers).init();
  const sessionId = await client.newSession(home);
  const prompt = (text: string) => client.request('session/prompt', { sessionId, prompt: [{ type: 'text', text }] });
  await prompt('long');
  const ask = async (cursor?: { replayId: string; after: number }) => {
    const query = cursor ? `?since=${encodeURIComponent(cursor.replayId)}&after=${cursor.after}` : '';
    const t0 = performance.now();
    const res = await fetch(`${d.url}/v1/sessions/${sessionId}/replay${query}`, { headers: d.headers });
    const body = (await res.json()) as Answer;
    if (res.status !== 200) throw new Error(`replay answered ${res.status}: ${JSON.stringify(body)}`);
    return { ms: performance.now() - t0, body };
  };

  const first = await ask();
  let cursor = { replayId: first.body.replayId, after: first.body.lastSeq };
  let incremental: Answer['transitions'] = first.body.transitions;
  const incrementalMs: number[] = [];
  const wholeMs: number[] = [];
  const cpuUs = { incremental: 0, whole: 0 };
  let events = 0;
  for (let round = 0; round < ROUNDS; round++) {
    await prompt('grow');
    let t = threadCpuUs(d.proc.pid!);
    const inc = await ask(cursor);
    cpuUs.incremental += threadCpuUs(d.proc.pid!) - t;
    incrementalMs.push(inc.ms);
    if (inc.body.replayId !== cursor.replayId || inc.body.after !== cursor.after) throw new Error('the incremental ask got a whole replay: its fold was not kept');
    incremental = incremental.concat(inc.body.transitions);
    cursor = { replayId: inc.body.replayId, after: inc.body.lastSeq };
    t = threadCpuUs(d.proc.pid!);
    const whole = await ask();
    cpuUs.whole += threadCpuUs(d.proc.pid!) - t;
    wholeMs.push(whole.ms);
    events = whole.body.lastSeq;
    if (JSON.stringify(whole.body.transitions) !== JSON.stringify(incremental)) throw new Error(`round ${round}: the incremental answers differ from the whole replay`);
  }
  client.close();

  const inc = summarize(incrementalMs);
  const whole = summarize(wholeMs);
  const result = {
    ...resultHeader('inspector-replay', loadAverageAtStart),
    counts: { items: ITEMS, rounds: ROUNDS, growth: GROWTH, eventsAtEnd: events },
    note: 'per round: the session streams `growth` items, then one incremental ask (since/after: reads and folds the growth) and one whole ask (no cursor: reads and replays the whole log, as every ask did before 2946fd0); wall ms per ask with the daemon otherwise idle; daemon CPU (every thread, /proc/<pid>/task/*/schedstat) over each ask, averaged over the rounds',
    incrementalAskMs: inc,
    wholeAskMs: whole,
    daemonCpuMsPerAsk: { incremental: round(cpuUs.incremental / ROUNDS / 1000), whole: round(cpuUs.whole / ROUNDS / 1000) },
    incrementalOverWhole: { p50: ratio(inc.p50, whole.p50), cpu: ratio(cpuUs.incremental, cpuUs.whole) },
    wallSeconds: Math.round(performance.now() / 1000),
  };
  const text = JSON.stringify(result, null, 2);
  writeFileSync('bench/results/inspector-replay.json', text + '\n');
  console.log(text);
} finally {
  clearTimeout(budget);
  await d.stop();
  rmSync(home, { recursive: true, force: true });
}
