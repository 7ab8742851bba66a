/**
 * How long `GET /v1/sessions` holds the daemon's loop with many sessions stored (a scratch
 * measurement, not part of the recorded bench): seeds BENCH_STORED sessions, then lists them
 * BENCH_LISTS times and reads the daemon's own longest stall over the window (/metrics).
 * Run: npm run build && node dist/bench/daemon-list-probe.js
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { seedStored, loopMetrics } from './daemon-scale.js';
import { startDaemon, scriptEnv, summarize } from './daemon-support.js';

const stored = Number(process.env.BENCH_STORED ?? 10_000);
const lists = Number(process.env.BENCH_LISTS ?? 10);
const home = mkdtempSync(join(tmpdir(), 'troupe-dlist-'));
const d = await startDaemon({ home: (await seedStored(home, stored, home, 'scripted/replay'), home), env: scriptEnv(home, { replies: [] }) });
try {
  const ms: number[] = [];
  await loopMetrics(d);
  for (let i = 0; i < lists; i++) {
    const t = performance.now();
    const body = await (await fetch(d.url + '/v1/sessions', { headers: d.headers })).json() as { sessions: unknown[] };
    ms.push(performance.now() - t);
    if (body.sessions.length !== stored) throw new Error(`listed ${body.sessions.length}`);
  }
  process.stdout.write(JSON.stringify({ stored, lists, routeMs: summarize(ms, 1), inDaemon: await loopMetrics(d) }) + '\n');
} finally {
  await d.stop();
  rmSync(home, { recursive: true, force: true });
}
