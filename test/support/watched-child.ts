// A stand-in for a supervised child, for the heartbeat watchdog's tests with real processes: it
// says hello and beats every WATCHED_HEARTBEAT_MS on fd 3, as `troupe acp --supervised` does, and
// does what stdin asks, one JSON-RPC notification a line:
//   work {cpuMs}  runs a loop without yielding until it has used cpuMs of CPU time, then says
//                 `worked` on stdout with how long that took on the clock and in CPU time;
//   spin          runs a loop that never ends.
import { Socket } from 'node:net';
import { createInterface } from 'node:readline';
import { encodeControlFrame } from '../../src/wire/control-frame.codec.js';

const control = new Socket({ fd: 3, readable: false, writable: true });
control.on('error', () => undefined);
control.write(encodeControlFrame({ t: 'hello', pid: process.pid, version: 'test' }));
const beat = () => control.write(encodeControlFrame({ t: 'hb', at: Date.now(), rss: 0, heapUsed: 0, events: 0 }));
setInterval(beat, Number(process.env.WATCHED_HEARTBEAT_MS ?? 100));

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

// Its stdin ended: the supervisor stops it.
const input = createInterface({ input: process.stdin }).on('close', () => process.exit(0));
input.on('line', (line) => {
  const m = JSON.parse(line) as { method: string; params?: { cpuMs?: number } };
  if (m.method === 'spin') for (;;);
  if (m.method === 'work') {
    const start = { at: Date.now(), cpu: cpuMs() };
    while (cpuMs() - start.cpu < m.params!.cpuMs!);
    const params = { wallMs: Date.now() - start.at, cpuMs: cpuMs() - start.cpu };
    process.stdout.write(JSON.stringify({ jsonrpc: '2.0', method: 'worked', params }) + '\n');
  }
});
