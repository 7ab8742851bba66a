// A stand-in for the daemon, for the spawner's tests: it starts its spawner with two children, says
// on stdout (one JSON line) its spawner's pid and theirs, and then waits to be killed. The first
// child exits when its stdin ends, as `troupe acp` does; the second ignores its stdin and SIGTERM.
import { ChildSpawner } from '../../src/actors/child-spawner.js';
import { silentLogger } from '../../src/core/ports.js';

// The grace (SIGTERM after it, SIGKILL after twice it) is what the test has to see the deaf child
// still alive once the other has exited: 300 ms was too little at a load of 15 on 2 cores.
const spawner = new ChildSpawner(silentLogger, process.env, 1_500);
const heedsStdin = `process.stdin.resume().on('end', () => process.exit(0)); setInterval(() => {}, 1000)`;
const deaf = `process.on('SIGTERM', () => {}); setInterval(() => {}, 1000)`;
const children = await Promise.all([heedsStdin, deaf].map((code) => spawner.spawn({ command: process.execPath, args: ['-e', code], env: process.env })));
process.stdout.write(JSON.stringify({ spawner: spawner.pid, children: children.map((c) => c.pid) }) + '\n');
setInterval(() => {}, 1000);
