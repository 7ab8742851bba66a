// `troupe inspect` as a user runs it, against a real daemon: the login URL works once and sets the
// HttpOnly cookie; `inspect ID` prints states, transitions and Mermaid for a live session, and the
// same picture rebuilt from the log once the session is stored and a new daemon serves it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Daemon, tempDir, daemonWithClient } from '../../support/daemon.js';

const BIN = resolve('bin/troupe.js');

function troupe(home: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', HOME: home, TROUPE_HOME: home }, timeout: 20_000 }, (err, stdout, stderr) =>
      done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const script = { replies: [{ when: 'hello', items: [{ text: 'Hi.' }] }, { when: 'write', items: [{ tool_call: { name: 'write_file', input: { path: 'a.txt', content: 'x' } } }] }, [{ text: 'Done.' }]] };

test('troupe inspect: login URL, then a live session and the same session stored', { timeout: 60_000 }, async (t) => {
  const d = await Daemon.start({ script });
  t.after(() => d.stop());

  const url = await troupe(d.home, ['inspect', '--url']);
  assert.equal(url.code, 0, url.stderr);
  const loginUrl = url.stdout.trim();
  assert.match(loginUrl, new RegExp(`^${d.url}/v1/login\\?code=[\\w-]+$`));
  const first = await fetch(loginUrl, { redirect: 'manual' });
  assert.equal(first.status, 303);
  assert.equal(first.headers.get('location'), '/inspect/');
  const cookie = first.headers.get('set-cookie') ?? '';
  assert.match(cookie, /troupe_session=[^;]+;.*HttpOnly/i);
  const page = await fetch(`${d.url}/inspect/`, { headers: { cookie: cookie.split(';')[0]! } });
  assert.equal(page.status, 200, 'the cookie opens the page');
  assert.match(await page.text(), /troupe inspector/);
  assert.equal((await fetch(loginUrl, { redirect: 'manual' })).status, 403, 'the code works once');

  const c = d.connect('http');
  t.after(() => c.close());
  await c.init();
  const sessionId = (await c.agent.request('session/new', { cwd: tempDir(), mcpServers: [] })).sessionId as string;
  await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello' }] });
  await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'write it' }] });

  const json = await troupe(d.home, ['inspect', sessionId, '--json', '--last', '5']);
  assert.equal(json.code, 0, json.stderr);
  const live = JSON.parse(json.stdout);
  assert.equal(live.source, 'live');
  assert.deepEqual([live.states.session, live.states.turn, live.states.child], ['idle', 'done', 'ready']);
  assert.equal(live.transitions.length, 5);
  const hub = (await d.api('GET', `/v1/sessions/${sessionId}/transitions`)).json.transitions;
  assert.deepEqual(live.transitions, hub.slice(-5), 'the last transitions the daemon recorded');
  assert.equal(live.session.child.pid, (await d.api('GET', `/v1/sessions/${sessionId}`)).json.child.pid);

  const text = await troupe(d.home, ['inspect', sessionId]);
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /states \(live\):\n {2}session idle\n {2}turn {4}done\n {2}child {3}ready/);
  assert.equal(text.stdout.match(/```mermaid\nstateDiagram-v2/g)?.length, 3, 'a diagram per machine');
  assert.match(text.stdout, /turn +→ done +on done: modelStep/);

  const mermaid = await troupe(d.home, ['inspect', sessionId, '--mermaid', '--machine', 'session']);
  assert.equal(mermaid.code, 0, mermaid.stderr);
  assert.match(mermaid.stdout, /^stateDiagram-v2\n/);
  assert.match(mermaid.stdout, /\n {2}class idle active\n$/);

  // Stored: a new daemon on the same home has never seen the machines; the log rebuilds them.
  c.close();
  assert.equal(await d.stop(), 0);
  const again = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--pool', '0'], { env: { PATH: process.env.PATH ?? '', HOME: d.home, TROUPE_HOME: d.home }, stdio: 'ignore' });
  t.after(() => again.kill('SIGTERM'));
  rmSync(join(d.home, 'daemon.json'), { force: true });
  while (!existsSync(join(d.home, 'daemon.json'))) await new Promise((r) => setTimeout(r, 20));
  assert.equal(JSON.parse(readFileSync(join(d.home, 'daemon.json'), 'utf8')).pid, again.pid);
  const stored = await troupe(d.home, ['inspect', sessionId, '--json']);
  assert.equal(stored.code, 0, stored.stderr);
  const p = JSON.parse(stored.stdout);
  assert.equal(p.source, 'log');
  assert.deepEqual([p.states.session, p.states.turn, p.states.child], ['idle', 'done', undefined]);
  assert.ok(p.transitions.some((x: { state: string; cause?: string }) => x.state === 'tools.awaitingPermission' || x.state === 'tools.running'), 'the tool steps are rebuilt');
  assert.ok(p.transitions.every((x: { cause?: string; seq?: number }) => typeof x.cause === 'string' && typeof x.seq === 'number'), 'each with its causing log event');

  const missing = await troupe(d.home, ['inspect', 'ses_nope']);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /session_not_found/);
  const bad = await troupe(d.home, ['inspect', sessionId, '--machine', 'turn']);
  assert.equal(bad.code, 2);
});

test('troupe inspect: a first prompt with terminal control sequences gives a printable title, and none reaches the terminal', { timeout: 60_000 }, async (t) => {
  const { d, c } = await daemonWithClient(t, 'http', { script });
  const sessionId = (await c.agent.request('session/new', { cwd: tempDir(), mcpServers: [] })).sessionId as string;
  // The session's title is its first prompt: an OSC that retitles the window, a clear-screen.
  await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: '\x1b]0;owned\x07\x1b[2Jhello' }] });
  // One line of printable text (until 2026-12-07 the title kept them, and inspect spelled them out).
  assert.equal((await d.api('GET', `/v1/sessions/${sessionId}`)).json.title, ']0;owned [2Jhello');
  const text = await troupe(d.home, ['inspect', sessionId]);
  assert.equal(text.code, 0, text.stderr);
  assert.ok(!/[\x00-\x09\x0b-\x1f\x7f-\x9f]/.test(text.stdout), 'no control character but newlines reaches the terminal');
  assert.ok(text.stdout.includes('"]0;owned [2Jhello"'), 'the title is shown');
});

test('inspect ?last= over 500 (or not a whole number from 1) is refused with invalid_params, not cut to 500', { timeout: 60_000 }, async (t) => {
  const { d, c } = await daemonWithClient(t, 'http', { script });
  const sessionId = (await c.agent.request('session/new', { cwd: tempDir(), mcpServers: [] })).sessionId as string;
  await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello' }] });

  // Until 2026-12-06 `last=2000` answered 200 with at most 500, and `abc`, `0`, `1e3` were read as 20, 1, 500.
  for (const raw of ['2000', '501', '0', 'abc', '1e3', '-5', '']) {
    const r = await d.api('GET', `/v1/sessions/${sessionId}/inspect?last=${encodeURIComponent(raw)}`);
    assert.equal(r.status, 400, `last=${raw}`);
    assert.equal(r.json.error.code, 'invalid_params', `last=${raw}`);
    assert.match(r.json.error.message, /from 1 to 500/);
  }
  for (const raw of ['500', '1']) assert.equal((await d.api('GET', `/v1/sessions/${sessionId}/inspect?last=${raw}`)).status, 200, `last=${raw}`);

  // The CLI knows the bound: a usage mistake (exit 2) before asking (until 2026-12-07 the daemon's invalid_params, exit 1).
  const over = await troupe(d.home, ['inspect', sessionId, '--last', '2000']);
  assert.equal(over.code, 2);
  assert.equal(over.stdout, '');
  assert.equal(over.stderr, "troupe inspect: --last must be from 1 to 500 (the most transitions the daemon sends), got '2000' (try 'troupe inspect --help')\n");
});

test('inspect --open with a browser that cannot run: the URL all the same, and one line with its code', { timeout: 60_000 }, async (t) => {
  const d = await Daemon.start({ script });
  t.after(() => d.stop());
  const r = await new Promise<{ code: number; stdout: string; stderr: string }>((done) =>
    execFile(process.execPath, [BIN, 'inspect', '--open'], { env: { PATH: process.env.PATH ?? '', HOME: d.home, TROUPE_HOME: d.home, BROWSER: '/nonexistent/browser' }, timeout: 20_000 }, (err, stdout, stderr) =>
      done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  );
  assert.equal(r.code, 1);
  assert.match(r.stdout, new RegExp(`^${d.url}/v1/login\\?code=[\\w-]+\\n$`));
  // Until 2026-12-06 the line had no code.
  assert.equal(r.stderr, "troupe inspect: could not run '/nonexistent/browser' to open a browser: open the URL above yourself (or set BROWSER) (browser_failed)\n");
});
