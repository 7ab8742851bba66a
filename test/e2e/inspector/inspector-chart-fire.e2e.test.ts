// The charts' drawing of live transitions in a real headless Chromium against a real daemon: each
// transition lights its edge, its animation started over when the same edge fires again, and none
// forces the browser to recompute the page's style and layout there and then. Until 2026-12-07 each
// did (the edge's box was read to restart its animation): 30–110 ms a transition with a long session
// listed, and a burst of transitions froze the page for seconds. Seen in a trace of the page: a style
// or layout forced by a script carries that script's stack.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { daemonWithSession } from '../../support/daemon.js';
import { headlessChromium, openInspector, until } from '../../support/inspector-page.js';

const prompt = (text: string) => [{ type: 'text' as const, text }];
type TraceEvent = { name: string; ph: string; args?: { beginData?: { stackTrace?: { functionName: string; url: string }[] } } };

test('inspector: a live transition lights its edge without forcing a style and layout of the page', { timeout: 120_000 }, async (t) => {
  const { d, c, sessionId } = await daemonWithSession(t, 'http', { script: { replies: [{ when: 'ping', items: [{ text: 'pong' }] }] } });
  const browser = await headlessChromium(t);
  const { page, errors } = await openInspector(browser, d, sessionId);
  await until(page, 'the live feed', () => document.querySelector('#feed-status')?.textContent === 'live');
  await page.evaluate(() => {
    const w = window as unknown as { toasts: number };
    w.toasts = 0;
    new MutationObserver((ms) => ms.forEach((m) => m.addedNodes.forEach((n) => void (w.toasts += (n as Element).classList?.contains('toast') ? 1 : 0)))).observe(document.querySelector('#charts')!, { childList: true, subtree: true });
  });

  const cdp = await page.context().newCDPSession(page);
  const events: TraceEvent[] = [];
  cdp.on('Tracing.dataCollected', (e) => void events.push(...(e.value as unknown as TraceEvent[])));
  const complete = new Promise((r) => cdp.once('Tracing.tracingComplete', r));
  await cdp.send('Tracing.start', { categories: 'devtools.timeline,disabled-by-default-devtools.timeline.stack', transferMode: 'ReportEvents' });
  // The same transitions twice: the second time each edge fires again.
  for (let i = 0; i < 3; i++) await c.agent.request('session/prompt', { sessionId, prompt: prompt('ping') });
  await until(page, 'the transitions drawn', () => (window as unknown as { toasts: number }).toasts >= 12);
  await until(page, 'the list redrawn', () => document.querySelectorAll('#timeline li[data-type=turn_completed]').length === 3);
  await cdp.send('Tracing.end');
  await complete;

  // Styles and layouts forced by a script (those the browser does at its frames carry no stack).
  const forced = events.filter((e) => (e.name === 'UpdateLayoutTree' || e.name === 'Layout') && e.args?.beginData?.stackTrace?.length);
  const stacks = forced.map((e) => e.args!.beginData!.stackTrace!.map((f) => `${f.functionName || '(anonymous)'}@${f.url.split('/').pop()}`).join(' < '));
  assert.ok(forced.length > 0, 'the trace has the forced layouts of the timeline list (its scroll position is read as it is redrawn)');
  assert.deepEqual(stacks.filter((s) => /statechart\.js/.test(s)), [], 'none forced by the charts');

  // Each chart lights the edge of its latest transition only.
  assert.equal(await page.$$eval('.chart[data-machine=child] .edge.fire', (gs) => gs.length), 1);
  assert.deepEqual(errors, []);
});
