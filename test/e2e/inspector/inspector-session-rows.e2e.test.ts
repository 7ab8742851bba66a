// The session list in a real headless Chromium against a real daemon: a row the live feed moves, or
// the list's reads from the daemon redraw, is the same element written where it reads otherwise, not
// a new row in its place. A new row took the focus from the old one (the row clicked has it), which
// the page then gave back: a style and layout of the whole page forced up to twenty times a second
// while a session ran, and a screen reader's place in the list lost at each.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { daemonWithSession } from '../../support/daemon.js';
import { headlessChromium, openInspector, until } from '../../support/inspector-page.js';

const script = { replies: [{ when: 'hang', items: [{ text: 'partial' }, { hang: true }] }] };
const prompt = (text: string) => [{ type: 'text' as const, text }];
type Marked = HTMLElement & { old?: boolean };

/** Marks the rows listed now; `changed` names those that are not the same elements any more. */
const mark = (page: Page) => page.evaluate(() => document.querySelectorAll<Marked>('#sessions tbody tr').forEach((tr) => void (tr.old = true)));
const changed = (page: Page) => page.$$eval('#sessions tbody tr', (trs) => trs.filter((tr) => !(tr as Marked).old).map((tr) => (tr as HTMLElement).dataset.session));

test('inspector: the session list writes its rows in place as the feed and its reads move them; the row with the focus keeps it', { timeout: 120_000 }, async (t) => {
  const { d, c, cwd, sessionId: shown } = await daemonWithSession(t, 'http', { script });
  const other = (await c.agent.request('session/new', { cwd, mcpServers: [] })).sessionId as string;
  const browser = await headlessChromium(t);
  const { page, errors } = await openInspector(browser, d, shown);
  const row = `#sessions tr[data-session="${shown}"]`;
  await until(page, 'both rows', () => document.querySelectorAll('#sessions tbody tr').length === 2);
  await page.focus(row);
  await mark(page);

  // The feed moves the row (within 50 ms), then the list is read again (150 ms after the feed pauses).
  const hanging = c.agent.request('session/prompt', { sessionId: shown, prompt: prompt('hang') });
  await page.waitForFunction((sel) => /^running \/ \S+ · child busy$/.test(document.querySelector(`${sel} [data-testid=session-state]`)?.textContent ?? ''), row, { timeout: 15_000, polling: 50 });
  assert.deepEqual(await changed(page), [], 'the rows moved are the same elements');
  const reads = await page.evaluate(() => performance.getEntriesByType('resource').filter((e) => e.name.includes('/v1/sessions?')).length);
  await page.waitForFunction((n) => performance.getEntriesByType('resource').filter((e) => e.name.includes('/v1/sessions?')).length > n + 1, reads, { timeout: 15_000, polling: 50 });
  assert.deepEqual(await changed(page), [], 'the rows read again are the same elements');
  assert.equal(await page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.session), shown, 'the row keeps the focus');
  assert.match((await page.textContent(`${row} [data-testid=session-state]`)) ?? '', /^running \//);

  // A session that comes is a row of its own, in the daemon's order; one deleted goes.
  const third = (await c.agent.request('session/new', { cwd, mcpServers: [] })).sessionId as string;
  await page.waitForSelector(`#sessions tr[data-session="${third}"]`, { timeout: 15_000 });
  assert.equal((await d.api('DELETE', `/v1/sessions/${other}`)).status, 200);
  await page.waitForSelector(`#sessions tr[data-session="${other}"]`, { state: 'detached', timeout: 15_000 });
  const listed = (await d.api('GET', '/v1/sessions?all=1')).json.sessions.filter((s: { status: string }) => s.status !== 'deleted').map((s: { id: string }) => s.id);
  assert.deepEqual(await page.$$eval('#sessions tbody tr', (trs) => trs.map((tr) => (tr as HTMLElement).dataset.session)), listed);
  assert.deepEqual(await changed(page), [third], 'only the new session is a new row');

  await c.agent.notify('session/cancel', { sessionId: shown });
  assert.equal(((await hanging) as { stopReason: string }).stopReason, 'cancelled');
  assert.deepEqual(errors, []);
});
