/**
 * The stream idle watchdog and a busy process: a chunk that reached the socket within the limit,
 * while the process was kept from its loop past the limit, is read, not taken for a stall. Timers
 * run before the loop reads its sockets, so a verdict given in the timer saw the socket's data as
 * missing (a contract test over a slow but steady stream failed so on a loaded machine). The server
 * runs in a worker thread: it writes while the main thread is blocked.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { streamWithWatchdog, type VendorStreamCall } from '../../../src/core/model-stream.js';
import { ProviderError, type ProviderEvent } from '../../../src/core/provider.js';

/** An HTTP server in a worker: on a request it sends `a`, then `b` when told (and sets the flag), then ends when told. */
const SERVER = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const flag = new Int32Array(workerData.flag);
let res;
const server = http.createServer((_req, r) => { res = r; r.writeHead(200, { 'content-type': 'text/plain' }); r.write('a'); });
parentPort.on('message', (m) => {
  if (m === 'b') { res.write('b', () => { Atomics.store(flag, 0, 1); Atomics.notify(flag, 0); }); }
  if (m === 'end') { res.end(); server.close(); }
});
server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));
`;

/** The server in a worker, and a vendor call that streams its response body, a text delta per chunk. */
async function served(t: { after(fn: () => unknown): void }) {
  const flag = new SharedArrayBuffer(4);
  const worker = new Worker(SERVER, { eval: true, workerData: { flag } });
  t.after(() => worker.terminate());
  const port = await new Promise<number>((resolve) => worker.once('message', resolve));
  const call: VendorStreamCall<Uint8Array> = {
    open: async (signal) => (await fetch(`http://127.0.0.1:${port}/`, { signal })).body as unknown as AsyncIterable<Uint8Array>,
    async *map(chunks) {
      for await (const c of chunks) yield { type: 'text_delta', text: Buffer.from(c).toString() };
    },
    classify: (err) => (err instanceof ProviderError ? err : new ProviderError('network', String(err))),
  };
  return { worker, written: new Int32Array(flag), call };
}

const policy = (idleMs: number) => ({ idleMs, setting: 'streamIdleTimeoutMs', maxRetries: 0 });
const textOf = (e: ProviderEvent) => (e as Extract<ProviderEvent, { type: 'text_delta' }>).text;

test('a chunk that arrived in time while the process was busy past the idle limit is read, not a stall', async (t) => {
  const { worker, written, call } = await served(t);
  const idleMs = 300;
  const seen: string[] = [];
  let err: unknown;
  try {
    for await (const e of streamWithWatchdog(call, policy(idleMs), new AbortController().signal)) {
      const text = textOf(e);
      seen.push(text);
      if (text === 'a') {
        // Right after the watchdog starts on the next chunk: the main thread is kept busy until the
        // server has written `b`, and then past the idle limit. In a check-phase callback, so that
        // the next loop turn starts with the limit passed (its timers, then its reads).
        setImmediate(() => {
          const from = Date.now();
          worker.postMessage('b');
          Atomics.wait(written, 0, 0, 10_000);
          while (Date.now() - from < idleMs * 2) {
            // busy, as a process the machine or its own work keeps from its loop
          }
        });
      }
      if (text === 'b') worker.postMessage('end');
    }
  } catch (e) {
    err = e;
  }
  assert.equal(Atomics.load(written, 0), 1, 'the server wrote b while the process was busy');
  assert.equal(err, undefined, `no stall: ${String(err)}`);
  assert.deepEqual(seen, ['a', 'b']);
});

test('a stream that sends nothing past the limit still stalls', async (t) => {
  const { call } = await served(t);
  const seen: string[] = [];
  await assert.rejects(
    (async () => {
      for await (const e of streamWithWatchdog(call, policy(300), new AbortController().signal)) seen.push(textOf(e));
    })(),
    (e: unknown) => e instanceof ProviderError && e.kind === 'network' && /stalled/.test(e.message),
  );
  assert.deepEqual(seen, ['a']);
});
