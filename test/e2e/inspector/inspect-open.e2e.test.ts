// `troupe inspect [ID] --open` as a user runs it, against a real daemon, with $BROWSER a small script
// standing for the user's browser opener: the page it is given opens on the session named, in a real
// headless Chromium; an opener that finds no browser (xdg-open on a server: exit 3) is said to have
// failed, the URL printed all the same; one still running (a browser it started) is left to run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { daemonWithSession, tempDir, waitFor } from '../../support/daemon.js';
import { headlessChromium, until } from '../../support/inspector-page.js';

const BIN = resolve('bin/troupe.js');

function troupe(home: string, args: string[], browser: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', HOME: home, TROUPE_HOME: home, BROWSER: browser }, timeout: 20_000 }, (err, stdout, stderr) =>
      done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** A browser opener: writes the URL it is given to `opened`, then runs `then` (shell). */
function opener(dir: string, then: string): { path: string; opened: string } {
  const path = join(dir, 'opener.sh');
  const opened = join(dir, 'opened');
  writeFileSync(path, `#!/bin/sh\nprintf '%s' "$1" > '${opened}'\n${then}\n`, { mode: 0o755 });
  return { path, opened };
}

test('inspect ID --open opens the page on that session; an unknown session or a terminal option is refused first', { timeout: 60_000 }, async (t) => {
  const { d, sessionId } = await daemonWithSession(t, 'http');
  const dir = tempDir();
  const browse = opener(dir, 'exit 0');

  const r = await troupe(d.home, ['inspect', sessionId, '--open'], browse.path);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, '');
  const url = readFileSync(browse.opened, 'utf8');
  assert.equal(r.stdout, `${url}\n`, 'the URL opened is the one printed');
  assert.match(url, new RegExp(`^${d.url}/v1/login\\?code=[\\w-]+#${sessionId}$`));

  // The URL logs in and shows the session (the login's redirect keeps the address's #ses_…).
  const browser = await headlessChromium(t);
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(url);
  await until(page, 'the page started', () => document.body.dataset.ready === 'true');
  assert.equal(new URL(page.url()).pathname, '/inspect/');
  assert.equal(new URL(page.url()).hash, `#${sessionId}`);
  await until(page, 'the session shown', () => document.querySelector('#sessions tr.selected') && document.querySelectorAll('.chart svg .node').length > 20);
  assert.equal(await page.getAttribute('#sessions tr.selected', 'data-session'), sessionId);
  assert.equal(await page.isHidden('#detail-pane'), false);

  // `--url` prints the same kind of URL, opens nothing.
  const printed = await troupe(d.home, ['inspect', sessionId, '--url'], join(dir, 'no-such-opener'));
  assert.equal(printed.code, 0, printed.stderr);
  assert.match(printed.stdout, new RegExp(`^${d.url}/v1/login\\?code=[\\w-]+#${sessionId}\\n$`));

  // Refused before anything is opened: a session that is not there, a terminal picture's option.
  writeFileSync(browse.opened, '');
  const unknown = await troupe(d.home, ['inspect', 'ses_doesnotexist', '--open'], browse.path);
  assert.equal(unknown.code, 1);
  assert.equal(unknown.stdout, '');
  assert.match(unknown.stderr, /session_not_found\)\n$/);
  const mixed = await troupe(d.home, ['inspect', sessionId, '--open', '--json'], browse.path);
  assert.equal(mixed.code, 2);
  assert.equal(mixed.stderr, "troupe inspect: --url and --open do not go with --last, --mermaid or --json (try 'troupe inspect --help')\n");
  assert.equal(readFileSync(browse.opened, 'utf8'), '', 'nothing opened');
  assert.deepEqual(errors, []);
});

test('inspect --open: an opener that finds no browser is said to have failed; one still running is left to run', { timeout: 60_000 }, async (t) => {
  const { d, sessionId } = await daemonWithSession(t, 'http');
  const dir = tempDir();

  // As xdg-open does on a machine with no display and no text browser: exit 3. Until 2026-12-07 the
  // URL was printed with nothing said, exit 0, and the user waited for a browser that never came.
  const none = opener(dir, 'echo "xdg-open: no method available" >&2; exit 3');
  const failed = await troupe(d.home, ['inspect', sessionId, '--open'], none.path);
  assert.equal(failed.code, 1);
  assert.equal(failed.stdout, `${readFileSync(none.opened, 'utf8')}\n`, 'the URL printed all the same');
  assert.equal(failed.stderr, `troupe inspect: '${none.path}' could not open a browser (exit code 3): open the URL above yourself (or set BROWSER) (browser_failed)\n`);

  // A browser the opener started, still open: the command is done, the browser not ended.
  const exited = join(dir, 'exited');
  const release = join(dir, 'release');
  const running = opener(dir, `while [ ! -e '${release}' ]; do sleep 0.05; done; touch '${exited}'`);
  const r = await troupe(d.home, ['inspect', '--open'], running.path);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, `${readFileSync(running.opened, 'utf8')}\n`);
  assert.equal(existsSync(exited), false, 'the browser still runs');
  writeFileSync(release, '');
  await waitFor('the browser to end on its own', () => existsSync(exited));
});

test('inspect --open reads $BROWSER as commands separated by colons, tried in turn, %s standing for the URL', { timeout: 60_000 }, async (t) => {
  const { d } = await daemonWithSession(t, 'http');
  const failing = opener(tempDir(), 'exit 1');
  const dir = tempDir();
  const browser = join(dir, 'browser.sh');
  writeFileSync(browser, `#!/bin/sh\nprintf '%s\\n' "$@" > '${join(dir, 'args')}'\n`, { mode: 0o755 });

  // Until 2026-12-07 the whole value was one program's name: this could not run ('…' could not run).
  const r = await troupe(d.home, ['inspect', '--open'], `/nonexistent/browser:${failing.path}:${browser} --new-window %s`);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, '');
  const url = r.stdout.trimEnd();
  assert.equal(readFileSync(failing.opened, 'utf8'), url, 'the one before was tried, and failed');
  assert.equal(readFileSync(join(dir, 'args'), 'utf8'), `--new-window\n${url}\n`);

  const none = await troupe(d.home, ['inspect', '--open'], `/nonexistent/browser:${failing.path}`);
  assert.equal(none.code, 1);
  assert.equal(none.stderr, `troupe inspect: could not run '/nonexistent/browser' to open a browser; '${failing.path}' could not open a browser (exit code 1): open the URL above yourself (or set BROWSER) (browser_failed)\n`);
});
