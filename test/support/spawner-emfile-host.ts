// For the spawner's tests: a daemon stand-in that runs out of descriptors between asking for a spawn
// and receiving the child's pipes (run it under `prlimit --nofile`). It says on stdout (one JSON
// line) how that spawn ended, whether the child it started is still alive, and whether a spawn
// succeeds once the descriptors are free again.
import { closeSync, openSync, readdirSync } from 'node:fs';
import { ChildSpawner } from '../../src/actors/child-spawner.js';
import { silentLogger } from '../../src/core/ports.js';
import { procStatFields } from '../../src/core/proc-stat.js';

const spawner = new ChildSpawner(silentLogger);
const request = { command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'], env: process.env };
const spawning = spawner.spawn(request);
// The spawn was checked and asked for; the pipes come later, when none is free.
const fillers: number[] = [];
try {
  for (;;) fillers.push(openSync('/dev/null', 'r'));
} catch {
  // full
}
const outcome = await spawning.then(
  (child) => ({ spawned: child.pid }),
  (err: { code?: string }) => ({ failed: err.code }),
);
fillers.forEach((fd) => closeSync(fd));
const next = await spawner.spawn(request);
const alive = (pid: number) => !['Z', undefined].includes(procStatFields(pid)?.[0]);
// The refused child is killed by the spawner; give the kill a moment to land.
await new Promise((r) => setTimeout(r, 500));
const others = readdirSync('/proc')
  .filter((n) => /^\d+$/.test(n))
  .map(Number)
  .filter((pid) => pid !== next.pid && Number(procStatFields(pid)?.[1]) === spawner.pid && alive(pid));
process.stdout.write(JSON.stringify({ outcome, nextAlive: alive(next.pid), otherChildren: others.length }) + '\n');
next.kill('SIGKILL');
await spawner.close();
