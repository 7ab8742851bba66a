// The management route API (params, query, JSON bodies, errors, SSE with ids), static files, and TLS.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { TroupeError } from '../../../src/core/errors.js';
import { HttpServer, MAX_TARGET_CHARS } from '../../../src/daemon/http/http-server.js';
import { TestAgent } from '../../support/transport/test-agent.js';
import { authHeaders, startHarness, TOKEN, type Harness } from '../../support/transport/harness.js';

describe('management routes', { timeout: 20_000 }, () => {
  let h: Harness;
  let dir: string;
  before(async () => {
    h = await startHarness({ server: { maxBodyBytes: 1024, sseKeepAliveMs: 30 } });
    h.server.route('GET', '/v1/sessions/:id', (req) => ({ id: req.params['id'], verbose: req.query.get('verbose') }));
    h.server.route('POST', '/v1/sessions/:id/steer', (req) => ({ got: req.body }));
    h.server.route('DELETE', '/v1/sessions/:id', (req) => {
      if (req.params['id'] === 'missing') throw new TroupeError('session_not_found', 'No such session', { sessionId: 'missing' });
      return undefined;
    });
    h.server.route('GET', '/v1/boom', () => {
      throw new Error('secret detail');
    });
    h.server.route('GET', '/v1/events', async (req, res) => {
      const sse = res.sse();
      const from = Number(sse.lastEventId ?? '0');
      for (let i = from + 1; i <= from + 3; i++) await sse.send({ n: i }, { id: i, event: 'tick' });
      sse.close();
    });
    h.server.route('GET', '/v1/quiet', (_req, res) => {
      res.sse();
    });
    dir = mkdtempSync(join(tmpdir(), 'troupe-static-'));
    writeFileSync(join(dir, 'index.html'), '<h1>inspector</h1>');
    writeFileSync(join(dir, 'app.js'), 'console.log(1)');
    h.server.serveStatic('/inspect', dir);
  });
  after(() => h.close());

  test('params, query and JSON bodies reach the handler; returned values are 200 JSON', async () => {
    assert.deepEqual(await (await h.fetch('/v1/sessions/ses%201?verbose=yes')).json(), { id: 'ses 1', verbose: 'yes' });
    const post = await h.fetch('/v1/sessions/a/steer', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ text: 'go left', extra: [1] }) });
    assert.deepEqual(await post.json(), { got: { text: 'go left', extra: [1] } });
  });

  test('a request target over MAX_TARGET_CHARS is 414 and not echoed; one at the limit reaches its route', async () => {
    const at = 'x'.repeat(MAX_TARGET_CHARS - '/v1/sessions/'.length);
    const ok = await h.fetch(`/v1/sessions/${at}`);
    assert.equal(ok.status, 200);
    assert.equal(((await ok.json()) as { id: string }).id, at);
    for (const path of [`/v1/sessions/${at}y`, `/v1/no-such-route/${'z'.repeat(60_000)}`, `/v1/sessions/a?q=${'q'.repeat(MAX_TARGET_CHARS)}`]) {
      const res = await h.fetch(path);
      assert.equal(res.status, 414, path.slice(0, 40));
      const text = await res.text();
      assert.ok(text.length < 300, `the refusal is short (${text.length} characters)`);
      assert.equal((JSON.parse(text) as { error: { code: string } }).error.code, 'invalid_request');
    }
    assert.equal((await h.fetch('/v1/sessions/after')).status, 200, 'the server goes on serving');
  });

  test('errors: TroupeError → its status and code, other throws → 500 without detail, bad JSON 400, big body 413, undefined → 204', async () => {
    const missing = await h.fetch('/v1/sessions/missing', { method: 'DELETE' });
    assert.equal(missing.status, 404);
    assert.deepEqual(await missing.json(), { error: { code: 'session_not_found', message: 'No such session', data: { sessionId: 'missing' } } });
    const boom = await h.fetch('/v1/boom');
    assert.equal(boom.status, 500);
    const text = await boom.text();
    assert.equal(text.includes('secret detail'), false);
    // curl -d sends application/x-www-form-urlencoded: the body is refused plainly, not read as absent.
    const form = await h.fetch('/v1/sessions/a/steer', { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: '{"text":"x"}' });
    assert.equal(form.status, 415);
    assert.equal(((await form.json()) as { error: { code: string } }).error.code, 'invalid_request');
    // The media type exactly: another type that merely starts like JSON's is not JSON.
    const lookalike = await h.fetch('/v1/sessions/a/steer', { method: 'POST', headers: { 'Content-Type': 'application/jsonx' }, body: '{"text":"x"}' });
    assert.equal(lookalike.status, 415);
    const bad = await h.fetch('/v1/sessions/a/steer', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{' });
    assert.equal(bad.status, 400);
    const big = await h.fetch('/v1/sessions/a/steer', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ pad: 'x'.repeat(2000) }) });
    assert.equal(big.status, 413);
    assert.equal(((await big.json()) as { error: { code: string } }).error.code, 'payload_too_large');
    assert.equal((await h.fetch('/v1/sessions/ok', { method: 'DELETE' })).status, 204);
    const deep = await h.fetch('/v1/sessions/a/steer', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: `{"x":${'['.repeat(400)}${']'.repeat(400)}}` });
    assert.equal(deep.status, 400, 'JSON nested deeper than 256 levels');
    assert.equal(((await deep.json()) as { error: { code: string } }).error.code, 'invalid_request');
  });

  test('SSE routes send id and event fields and honour Last-Event-ID', async () => {
    const res = await h.fetch('/v1/events', { headers: { 'Last-Event-ID': '10' } });
    assert.equal(res.headers.get('content-type'), 'text/event-stream');
    const body = await res.text();
    assert.equal(body, ':\n\nid: 11\nevent: tick\ndata: {"n":11}\n\nid: 12\nevent: tick\ndata: {"n":12}\n\nid: 13\nevent: tick\ndata: {"n":13}\n\n');
  });

  test('a silent SSE route gets keep-alive comments', async () => {
    const abort = new AbortController();
    const res = await h.fetch('/v1/quiet', { signal: abort.signal });
    let text = '';
    const decoder = new TextDecoder();
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      text += decoder.decode(chunk, { stream: true });
      if (text.split(':\n\n').length > 3) break;
    }
    abort.abort();
    assert.match(text, /^(:\n\n){3,}/, 'only comments: the opening one and keep-alives');
  });

  test('static files: index, content types, redirect, no escape from the root', async () => {
    const index = await h.fetch('/inspect/');
    assert.equal(await index.text(), '<h1>inspector</h1>');
    assert.match(index.headers.get('content-type')!, /text\/html/);
    const js = await h.fetch('/inspect/app.js');
    assert.match(js.headers.get('content-type')!, /javascript/);
    const redirect = await h.fetch('/inspect', { redirect: 'manual' });
    assert.equal(redirect.status, 302);
    assert.equal(redirect.headers.get('location'), '/inspect/');
    // An encoded slash survives URL normalisation and decodes to ../../etc/passwd inside the router.
    assert.equal((await h.fetch('/inspect/..%2f..%2fetc%2fpasswd')).status, 404);
    assert.equal((await h.fetch('/inspect/nope.js')).status, 404);
    const head = await h.fetch('/inspect/app.js', { method: 'HEAD' });
    assert.equal(head.headers.get('content-length'), String('console.log(1)'.length), 'HEAD: the length of the file, no body');
  });

  test('HEAD gets the headers of GET and no body, so the next response on the connection stays intact', async () => {
    const socket = net.connect(Number(new URL(h.url).port), '127.0.0.1');
    await once(socket, 'connect');
    let text = '';
    socket.on('data', (chunk) => (text += chunk));
    // Pipelined on one kept-alive connection: a JSON route, an SSE route, then a GET whose answer must parse.
    socket.write(`HEAD /v1/sessions/a HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`);
    socket.write(`HEAD /v1/quiet HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`);
    socket.write(`GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n`);
    const deadline = Date.now() + 5_000;
    while (!text.includes('{"status":"ok"}') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    socket.destroy();
    const responses = text.split(/(?=HTTP\/1\.1 )/);
    assert.equal(responses.length, 3, text);
    assert.match(responses[0]!, /content-length: 25\r\n[\s\S]*\r\n\r\n$/i, 'the length of the GET body, no body');
    assert.match(responses[1]!, /^HTTP\/1\.1 200 OK\r\n[\s\S]*text\/event-stream[\s\S]*\r\n\r\n$/i, 'SSE headers, no stream');
    // A GET's body would be an endless stream: its HEAD names no length (until 2026-12-06, Content-Length: 0).
    assert.doesNotMatch(responses[1]!, /content-length/i, 'no length for an unbounded stream');
    assert.match(responses[1]!, /\r\ncache-control: no-cache\r\n/i, "the GET's other headers");
    assert.match(responses[2]!, /^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\n\{"status":"ok"\}$/);
  });

  test('/acp cannot be taken by a route', () => {
    assert.throws(() => h.server.route('GET', '/acp', () => 1), /ACP transport/);
  });
});

describe('TLS', { timeout: 20_000 }, () => {
  let server: HttpServer;
  let cert: string;
  let port: number;
  before(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'troupe-tls-'));
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'], { stdio: 'ignore' });
    cert = join(dir, 'cert.pem');
    server = new HttpServer({ token: TOKEN, tls: { certFile: cert, keyFile: join(dir, 'key.pem') } });
    server.mountAcp(new TestAgent());
    const info = await server.listen();
    port = info.port;
    assert.equal(info.url, `https://127.0.0.1:${port}`);
  });
  after(() => server.close());

  test('HTTPS and WSS work with the configured certificate', async () => {
    const { readFileSync } = await import('node:fs');
    const ca = readFileSync(cert);
    const status = await new Promise<number>((resolve, reject) => {
      https.get({ host: '127.0.0.1', port, path: '/v1/health', ca }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      }).on('error', reject);
    });
    assert.equal(status, 200);
    const ws = new WebSocket(`wss://127.0.0.1:${port}/acp`, { ca, headers: authHeaders });
    await once(ws, 'open');
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: 1 } }));
    const [frame] = await once(ws, 'message');
    assert.equal(JSON.parse(String(frame)).id, 0);
    ws.close();
  });

  test('a missing certificate file is refused at construction', () => {
    assert.throws(() => new HttpServer({ token: TOKEN, tls: { certFile: '/nonexistent.pem', keyFile: '/nonexistent.key' } }), /ENOENT/);
  });
});
