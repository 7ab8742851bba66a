// The WebSocket handshake on /acp as a demanding client writes it by hand (raw sockets): a list
// header on several lines, a version the server does not speak, a handshake uWS does not take as one.
// spec/transport.md §2, §3.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import net from 'node:net';
import WebSocket from 'ws';
import { startHarness, TOKEN, until, type Harness } from '../../support/transport/harness.js';

/** RFC 6455 §1.3's sample key: 16 bytes in base64. */
const KEY = 'dGhlIHNhbXBsZSBub25jZQ==';

/**
 * Sends `head` (the request line and headers, without the blank line) on a raw socket and resolves
 * with the response head: the status and the headers, names in lower case (a repeated one: the last).
 */
async function handshake(h: Harness, head: string): Promise<{ status: number; headers: Record<string, string>; text: string }> {
  const socket = net.connect(h.port, '127.0.0.1');
  await once(socket, 'connect');
  let text = '';
  socket.on('data', (chunk) => (text += chunk.toString('latin1')));
  socket.write(`${head}\r\n\r\n`);
  const deadline = Date.now() + 5_000;
  // A 101 has no body; a refusal's JSON body follows its head.
  while (!/^HTTP\/1\.1 101 [^]*\r\n\r\n/.test(text) && !/\r\n\r\n\{[^]*\}$/.test(text) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  socket.destroy();
  const [statusLine, ...lines] = text.split('\r\n\r\n')[0]!.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) headers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim();
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine ?? '')?.[1] ?? 0), headers, text };
}

describe('WebSocket handshake', { timeout: 20_000 }, () => {
  let h: Harness;
  before(async () => (h = await startHarness()));
  after(() => h.close());

  const upgrade = (extra: string[]) => ['GET /acp HTTP/1.1', 'Host: 127.0.0.1', 'Upgrade: websocket', 'Connection: Upgrade', ...extra].join('\r\n');

  test('subprotocols offered one a line are all read: the token on the second line authenticates and `acp` is echoed', async () => {
    // RFC 6455 §11.3.4: Sec-WebSocket-Protocol may appear several times, as one comma list.
    const r = await handshake(h, upgrade([`Sec-WebSocket-Key: ${KEY}`, 'Sec-WebSocket-Version: 13', 'Sec-WebSocket-Protocol: acp', `Sec-WebSocket-Protocol: troupe-token.${TOKEN}`]));
    assert.equal(r.status, 101, r.text);
    assert.equal(r.headers['sec-websocket-protocol'], 'acp');
    const first = await handshake(h, upgrade([`Sec-WebSocket-Key: ${KEY}`, 'Sec-WebSocket-Version: 13', `Sec-WebSocket-Protocol: troupe-token.${TOKEN}`, 'Sec-WebSocket-Protocol: acp']));
    assert.equal(first.status, 101, first.text);
    assert.equal(first.headers['sec-websocket-protocol'], 'acp', 'never the token protocol when acp was offered, whatever its line');
  });

  test('the 101 names a subprotocol troupe speaks, or none: `acp`, else the token subprotocol that carries the token, never another (RFC 6455 §4.2.2)', async () => {
    const token = `troupe-token.${TOKEN}`;
    const offer = (protocols: string, bearer = false) =>
      handshake(h, upgrade([...(bearer ? [`Authorization: Bearer ${TOKEN}`] : []), `Sec-WebSocket-Key: ${KEY}`, 'Sec-WebSocket-Version: 13', `Sec-WebSocket-Protocol: ${protocols}`]));
    const cases: Array<[string, boolean, string | undefined]> = [
      // Until 2026-12-07 `foo`: the first one offered that was not the token's, spoken or not.
      [`foo, ${token}`, false, token],
      [`foo, acp, ${token}`, false, 'acp'],
      [`${token}`, false, token],
      // Authenticated by the header: an unknown protocol is not echoed, nor a token subprotocol
      // that does not carry the token.
      ['foo', true, undefined],
      ['foo, troupe-token.not-the-token', true, undefined],
    ];
    for (const [protocols, bearer, echoed] of cases) {
      const r = await offer(protocols, bearer);
      assert.equal(r.status, 101, `${protocols}: ${r.text}`);
      assert.equal(r.headers['sec-websocket-protocol'], echoed, `offered ${protocols}`);
    }
    // A client that checks the echo (the ws package, as a browser does) connects with the token
    // offered next to a protocol troupe does not speak, and is told which one it got.
    const ws = new WebSocket(h.acpUrl.replace(/^http/, 'ws'), ['foo', token]);
    await once(ws, 'open');
    assert.equal(ws.protocol, token);
    ws.close();
    await once(ws, 'close');
  });

  test('a version other than 13 is refused 426 naming 13, and no connection is made', async () => {
    // The sockets of the test before close in the server's own time.
    await until(() => h.acp.connections().length === 0, 'the earlier connections gone');
    for (const version of ['Sec-WebSocket-Version: 8', 'Sec-WebSocket-Version: 14', undefined]) {
      const r = await handshake(h, upgrade([`Authorization: Bearer ${TOKEN}`, `Sec-WebSocket-Key: ${KEY}`, ...(version ? [version] : [])]));
      assert.equal(r.status, 426, `${version}: ${r.text}`);
      assert.equal(r.headers['sec-websocket-version'], '13', 'the version the client may retry with (RFC 6455 §4.4)');
      assert.equal(JSON.parse(r.text.slice(r.text.indexOf('\r\n\r\n') + 4)).error.code, 'invalid_request');
      assert.equal(r.headers['acp-connection-id'], undefined);
    }
    assert.equal(h.acp.connections().length, 0);
    // Without the token the refusal is still 401: the version is no way around it.
    assert.equal((await handshake(h, upgrade([`Sec-WebSocket-Key: ${KEY}`, 'Sec-WebSocket-Version: 8']))).status, 401);
  });

  test('a handshake without a valid Sec-WebSocket-Key is a bad handshake (400), not an SSE request refused 406', async () => {
    for (const key of [[], ['Sec-WebSocket-Key: abc']]) {
      const r = await handshake(h, upgrade([`Authorization: Bearer ${TOKEN}`, ...key, 'Sec-WebSocket-Version: 13']));
      assert.equal(r.status, 400, r.text);
      assert.match(r.text, /"code":"invalid_request"[^]*Sec-WebSocket-Key/);
    }
    // The SSE GET it was taken for before still answers as it did.
    const sse = await handshake(h, ['GET /acp HTTP/1.1', 'Host: 127.0.0.1', `Authorization: Bearer ${TOKEN}`, 'Accept: application/json'].join('\r\n'));
    assert.equal(sse.status, 406);
  });
});
