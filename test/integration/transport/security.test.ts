// Token, cookie login, Origin and WebSocket subprotocol auth, on every route of the daemon's server.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import * as acp from '@agentclientprotocol/sdk';
import { createWebSocketStream } from '@agentclientprotocol/sdk/experimental/ws-client';
import { WebSocket } from 'ws';
import { HttpServer } from '../../../src/daemon/http/http-server.js';
import { recordingLogger, startHarness, TOKEN, type Harness } from '../../support/transport/harness.js';
import { Daemon, waitFor } from '../../support/daemon.js';

const initBody = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: 1 } });

async function codeOf(res: Response): Promise<string> {
  return ((await res.json()) as { error: { code: string } }).error.code;
}

/** Opens a raw ws socket; resolves with the 101 headers or the refusal status. */
function wsAttempt(url: string, protocols: string[], headers: Record<string, string> = {}): Promise<{ ws?: WebSocket; status: number; headers: Record<string, unknown> }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, protocols, { headers });
    ws.once('upgrade', (res) => ws.once('open', () => resolve({ ws, status: 101, headers: res.headers })));
    ws.once('unexpected-response', (_req, res) => {
      resolve({ status: res.statusCode ?? 0, headers: res.headers });
      ws.terminate();
    });
    ws.once('error', () => undefined);
  });
}

describe('security', { timeout: 20_000 }, () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ server: { allowOrigins: ['https://app.example.com'] } });
    h.server.route('GET', '/v1/secret', () => ({ secret: true }));
    h.server.serveStatic('/inspect', new URL('.', import.meta.url).pathname);
  });
  after(() => h.close());

  test('no token 401 unauthorized, wrong token 403 forbidden, on /acp and /v1 routes', async () => {
    for (const path of ['/acp', '/v1/secret']) {
      const none = await fetch(`${h.url}${path}`, { method: path === '/acp' ? 'POST' : 'GET', headers: { 'Content-Type': 'application/json' }, ...(path === '/acp' ? { body: initBody } : {}) });
      assert.equal(none.status, 401);
      assert.equal(await codeOf(none), 'unauthorized');
      // Longer, shorter, and of the same length with its last character changed.
      for (const token of [`${TOKEN}x`, TOKEN.slice(0, -1), `${TOKEN.slice(0, -1)}${TOKEN.endsWith('a') ? 'b' : 'a'}`]) {
        const wrong = await fetch(`${h.url}${path}`, { headers: { Authorization: `Bearer ${token}` } });
        assert.equal(wrong.status, 403, token);
        assert.equal(await codeOf(wrong), 'forbidden');
      }
    }
    const right = await h.fetch('/v1/secret');
    assert.deepEqual(await right.json(), { secret: true });
  });

  test('GET /v1/health needs no token; unknown routes are 404 and wrong methods 405 once authorized', async () => {
    const health = await fetch(`${h.url}/v1/health`);
    assert.equal(health.status, 200);
    assert.equal((await h.fetch('/v1/nothing')).status, 404);
    const wrongMethod = await h.fetch('/v1/secret', { method: 'POST' });
    assert.equal(wrongMethod.status, 405);
    assert.equal(wrongMethod.headers.get('allow'), 'GET, HEAD');
    assert.equal((await fetch(`${h.url}/v1/nothing`)).status, 401, 'no route leaks without a token');
  });

  test('the open routes are open by every path that reaches them, and nothing else is', async () => {
    // The router reads `/v1/health/` and `/v1//health` as /v1/health: until 2026-12-07 they were
    // served only with the token, and a health check written with a trailing slash got 401.
    for (const path of ['/v1/health/', '//v1/health', '/v1//health']) {
      for (const method of ['GET', 'HEAD']) assert.equal((await fetch(`${h.url}${path}`, { method })).status, 200, `${method} ${path}`);
    }
    for (const path of ['/v1/secret/', '//v1/secret', '/v1/health/x', '/v1/healthz']) assert.equal((await fetch(`${h.url}${path}`)).status, 401, path);
    assert.equal((await fetch(`${h.url}/v1/health/`, { method: 'POST' })).status, 401, 'a method the route does not take is not open');
  });

  test('a foreign Origin is refused 403 even with the token; own and allowed origins pass', async () => {
    const foreign = await h.fetch('/v1/secret', { headers: { Origin: 'https://evil.example' } });
    assert.equal(foreign.status, 403);
    assert.equal(await codeOf(foreign), 'forbidden');
    const otherPort = await h.fetch('/v1/secret', { headers: { Origin: `http://127.0.0.1:${h.port + 1}` } });
    assert.equal(otherPort.status, 403);
    for (const origin of [`http://127.0.0.1:${h.port}`, `http://localhost:${h.port}`, `https://localhost:${h.port}`, 'https://app.example.com']) {
      const ok = await h.fetch('/v1/secret', { headers: { Origin: origin } });
      assert.equal(ok.status, 200, origin);
    }
    assert.equal((await fetch(`${h.url}/v1/health`, { headers: { Origin: 'https://evil.example' } })).status, 403);
  });

  test('CORS for --allow-origin origins only: a preflight is answered without credentials, and every response names the origin', async () => {
    const allowed = 'https://app.example.com';
    const pre = await fetch(`${h.url}/acp`, { method: 'OPTIONS', headers: { Origin: allowed, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization, content-type, acp-connection-id' } });
    assert.equal(pre.status, 204);
    assert.equal(pre.headers.get('access-control-allow-origin'), allowed);
    assert.equal(pre.headers.get('access-control-allow-headers'), 'authorization, content-type, acp-connection-id');
    assert.match(pre.headers.get('access-control-allow-methods') ?? '', /POST/);
    for (const res of [await h.fetch('/v1/secret', { headers: { Origin: allowed } }), await fetch(`${h.url}/v1/secret`, { headers: { Origin: allowed } })]) {
      assert.equal(res.headers.get('access-control-allow-origin'), allowed, `on a ${res.status}`);
      assert.match(res.headers.get('access-control-expose-headers') ?? '', /Acp-Connection-Id/);
    }
    const foreign = await fetch(`${h.url}/acp`, { method: 'OPTIONS', headers: { Origin: 'https://evil.example', 'Access-Control-Request-Method': 'POST' } });
    assert.equal(foreign.status, 403);
    assert.equal(foreign.headers.get('access-control-allow-origin'), null);
    const own = await h.fetch('/v1/secret', { headers: { Origin: `http://127.0.0.1:${h.port}` } });
    assert.equal(own.headers.get('access-control-allow-origin'), null, 'pages of the server itself need no CORS');
  });

  test('login: a one-time code sets an HttpOnly SameSite=Strict cookie, works once, and the cookie authenticates', async () => {
    const { code, url } = h.server.mintLoginCode();
    assert.equal(url, `${h.url}/v1/login?code=${code}`);
    const login = await fetch(url, { redirect: 'manual' });
    assert.equal(login.status, 303);
    assert.equal(login.headers.get('location'), '/inspect/');
    const setCookie = login.headers.get('set-cookie')!;
    assert.match(setCookie, /^troupe_session=[A-Za-z0-9_-]+; HttpOnly; SameSite=Strict; Path=\//);
    assert.equal(setCookie.includes(TOKEN), false, 'the cookie does not carry the token');
    const cookie = setCookie.split(';')[0]!;
    const withCookie = await fetch(`${h.url}/v1/secret`, { headers: { Cookie: cookie } });
    assert.equal(withCookie.status, 200);
    const page = await fetch(`${h.url}/inspect/security.test.js`, { headers: { Cookie: cookie } });
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type')!, /javascript/);
    const reused = await fetch(url, { redirect: 'manual' });
    assert.equal(reused.status, 403);
    const forged = await fetch(`${h.url}/v1/secret`, { headers: { Cookie: 'troupe_session=forged' } });
    assert.equal(forged.status, 403);
  });

  test('a browser loading a page without a login that works gets a page saying how to log in, under the same status; API clients the JSON error', async () => {
    const browser = { Accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };
    const { url } = h.server.mintLoginCode();
    assert.equal((await fetch(url, { redirect: 'manual', headers: browser })).status, 303);
    const cases: [string, Record<string, string>, number, string][] = [
      ['/inspect/security.test.js', {}, 401, 'A bearer token is required (401 unauthorized).'],
      // A cookie of an earlier daemon process (the page reloaded after a restart).
      ['/inspect/security.test.js', { Cookie: 'troupe_session=from-an-earlier-daemon' }, 403, 'The token is not accepted (403 forbidden).'],
      [url.replace(h.url, ''), {}, 403, 'The login code is unknown, used or expired (403 forbidden).'],
      ['/v1/login', {}, 400, 'Missing login code (400 invalid_request).'],
    ];
    for (const [path, headers, status, said] of cases) {
      const page = await fetch(`${h.url}${path}`, { redirect: 'manual', headers: { ...browser, ...headers } });
      assert.equal(page.status, status, path);
      assert.equal(page.headers.get('content-type'), 'text/html; charset=utf-8', path);
      assert.match(page.headers.get('content-security-policy') ?? '', /default-src 'none'/);
      const html = await page.text();
      assert.ok(html.includes(`<p data-testid="refusal">${said}</p>`), `${path}: ${html}`);
      assert.match(html, /run <code>troupe inspect --url<\/code>/);
      // Not asking for HTML (the CLI, an SDK client, the page's own fetches): the JSON error.
      const api = await fetch(`${h.url}${path}`, { redirect: 'manual', headers });
      assert.equal(api.status, status, path);
      assert.equal(await codeOf(api), said.replace(/.*\(\d+ (\w+)\)\.$/, '$1'));
    }
  });

  test('WebSocket: the token as subprotocol works and only `acp` is echoed; 101 carries Acp-Connection-Id', async () => {
    const wsUrl = h.acpUrl.replace(/^http/, 'ws');
    const ok = await wsAttempt(wsUrl, ['acp', `troupe-token.${TOKEN}`]);
    assert.equal(ok.status, 101);
    assert.equal(ok.ws!.protocol, 'acp');
    assert.match(String(ok.headers['acp-connection-id']), /^[0-9a-f-]{36}$/);
    ok.ws!.send(initBody);
    const [frame] = await once(ok.ws!, 'message');
    assert.equal(JSON.parse(String(frame)).result.protocolVersion, 1);
    ok.ws!.close();
    assert.equal((await wsAttempt(wsUrl, ['acp', `troupe-token.${TOKEN}x`])).status, 403);
    assert.equal((await wsAttempt(wsUrl, ['acp'])).status, 401);
    assert.equal((await wsAttempt(wsUrl, ['acp', `troupe-token.${TOKEN}`], { Origin: 'https://evil.example' })).status, 403);
  });

  test('the SDK WebSocket client authenticates with the subprotocol alone', async () => {
    const stream = createWebSocketStream(h.acpUrl.replace(/^http/, 'ws'), { WebSocket: WebSocket as never, protocols: ['acp', `troupe-token.${TOKEN}`] });
    const sid = await acp.client().connectWith(stream, async (agent) => {
      await agent.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
      return (await agent.request('session/new', { cwd: '/tmp', mcpServers: [] })).sessionId;
    });
    assert.match(sid, /^ses_test_/);
  });
});

describe('login code lifetime', { timeout: 20_000 }, () => {
  test('a code expires after loginCodeTtlMs even if never used', async () => {
    let now = 1_000_000;
    const clock = { now: () => now, setTimeout: (fn: () => void, ms: number) => setTimeout(fn, ms), clearTimeout: (t: unknown) => clearTimeout(t as NodeJS.Timeout) };
    const server = new HttpServer({ token: TOKEN, clock, loginCodeTtlMs: 5_000 });
    const info = await server.listen();
    const fresh = server.mintLoginCode();
    const stale = server.mintLoginCode();
    now += 4_999;
    assert.equal((await fetch(fresh.url, { redirect: 'manual' })).status, 303);
    now += 1;
    assert.equal((await fetch(stale.url, { redirect: 'manual' })).status, 403);
    assert.equal((await fetch(`${info.url}/v1/login`, { redirect: 'manual' })).status, 400);
    await server.close();
  });
});

describe('listening', { timeout: 20_000 }, () => {
  test('a non-loopback host logs a warning; the URL reports the real port', async () => {
    const logs: Array<{ level: string; msg: string }> = [];
    const server = new HttpServer({ token: TOKEN, host: '0.0.0.0', logger: recordingLogger(logs) });
    const info = await server.listen();
    assert.ok(info.port > 0);
    assert.equal(info.url, `http://127.0.0.1:${info.port}`);
    assert.equal((await fetch(`${info.url}/v1/health`)).status, 200);
    assert.ok(logs.some((l) => l.level === 'warn' && l.msg.includes('non-loopback')));
    await server.close();
    const quiet: Array<{ level: string; msg: string }> = [];
    const local = new HttpServer({ token: TOKEN, logger: recordingLogger(quiet) });
    await local.listen();
    assert.equal(quiet.some((l) => l.level === 'warn'), false);
    await local.close();
  });

  test('troupe serve --host in any form the system reads: loopback ones bind quietly, and the URL and the Origin check name the address (127.1 is 127.0.0.1, 0 is 0.0.0.0)', async (t) => {
    // Until 2026-12-07 the first three warned they were not loopback, and `--host 0` wrote the URL
    // http://0:PORT, after which a browser's http://127.0.0.1:PORT was refused 403 as a foreign origin.
    const hosts = [['127.1', 'http://127.0.0.1:', false], ['127.0.0.2', 'http://127.0.0.2:', false], ['::ffff:127.0.0.1', 'http://[::ffff:127.0.0.1]:', false], ['0', 'http://127.0.0.1:', true]] as const;
    const daemons = await Promise.all(hosts.map(([host]) => Daemon.start({ args: ['--pool', '0', '--host', host] })));
    t.after(() => Promise.all(daemons.map((d) => d.stop())));
    for (const [i, [host, url, warns]] of hosts.entries()) {
      const d = daemons[i]!;
      // The warning comes before this line on the same stream.
      await waitFor('the listening line', () => /daemon listening on/.test(d.stderr));
      const port = new URL(d.url).port;
      assert.equal(d.url, `${url}${port}`, host);
      assert.equal(/non-loopback/.test(d.stderr), warns, `${host}: ${d.stderr}`);
      for (const origin of [`http://127.0.0.1:${port}`, `http://localhost:${port}`].filter(() => warns || host === '127.1')) {
        assert.equal((await fetch(`${d.url}/v1/health`, { headers: { Origin: origin } })).status, 200, `${host}, Origin ${origin}`);
      }
    }
  });

  test('a token shorter than 16 characters is refused', () => {
    assert.throws(() => new HttpServer({ token: 'short' }), /at least 16/);
  });
});
