// The page's header in a real headless Chromium against a real daemon: a notice about the session
// shown (not found, deleted) goes when another session is shown (by a click, back, forward or a
// link in the same tab), a notice about the whole live feed (transitions missed) stays; a row
// clicked once the login is gone says so; while the daemon is away the header says
// `reconnecting…`, never the list's raw fetch error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { daemonWithSession } from '../../support/daemon.js';
import { headlessChromium, openInspector, showSession, until } from '../../support/inspector-page.js';

/** Transitions the daemon keeps for resuming the page's feed: small, so that a gap can be made. */
const KEEP = 12;
const ping = [{ type: 'text' as const, text: 'ping' }];
const notices = (page: Page) => page.$$eval('#gaps .gap', (gs) => gs.map((g) => g.textContent ?? ''));
type Inspector = { troupeInspector: { disconnect(): void; resume(): void } };
type Inspected = { troupeInspector: { app: { selected?: string } } };

test('inspector: notices about the session shown go with it; a gap of the live feed stays', { timeout: 120_000 }, async (t) => {
  const { d, c, cwd, sessionId: first } = await daemonWithSession(t, 'http', { script: { replies: [{ when: 'ping', items: [{ text: 'pong' }] }] }, env: { TROUPE_INSPECTOR_KEEP: String(KEEP) } });
  const [second, third] = await Promise.all([1, 2].map(async () => (await c.agent.request('session/new', { cwd, mcpServers: [] })).sessionId as string));
  const browser = await headlessChromium(t);
  const { page, errors } = await openInspector(browser, d);

  // A link to a session that is not there, followed in the same tab (the page is not loaded again),
  // then a real one.
  await page.goto(`${d.url}/inspect/#ses_doesnotexist`);
  await until(page, 'the unknown session noticed', () => /no session ses_doesnotexist/.test(document.querySelector('#gaps')?.textContent ?? ''));
  await showSession(page, first);
  assert.deepEqual(await notices(page), [], 'the unknown session is not what is shown now');

  // The session shown is deleted, then another is shown.
  assert.equal((await d.api('DELETE', `/v1/sessions/${first}`)).status, 200);
  await until(page, 'the deletion noticed', () => /was deleted/.test(document.querySelector('#gaps')?.textContent ?? ''));
  await showSession(page, second);
  assert.deepEqual(await notices(page), [], 'the deleted session is not what is shown now');

  // Transitions missed by the feed (more than the daemon keeps, while it was away): not about one session.
  await page.evaluate(() => (window as unknown as Inspector).troupeInspector.disconnect());
  for (let i = 0; i < 3; i++) await c.agent.request('session/prompt', { sessionId: second, prompt: ping });
  await page.evaluate(() => (window as unknown as Inspector).troupeInspector.resume());
  await until(page, 'the gap notice', () => /missed transitions/.test(document.querySelector('#gaps')?.textContent ?? ''));
  // Another gap: still one notice, saying the latest and how many (until 2026-12-07 they piled up).
  const firstGap = (await notices(page)).find((n) => /missed transitions/.test(n))!;
  await page.evaluate(() => (window as unknown as Inspector).troupeInspector.disconnect());
  for (let i = 0; i < 3; i++) await c.agent.request('session/prompt', { sessionId: second, prompt: ping });
  await page.evaluate(() => (window as unknown as Inspector).troupeInspector.resume());
  await until(page, 'the second gap said', () => /\(2 times\)/.test(document.querySelector('#gaps')?.textContent ?? ''));
  const [gap, ...more] = (await notices(page)).filter((n) => /missed transitions/.test(n));
  assert.deepEqual(more, [], 'one notice of missed transitions');
  const after = (n: string) => Number(/after #(\d+)/.exec(n)![1]);
  assert.ok(after(gap!) > after(firstGap), `the latest gap is said (${gap} after ${firstGap})`);
  assert.equal(await page.$$eval('#timeline li.gap', (lis) => lis.filter((li) => /missed transitions/.test(li.textContent ?? '')).length), 2, 'the timeline has a row for each gap');
  await showSession(page, third);
  assert.equal((await notices(page)).filter((n) => /missed transitions after #\d+/.test(n)).length, 1, 'the feed gap is still said');
  assert.equal((await notices(page)).length, 1);

  // Back and forward move between the sessions looked at (one history entry each), as does the address.
  const shown = () => page.evaluate(() => (window as unknown as Inspected).troupeInspector.app.selected);
  const showing = (id: string) => page.waitForFunction((i) => (window as unknown as Inspected).troupeInspector.app.selected === i, id, { timeout: 15_000, polling: 50 });
  await page.goBack();
  await showing(second);
  assert.equal(new URL(page.url()).hash, `#${second}`);
  await page.goBack();
  await until(page, 'the deleted session said so again', () => /no session ses_/.test(document.querySelector('#gaps')?.textContent ?? ''));
  assert.equal(await shown(), first);
  await page.goForward();
  await showing(second);
  assert.deepEqual((await notices(page)).filter((n) => !/missed transitions/.test(n)), [], 'what was said of the deleted session went with it');
  await page.goForward();
  await showing(third);
  await until(page, 'its charts', () => document.querySelectorAll('.chart svg .node').length > 20);
  assert.deepEqual(errors, []);
});

test('inspector: a row clicked once the login is gone says to log in again; while the daemon is away the header says reconnecting…', { timeout: 120_000 }, async (t) => {
  const { d, c, cwd, sessionId: first } = await daemonWithSession(t, 'http', { script: { replies: [[{ text: 'pong' }]] } });
  const second = (await c.agent.request('session/new', { cwd, mcpServers: [] })).sessionId as string;
  const browser = await headlessChromium(t);

  // A cookie the daemon does not know (as after it restarted: cookies are bound to its process).
  const { page: stale, errors } = await openInspector(browser, d, first);
  // (The list's 3 s poll, refused too, would say it first: stopped, only the click can.)
  await stale.evaluate(() => window.clearInterval((window as unknown as { troupeInspector: { app: { poll?: number } } }).troupeInspector.app.poll));
  await stale.context().clearCookies();
  await stale.context().addCookies([{ name: 'troupe_session', value: 'from-an-earlier-daemon', url: d.url }]);
  await stale.click(`#sessions tr[data-session="${second}"]`);
  await until(stale, 'the refusal shown', () => /logged out/.test(document.querySelector('#feed-status')?.textContent ?? '') || document.querySelector('#gaps .gap'));
  assert.deepEqual(await notices(stale), [], 'not a notice about the session clicked');
  assert.match((await stale.textContent('#feed-status')) ?? '', /^logged out .*troupe inspect --url again$/);

  // Every text the header shows from now on, and each failed request for the session list.
  const { page } = await openInspector(browser, d, first);
  await until(page, 'the live feed', () => document.querySelector('#feed-status')?.textContent === 'live');
  await page.evaluate(() => {
    const w = window as unknown as { headers: string[]; listFailures: number };
    w.headers = [];
    w.listFailures = 0;
    const status = document.querySelector('#feed-status')!;
    new MutationObserver(() => w.headers.push(status.textContent ?? '')).observe(status, { childList: true, characterData: true, subtree: true });
    const fetched = window.fetch.bind(window);
    window.fetch = (input, init) =>
      fetched(input, init).catch((err: unknown) => {
        if (String(input).startsWith('/v1/sessions?')) w.listFailures++;
        throw err;
      });
  });
  // The daemon goes away: the list's next poll cannot reach it. (The header is written in the same
  // turn as the failure is counted.)
  c.close();
  await d.stop();
  await until(page, 'the session list asked for in vain', () => (window as unknown as { listFailures: number }).listFailures > 0);
  const headers = await page.evaluate(() => (window as unknown as { headers: string[] }).headers);
  assert.ok(headers.includes('reconnecting…'), JSON.stringify(headers));
  assert.deepEqual(headers.filter((h) => h !== 'reconnecting…'), [], 'only reconnecting… while the daemon is away');
  assert.deepEqual(errors, []);
});
