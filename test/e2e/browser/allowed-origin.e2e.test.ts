// A web page of an origin allowed with --allow-origin drives the daemon from a real headless
// Chromium: the management API and ACP over HTTP (initialize, the connection's SSE stream, a
// session/new answered on it), which the browser allows only under CORS. A page of any other origin
// cannot read a thing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { chromium, type Browser } from 'playwright-core';
import { Daemon, tempDir } from '../../support/daemon.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

/** A server of one blank page: an origin of its own (its port). */
async function pageServer(): Promise<{ server: Server; origin: string }> {
  const server = createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'text/html' }).end('<!doctype html><title>app</title>'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, origin: `http://127.0.0.1:${(server.address() as { port: number }).port}` };
}

/** What a page's script gets from the daemon, run in the page. */
async function driveDaemon({ url, token, cwd }: { url: string; token: string; cwd: string }): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  const auth = { Authorization: `Bearer ${token}` };
  const post = (body: unknown, connectionId?: string) =>
    fetch(`${url}/acp`, {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...(connectionId ? { 'Acp-Connection-Id': connectionId } : {}) },
      body: JSON.stringify(body),
    });
  try {
    const sessions = await fetch(`${url}/v1/sessions`, { headers: auth });
    out.sessions = [sessions.status, Array.isArray(((await sessions.json()) as { sessions?: unknown }).sessions)];
    const missing = await fetch(`${url}/v1/sessions/ses_missing`, { headers: auth });
    out.missing = [missing.status, ((await missing.json()) as { error?: { code?: string } }).error?.code];
    const init = await post({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: 1, clientCapabilities: {} } });
    const connectionId = init.headers.get('Acp-Connection-Id') ?? undefined;
    out.initialize = [init.status, Boolean(connectionId), ((await init.json()) as { result?: { protocolVersion?: number } }).result?.protocolVersion];
    const stream = await fetch(`${url}/acp`, { headers: { ...auth, Accept: 'text/event-stream', 'Acp-Connection-Id': connectionId ?? '' } });
    out.stream = stream.status;
    out.sessionNew = (await post({ jsonrpc: '2.0', id: 1, method: 'session/new', params: { cwd, mcpServers: [] } }, connectionId)).status;
    const reader = stream.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!/"id":1\b/.test(text)) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value);
    }
    out.sessionId = /"sessionId":"(ses_[^"]+)"/.exec(text)?.[1];
    await reader.cancel();
  } catch (err) {
    out.failed = String(err);
  }
  return out;
}

test('a page of an --allow-origin origin uses the API and ACP over HTTP; a page of another origin cannot', { timeout: 60_000 }, async (t) => {
  const allowed = await pageServer();
  const other = await pageServer();
  t.after(() => (allowed.server.close(), other.server.close()));
  const d = await Daemon.start({ args: ['--allow-origin', allowed.origin] });
  t.after(() => d.stop());
  const browser: Browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  t.after(() => browser.close());
  const cwd = tempDir();

  const page = await browser.newPage();
  await page.goto(`${allowed.origin}/`);
  const got = await page.evaluate(driveDaemon, { url: d.url, token: d.token, cwd });
  assert.equal(got.failed, undefined, String(got.failed));
  assert.deepEqual(got.sessions, [200, true]);
  assert.deepEqual(got.missing, [404, 'session_not_found'], 'an error is readable too');
  assert.deepEqual(got.initialize, [200, true, 1], 'initialize answered, its Acp-Connection-Id readable');
  assert.equal(got.stream, 200);
  assert.equal(got.sessionNew, 202);
  assert.match(String(got.sessionId), /^ses_/, 'session/new answered on the SSE stream');

  const foreign = await browser.newPage();
  await foreign.goto(`${other.origin}/`);
  const refused = await foreign.evaluate(driveDaemon, { url: d.url, token: d.token, cwd });
  assert.match(String(refused.failed), /Failed to fetch/);
  assert.equal(refused.sessions, undefined);
});
