// The page's layout in a real headless Chromium: at a phone's 390×844 the page does not scroll
// sideways, the charts and the lower panes are one under the other, each chart keeps its state
// names at 9 px or more (scrolling in its pane rather than shrinking), and the Cause pane is as wide
// as the timeline; at 1600×1200 the desktop arrangement is kept. Screenshots go to
// test-artifacts/inspector/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { daemonWithSession } from '../../support/daemon.js';
import { headlessChromium, openInspector, until } from '../../support/inspector-page.js';

const ARTIFACTS = resolve('test-artifacts/inspector');
const script = { replies: [{ when: 'write', items: [{ text: 'Writing.' }, { tool_call: { name: 'write_file', input: { path: 'a.txt', content: 'hi\n' } } }] }, [{ text: 'Done.' }]] };

/** Where things are, in CSS pixels. */
function measure(page: Page) {
  return page.evaluate(() => {
    const box = (el: Element) => {
      const r = el.getBoundingClientRect();
      return { left: Math.round(r.left), right: Math.round(r.right), top: Math.round(r.top), width: Math.round(r.width) };
    };
    const charts = Object.fromEntries(
      [...document.querySelectorAll<HTMLElement>('.chart')].map((c) => {
        const svg = c.querySelector('svg')!;
        const text = svg.querySelector('.node text') as SVGTextElement;
        // The state names' size on screen: their 12 user units times the chart's scale.
        const px = Math.round(12 * text.getScreenCTM()!.a * 10) / 10;
        return [c.dataset.machine!, { ...box(c), px, scrolls: c.scrollWidth > c.clientWidth }];
      }),
    );
    return {
      page: document.documentElement.scrollWidth,
      window: innerWidth,
      charts,
      timeline: box(document.querySelector('#timeline-pane')!),
      cause: box(document.querySelector('#cause-pane')!),
      table: box(document.querySelector('#sessions')!),
      tablePane: box(document.querySelector('#sessions')!.parentElement!),
    };
  });
}

test('inspector: readable at 390 px without sideways scrolling; the desktop arrangement at 1600 px', { timeout: 120_000 }, async (t) => {
  mkdirSync(ARTIFACTS, { recursive: true });
  const { d, c, sessionId } = await daemonWithSession(t, 'http', { script });
  assert.equal(((await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'write it' }] })) as { stopReason: string }).stopReason, 'end_turn');
  const browser = await headlessChromium(t);

  const { page: narrow, errors } = await openInspector(browser, d, sessionId, { width: 390, height: 844 });
  await until(narrow, 'the turn in the timeline', () => document.querySelector('#timeline li[data-type=turn_completed]'));
  await narrow.click('#timeline li[data-type=turn_completed]');
  const n = await measure(narrow);
  await narrow.screenshot({ path: join(ARTIFACTS, 'narrow.png'), fullPage: true });
  assert.equal(n.page, n.window, `the page is as wide as the window (${JSON.stringify(n)})`);
  for (const [machine, chart] of Object.entries(n.charts)) {
    assert.ok(chart.px >= 9, `${machine}: state names at ${chart.px} px`);
    assert.ok(chart.left >= 0 && chart.right <= n.window, `${machine}: the pane is in the window (${JSON.stringify(chart)})`);
  }
  assert.ok(n.charts.turn!.scrolls, 'the turn chart, wider than the window at its readable size, scrolls in its pane');
  const { turn, session, child } = n.charts as Record<string, { top: number; left: number }>;
  assert.ok(turn!.top < session!.top && session!.top < child!.top && session!.left === child!.left, 'the charts one under the other');
  assert.ok(n.cause.top > n.timeline.top && n.cause.width === n.timeline.width, `the Cause pane under the timeline, as wide (${JSON.stringify([n.timeline, n.cause])})`);
  assert.ok(n.table.width > n.tablePane.width && n.tablePane.right <= n.window, 'the session table scrolls in its pane');

  const { page: wide } = await openInspector(browser, d, sessionId, { width: 1600, height: 1200 });
  const w = await measure(wide);
  await wide.screenshot({ path: join(ARTIFACTS, 'wide.png'), fullPage: true });
  assert.equal(w.page, w.window);
  const at = w.charts as Record<string, { top: number; left: number; right: number; px: number; scrolls: boolean }>;
  assert.ok(at.turn!.top < at.session!.top && at.session!.top === at.child!.top && at.session!.right < at.child!.left, 'the turn chart above, the session and child charts side by side');
  assert.ok(w.timeline.top === w.cause.top && w.timeline.right < w.cause.left && w.timeline.width > w.cause.width, 'the timeline and, narrower, the Cause pane side by side');
  for (const [machine, chart] of Object.entries(at)) assert.ok(!chart.scrolls, `${machine}: the whole chart in view`);
  assert.deepEqual(errors, []);
});
