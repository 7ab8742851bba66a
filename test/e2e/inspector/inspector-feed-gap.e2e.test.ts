// A gap of the inspector's live feed in a real headless Chromium against a real daemon: the page
// was away for more transitions than the daemon keeps for resuming, and the session it shows moved
// meanwhile. Once it is back, it reads that session's transitions again, so that its charts and its
// timeline show what the feed missed, and the header's notice of the gap says when the picture was
// whole again instead of staying a red alarm for as long as the page is open.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { daemonWithSession, waitFor, type Daemon } from '../../support/daemon.js';
import { headlessChromium, openInspector, until } from '../../support/inspector-page.js';

/** Transitions the daemon keeps for resuming the page's feed: small, so that a gap can be made. */
const KEEP = 12;
const script = { replies: [{ when: 'hang', items: [{ text: 'partial' }, { hang: true }] }, { when: 'ping', items: [{ text: 'pong' }] }] };
const prompt = (text: string) => [{ type: 'text' as const, text }];
type Transition = { n: number; machine: string; state: string; event: string };
const transitions = async (d: Daemon, id: string): Promise<Transition[]> => (await d.api('GET', `/v1/sessions/${id}/transitions`)).json.transitions;
type Inspector = { troupeInspector: { disconnect(): void; resume(): void } };

test('inspector: after a gap of the live feed, the session shown is read again, and the notice says when', { timeout: 120_000 }, async (t) => {
  const { d, c, cwd, sessionId: shown } = await daemonWithSession(t, 'http', { script, env: { TROUPE_INSPECTOR_KEEP: String(KEEP) } });
  const other = (await c.agent.request('session/new', { cwd, mcpServers: [] })).sessionId as string;
  const browser = await headlessChromium(t);
  const { page, errors } = await openInspector(browser, d, shown);
  await until(page, 'the live feed', () => document.querySelector('#feed-status')?.textContent === 'live');
  await until(page, 'the session at rest', () => document.querySelector('[data-testid=state-child]')?.textContent === 'ready');

  // Away, the page misses the session shown starting a turn that goes on, then more transitions of
  // another session than the daemon keeps: the shown one's are not resumed.
  await page.evaluate(() => (window as unknown as Inspector).troupeInspector.disconnect());
  const hanging = c.agent.request('session/prompt', { sessionId: shown, prompt: prompt('hang') });
  await c.until(() => c.updatesFor(shown, 'agent_message_chunk').length > 0, 'the turn going on');
  const moved = await waitFor('the child busy', async () => (await transitions(d, shown)).find((x) => x.machine === 'child' && x.state === 'busy'));
  for (let i = 0; i < 3; i++) await c.agent.request('session/prompt', { sessionId: other, prompt: prompt('ping') });
  const newest = Math.max(...(await transitions(d, other)).map((x) => x.n));
  assert.ok(Math.max(...(await transitions(d, shown)).map((x) => x.n)) <= newest - KEEP, 'the shown session moved only in what the feed cannot resume');
  const daemonSays = (await d.api('GET', `/v1/sessions/${shown}`)).json.machines as Record<string, string>;
  assert.equal(daemonSays.child, 'busy');
  await page.evaluate(() => (window as unknown as Inspector).troupeInspector.resume());
  await until(page, 'the gap noticed', () => /missed transitions/.test(document.querySelector('#gaps')?.textContent ?? ''));

  // The charts show the daemon's states, not those from before the gap (until 2026-12-07 they
  // stayed idle, no turn, ready, while the turn ran), and the timeline has the child's move.
  const want = ['session', 'turn', 'child'].map((m) => daemonSays[m] ?? '—');
  await page
    .waitForFunction((w) => ['session', 'turn', 'child'].every((m, i) => document.querySelector(`[data-testid=state-${m}]`)?.textContent === w[i]), want, { timeout: 15_000, polling: 50 })
    .catch(async (err: Error) => {
      const captions = await page.evaluate(() => ['session', 'turn', 'child'].map((m) => document.querySelector(`[data-testid=state-${m}]`)?.textContent));
      throw new Error(`the charts say ${JSON.stringify(captions)}, the daemon ${JSON.stringify(want)}: ${err.message.split('\n')[0]}`);
    });
  await until(page, `the timeline's row of the child's move into busy (#${moved.n})`, () => document.querySelector('#timeline li[data-lane=child][data-state="child:busy"]'));

  // The notice says the gap was made whole, and when; no longer red.
  await until(page, 'the notice mended', () => document.querySelector<HTMLElement>('#gaps .gap[data-kind=missed-transitions]')?.dataset.mended === 'true');
  const notice = await page.$eval('#gaps .gap[data-kind=missed-transitions]', (g) => ({ text: g.textContent ?? '', background: getComputedStyle(g).backgroundColor }));
  assert.match(notice.text, /^missed transitions after #\d+ \(feed resumed at #\d+\): read again at \d\d:\d\d:\d\d$/);
  assert.notEqual(notice.background, 'rgb(198, 40, 40)', 'not the red of an alarm');
  assert.equal(await page.$$eval('#timeline li.gap', (lis) => lis.filter((li) => /missed transitions/.test(li.textContent ?? '')).length), 1, 'the timeline keeps its row of the gap');

  await c.agent.notify('session/cancel', { sessionId: shown });
  assert.equal(((await hanging) as { stopReason: string }).stopReason, 'cancelled');

  // With no session shown, a gap is whole once the list is read again; the notice is red until then.
  await page.evaluate(() => void (location.hash = ''));
  await until(page, 'no session shown', () => document.querySelector<HTMLElement>('#detail-pane')?.hidden === true);
  await page.evaluate(() => (window as unknown as Inspector).troupeInspector.disconnect());
  for (let i = 0; i < 3; i++) await c.agent.request('session/prompt', { sessionId: other, prompt: prompt('ping') });
  await page.evaluate(() => (window as unknown as Inspector).troupeInspector.resume());
  await until(page, 'the second gap mended', () => {
    const g = document.querySelector<HTMLElement>('#gaps .gap[data-kind=missed-transitions]');
    return g?.dataset.times === '2' && g.dataset.mended === 'true';
  });
  assert.match((await page.textContent('#gaps .gap[data-kind=missed-transitions]')) ?? '', /\(2 times\): read again at \d\d:\d\d:\d\d$/);
  assert.deepEqual(errors, []);
});
