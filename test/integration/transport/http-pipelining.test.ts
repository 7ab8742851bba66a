// HTTP/1.1 pipelining on raw sockets: what uWS answers, and that a client which pipelines and reads
// nothing cannot make the daemon hold its answers. spec/transport.md §7.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import net from 'node:net';
import { setImmediate as turn } from 'node:timers/promises';
import { startHarness, TOKEN, type Harness } from '../../support/transport/harness.js';

const MIB = 1024 * 1024;

/**
 * Writes `bytes` on a connection of its own and reads until the server closes it or `enough` says
 * it has what it waited for; `holdReading` writes everything before reading a byte. Resolves with
 * the text read and whether the server closed the connection.
 */
async function pipeline(h: Harness, bytes: string, enough: (text: string) => boolean, { holdReading = false } = {}): Promise<{ text: string; closed: boolean }> {
  const socket = net.connect(h.port, '127.0.0.1');
  await once(socket, 'connect');
  if (holdReading) socket.pause();
  let text = '';
  let closed = false;
  // The server may close while requests are still being written: the write fails, that is all.
  socket.on('error', () => undefined);
  const done = new Promise<void>((resolve) => {
    socket.on('data', (d) => {
      text += d.toString('latin1');
      if (enough(text)) resolve();
    });
    socket.on('close', () => {
      closed = true;
      resolve();
    });
  });
  await new Promise<void>((resolve) => socket.write(bytes, () => resolve()));
  if (holdReading) socket.resume();
  await done;
  socket.destroy();
  return { text, closed };
}

const statuses = (text: string) => text.match(/HTTP\/1\.1 \d{3}/g) ?? [];

describe('HTTP pipelining', { timeout: 60_000 }, () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
    // Answered without waiting for anything (as /v1/health is): before uWS reads the next request.
    h.server.route('GET', '/v1/big', () => ({ pad: 'x'.repeat(MIB) }));
    h.server.route('GET', '/v1/huge', () => ({ pad: 'y'.repeat(32 * MIB) }));
    // Answered after a turn of the event loop (as a route that reads a file is).
    h.server.route('GET', '/v1/later', async () => {
      await turn();
      return { later: true };
    });
  });
  after(() => h.close());

  const get = (path: string) => `GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`;

  test('requests answered at once are answered in turn, several in one write', async () => {
    const r = await pipeline(h, get('/v1/health').repeat(3), (t) => statuses(t).length === 3 && t.endsWith('}'));
    assert.deepEqual(statuses(r.text), ['HTTP/1.1 200', 'HTTP/1.1 200', 'HTTP/1.1 200']);
    assert.equal(r.closed, false);
  });

  test('a request behind one whose answer is not ready yet closes the connection, neither answered (uWS takes no async pipelining)', async () => {
    const r = await pipeline(h, get('/v1/later') + get('/v1/health'), () => false);
    assert.equal(r.closed, true);
    assert.equal(r.text, '');
    // Alone it is answered.
    const alone = await pipeline(h, get('/v1/later'), (t) => t.endsWith('}'));
    assert.match(alone.text, /^HTTP\/1\.1 200 [^]*\{"later":true\}$/);
  });

  test('a client that pipelines and reads nothing gets no more answers than its socket takes: the connection closes, the answers are not held', async () => {
    // 100 answers of 1 MiB, far more than the kernel's buffers on both sides hold. Until 2026-12-07
    // uWS kept every byte of every answer the socket did not take, 100 MiB in the daemon for 4 KB
    // of requests, and all 100 were answered once the client read.
    const count = 100;
    // Waits for as many bytes as the bodies alone (the text is not searched as it grows: 100 MiB).
    const r = await pipeline(h, get('/v1/big').repeat(count), (t) => t.length > count * MIB, { holdReading: true });
    assert.equal(r.closed, true, `closed by the server (${statuses(r.text).length} answers begun)`);
    assert.ok(statuses(r.text).length < count, `${statuses(r.text).length} of ${count} answers begun`);
    // The connections after it are served as before.
    const next = await pipeline(h, get('/v1/big'), (t) => t.length > MIB && t.endsWith('"}'));
    assert.equal(statuses(next.text).length, 1);
  });

  test('an answer bigger than the socket takes at once reaches a client that reads late, whole', async () => {
    // Written as the socket drains (tryEnd, then onWritable): every byte arrives, in order.
    const socket = net.connect(h.port, '127.0.0.1');
    await once(socket, 'connect');
    socket.pause();
    socket.write(get('/v1/huge'));
    await new Promise((r) => setTimeout(r, 300));
    const chunks: Buffer[] = [];
    let received = 0;
    let bodyStart = -1;
    let length = Infinity;
    const body = new Promise<string>((resolve) => {
      socket.on('data', (d: Buffer) => {
        chunks.push(d);
        received += d.length;
        if (bodyStart < 0) {
          const head = Buffer.concat(chunks).toString('latin1');
          const end = head.indexOf('\r\n\r\n');
          if (end < 0) return;
          bodyStart = end + 4;
          length = Number(/content-length: (\d+)/i.exec(head)?.[1]);
        }
        if (received - bodyStart >= length) resolve(Buffer.concat(chunks).subarray(bodyStart).toString('latin1'));
      });
    });
    socket.resume();
    const text = await body;
    socket.destroy();
    assert.equal(text, JSON.stringify({ pad: 'y'.repeat(32 * MIB) }));
  });
});
