/**
 * How a daemon child starts, both ways, in one run: the default way (`bundle`: bin/troupe.js, the
 * agent script with its code cache) and from the V8 startup snapshot (`--snapshot`). For each, a daemon with `--pool 0` gets BENCH_START_CHILDREN
 * sessions, one at a time (every `session/new` spawns: cold), and then the private and proportional
 * memory of those idle children is read twice: soon after (2 s) and once V8's memory reducer has had
 * its chance (12 s; it shrinks the heap of a process that has gone idle). The snapshot's cost is the
 * blob Node keeps in each child's private memory (spec/daemon.md §Child launch).
 */
import { readFileSync } from 'node:fs';
import { childPids, CountingClient, sleep, summarize, type Served, type Summary } from './daemon-support.js';

export interface ChildStart {
  coldSessionNewMs: Summary;
  /** Per idle child, MiB: `after2s` and `after12s` of idleness. */
  idlePssMiB: { after2s: Summary; after12s: Summary };
  idleUssMiB: { after2s: Summary; after12s: Summary };
}

function memoryMiB(pid: number): { pss: number; uss: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? NaN);
    return { pss: kb('Pss') / 1024, uss: (kb('Private_Clean') + kb('Private_Dirty')) / 1024 };
  } catch {
    return undefined; // the child exited meanwhile
  }
}

export async function childStartSeries(d: Served, n: number, cwd: string): Promise<ChildStart> {
  const client = await CountingClient.http(d.url, d.headers).init();
  try {
    const ms: number[] = [];
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      await client.newSession(cwd);
      ms.push(performance.now() - t0);
    }
    const read = () => {
      const m = childPids(d.proc.pid!).map(memoryMiB).filter((x) => x !== undefined);
      return { pss: summarize(m.map((x) => x.pss)), uss: summarize(m.map((x) => x.uss)) };
    };
    await sleep(2000);
    const soon = read();
    await sleep(10_000);
    const later = read();
    return { coldSessionNewMs: summarize(ms), idlePssMiB: { after2s: soon.pss, after12s: later.pss }, idleUssMiB: { after2s: soon.uss, after12s: later.uss } };
  } finally {
    client.close();
  }
}
