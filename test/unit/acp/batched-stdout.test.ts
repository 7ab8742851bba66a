// The agent's output writer: messages and ready-made replay lines leave in the order they were
// handed over, one write per turn of the loop (or per slice of a long burst), and a full pipe holds
// back what comes next.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { batchedStdout, FLUSH_AT_CHARS } from '../../../src/acp/batched-stdout.js';

function sink(highWaterMark = 1 << 20) {
  const writes: string[] = [];
  let release: (() => void) | undefined;
  const out = new Writable({
    highWaterMark,
    write(chunk, _enc, done) {
      writes.push(String(chunk));
      // Hold the first write when asked to, as a pipe nobody reads would.
      if (highWaterMark < 1 << 20 && !release) release = done;
      else done();
    },
  });
  return { out, writes, release: () => release?.() };
}

test('messages and replay lines leave in order, in one write per loop turn', async () => {
  const { out, writes } = sink();
  const w = batchedStdout(out);
  const writer = w.writable.getWriter();
  await writer.write({ jsonrpc: '2.0', method: 'a', params: {} });
  await w.writeLines('{"jsonrpc":"2.0","method":"b"}\n{"jsonrpc":"2.0","method":"c"}\n');
  await writer.write({ jsonrpc: '2.0', id: 1, result: {} });
  await new Promise((r) => setImmediate(r));
  assert.equal(writes.length, 1, 'one write for the burst');
  const lines = writes.join('').trimEnd().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(
    lines.map((m) => m.method ?? `response ${m.id}`),
    ['a', 'b', 'c', 'response 1'],
  );
});

test('a full pipe holds back replay lines until it drains', async () => {
  const { out, writes, release } = sink(16);
  const w = batchedStdout(out);
  await w.writeLines('x'.repeat(64) + '\n');
  await new Promise((r) => setImmediate(r));
  assert.equal(writes.length, 1);
  let queued = false;
  const next = w.writeLines('{"after":"drain"}\n').then(() => (queued = true));
  await new Promise((r) => setImmediate(r));
  assert.equal(queued, false, 'waits for drain');
  release();
  await next;
  await w.flush();
  assert.equal(writes.at(-1), '{"after":"drain"}\n');
});

test('a long burst leaves in slices while it is still being produced, in order', async () => {
  const { out, writes } = sink();
  const w = batchedStdout(out);
  const line = (i: number) => `{"jsonrpc":"2.0","method":"session/update","params":{"n":${i}}}\n`;
  let i = 0;
  // Produced without yielding to the loop, as a fast model's reply is.
  while (writes.length === 0 && i < 100_000) w.lines(line(i++));
  assert.ok(writes.length === 1, 'written before the loop turn ended');
  assert.ok(writes[0]!.length >= FLUSH_AT_CHARS && writes[0]!.length < FLUSH_AT_CHARS + line(i).length);
  for (let k = 0; k < 10; k++) w.lines(line(i++));
  await new Promise((r) => setImmediate(r));
  const all = writes.join('').trimEnd().split('\n').map((l) => JSON.parse(l).params.n);
  assert.deepEqual(all, Array.from({ length: i }, (_, k) => k), 'every line once, in order');
});

test('slices written into a full pipe share one drain wait', async () => {
  const { out, writes, release } = sink(16);
  const w = batchedStdout(out);
  const line = (i: number) => `{"jsonrpc":"2.0","method":"session/update","params":{"n":${i},"pad":"${'x'.repeat(200)}"}}\n`;
  // A long reply produced into a pipe nobody is reading: slice after slice is refused.
  let i = 0;
  while (writes.length === 0 || i < 2000) w.lines(line(i++));
  assert.ok(out.writableNeedDrain, 'the pipe is full');
  assert.equal(out.listenerCount('drain'), 1, 'one listener, however many slices were written');
  const after = w.writeLines(line(i++));
  release();
  await after;
  await w.flush();
  const all = writes.join('').trimEnd().split('\n').map((l) => JSON.parse(l).params.n);
  assert.deepEqual(all, Array.from({ length: i }, (_, k) => k), 'every line once, in order');
  assert.equal(out.listenerCount('drain'), 0);
});

test('NDJSON bytes (the SDK\'s own answers) leave at once, in order with everything queued before them', async () => {
  const { out, writes } = sink();
  const w = batchedStdout(out);
  w.lines('{"jsonrpc":"2.0","method":"session/update","params":{"n":1}}\n');
  const writer = w.bytes.getWriter();
  await writer.write(new TextEncoder().encode('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}\n'));
  assert.equal(writes.length, 1, 'written before the loop turn ended');
  assert.deepEqual(writes[0]!.trimEnd().split('\n').map((l) => JSON.parse(l).method ?? JSON.parse(l).error.code), ['session/update', -32700]);
});

test('the SDK takes and releases a writer per message: the output is never locked, and holds back after close', async () => {
  const { out, writes } = sink();
  const w = batchedStdout(out);
  // As the SDK's sendMessage does, twice, the second writer taken before the first is released.
  const first = w.writable.getWriter();
  const second = w.writable.getWriter();
  assert.equal(w.writable.locked, false);
  await first.write({ jsonrpc: '2.0', method: 'a', params: {} });
  await second.write({ jsonrpc: '2.0', id: 7, result: {} });
  first.releaseLock();
  second.releaseLock();
  assert.deepEqual(writes.join('').trimEnd().split('\n').map((l) => JSON.parse(l).method ?? `response ${JSON.parse(l).id}`), ['a', 'response 7']);
  await w.writable.getWriter().close();
  await assert.rejects(w.writable.getWriter().write({ jsonrpc: '2.0', method: 'late', params: {} }), TypeError);
  assert.equal(writes.join('').includes('late'), false);
});
