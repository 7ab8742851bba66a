// The inspector's lists from the keyboard, in a real headless Chromium against a real daemon: Up and
// Down move to the row before or after the one with the focus and choose it (as a click does: the
// session shown, the moment travelled to), Home and End to the first and last row; and each list is
// one stop of the page's tab order, so that Tab goes on past it instead of through each of its rows.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { daemonWithSession } from '../../support/daemon.js';
import { headlessChromium, openInspector, until } from '../../support/inspector-page.js';

const prompt = (text: string) => [{ type: 'text' as const, text }];
type Inspected = { troupeInspector: { app: { selected?: string } } };

/** The key of the element with the focus: a session's id or a timeline row's key. */
const focused = (page: Page) => page.evaluate(() => {
  const el = document.activeElement as HTMLElement | null;
  return el?.dataset.session ?? el?.dataset.key ?? el?.tagName;
});

test('inspector: Up, Down, Home and End move through the session list and the timeline, choosing the row; Tab goes past each list', { timeout: 120_000 }, async (t) => {
  const { d, c, cwd, sessionId: first } = await daemonWithSession(t, 'http', { script: { replies: [{ when: 'hello', items: [{ text: 'Hi.' }] }] } });
  for (let i = 0; i < 2; i++) await c.agent.request('session/new', { cwd, mcpServers: [] });
  assert.equal(((await c.agent.request('session/prompt', { sessionId: first, prompt: prompt('hello') })) as { stopReason: string }).stopReason, 'end_turn');
  const browser = await headlessChromium(t);
  const { page, errors } = await openInspector(browser, d, first);
  const shown = () => page.evaluate(() => (window as unknown as Inspected).troupeInspector.app.selected);

  // The session list, in its order: each key chooses a session as a click does (its address too).
  await until(page, 'three sessions listed', () => document.querySelectorAll('#sessions tbody tr').length === 3);
  const sessions = await page.$$eval('#sessions tbody tr', (trs) => trs.map((tr) => (tr as HTMLElement).dataset.session!));
  await page.focus(`#sessions tr[data-session="${first}"]`);
  /** Where each key goes from row `i` of `n`. */
  const step = (key: string, i: number, n: number) => (key === 'Home' ? 0 : key === 'End' ? n - 1 : Math.max(0, Math.min(n - 1, i + (key === 'ArrowUp' ? -1 : 1))));
  let at = sessions.indexOf(first);
  for (const key of ['ArrowDown', 'ArrowUp', 'End', 'ArrowDown', 'Home', 'ArrowUp', 'ArrowDown']) {
    await page.keyboard.press(key);
    const id = sessions[(at = step(key, at, sessions.length))]!;
    assert.equal(await shown(), id, `${key}: the session chosen`);
    assert.equal(await focused(page), id, `${key}: the focus on its row`);
    assert.equal(decodeURIComponent(new URL(page.url()).hash.slice(1)), id, `${key}: the address names it`);
  }
  // One row of the list is in the tab order: Tab leaves the list.
  assert.equal(await page.$$eval('#sessions tbody tr[tabindex="0"]', (trs) => trs.length), 1);
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => Boolean(document.activeElement?.closest('#sessions'))), false, 'Tab went past the session list');

  // The timeline of the prompted session: the keys travel from row to row.
  await page.click(`#sessions tr[data-session="${first}"]`);
  await until(page, 'the turn in the timeline', () => document.querySelector('#timeline li[data-type=turn_completed]'));
  await until(page, 'the transitions rebuilt from the log', () => document.querySelector('#timeline li[data-lane=turn]'));
  const keys = await page.$$eval('#timeline li[data-key]', (lis) => lis.map((li) => (li as HTMLElement).dataset.key!));
  assert.ok(keys.length > 4, `${keys.length} rows`);
  await page.focus(`#timeline li[data-key="${keys[0]}"]`);
  const selectedRow = () => page.$eval('#timeline li.selected', (li) => (li as HTMLElement).dataset.key);
  at = 0;
  for (const key of ['ArrowDown', 'ArrowDown', 'ArrowUp', 'End', 'ArrowDown', 'Home', 'ArrowUp']) {
    await page.keyboard.press(key);
    at = step(key, at, keys.length);
    assert.equal(await selectedRow(), keys[at], `${key}: the row selected`);
    assert.equal(await focused(page), keys[at], `${key}: the focus on it`);
    assert.equal(await page.isHidden('#travel'), false, `${key}: travelled to its moment`);
  }
  await page.keyboard.press('ArrowDown');
  const cause = await page.textContent('#cause');
  await page.click(`#timeline li[data-key="${keys[1]}"]`);
  assert.equal(await page.textContent('#cause'), cause, 'the Cause of the row Down chose, as a click on it shows');
  assert.equal(await page.$$eval('#timeline li[tabindex="0"]', (lis) => lis.length), 1);
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => Boolean(document.activeElement?.closest('#timeline'))), false, 'Tab went past the timeline');
  await page.keyboard.press('Shift+Tab');
  assert.equal(await focused(page), keys[1], 'Shift+Tab comes back to the row left');
  assert.deepEqual(errors, []);
});
