/**
 * Event-loop probe of the daemon benchmark, in its own process so that the load the bench puts on
 * its own loop does not show up as daemon latency: `GET <url>` every 5 ms (one request in flight at
 * most, keep-alive), recording [start epoch ms, latency ms, timer lateness ms]. The lateness of the
 * probe's own timer is recorded so that a stall of the probe is not blamed on the daemon. When its
 * stdin ends it prints `{"samples": [...]}` on stdout and exits.
 * Usage: node dist/bench/daemon-probe.js http://127.0.0.1:PORT/v1/health
 */
import { Agent, request } from 'node:http';

const url = new URL(process.argv[2]!);
const agent = new Agent({ keepAlive: true, maxSockets: 1 });
const samples: [number, number, number][] = [];
let due = performance.now();
let stopped = false;

function once(): Promise<void> {
  return new Promise((resolve) => {
    const req = request(url, { agent, method: 'GET' }, (res) => {
      res.resume();
      res.on('end', resolve);
    });
    req.on('error', () => resolve());
    req.end();
  });
}

async function loop(): Promise<void> {
  while (!stopped) {
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const start = performance.now();
    const late = Math.max(0, start - due);
    await once();
    samples.push([Date.now(), performance.now() - start, late]);
    due = Math.max(due + 5, performance.now());
  }
}

const running = loop();
process.stdin.resume();
process.stdin.on('end', () => {
  stopped = true;
  void running.then(() => {
    process.stdout.write(JSON.stringify({ samples }) + '\n', () => process.exit(0));
  });
});
