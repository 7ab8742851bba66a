// The page's live states in a real headless Chromium against a real daemon: after a kill -9 of the
// child mid-turn, once the new child serves the session, the charts and the session list show it
// idle with no turn (not the dead process's running turn); after an idle stop, no session or turn
// machine is lit (none runs). (The woken child's machines: test/integration/daemon/daemon-machine-states.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page, Route } from 'playwright-core';
import { daemonWithSession, waitFor, type Daemon } from '../../support/daemon.js';
import { headlessChromium, openInspector, until } from '../../support/inspector-page.js';

const script = { replies: [{ when: 'hang', items: [{ text: 'partial' }, { hang: true }] }, [{ text: 'pong' }]] };
const prompt = (text: string) => [{ type: 'text' as const, text }];

type Transition = { n: number; machine: string; state: string; event: string };
const transitions = async (d: Daemon, id: string): Promise<Transition[]> => (await d.api('GET', `/v1/sessions/${id}/transitions`)).json.transitions;

/** Waits until the page has received the daemon's transition number `n` on its live feed. */
const received = (page: Page, n: number) =>
  page.waitForFunction((k) => (window as unknown as { troupeInspector: { received: number[] } }).troupeInspector.received.includes(k), n, { timeout: 15_000 });

const captions = (page: Page) => page.evaluate(() => ['session', 'turn', 'child'].map((m) => document.querySelector(`[data-testid=state-${m}]`)?.textContent));
/** Waits until the list's state cell `sel` reads `want`, within a moment of the feed (the rows it moved are redrawn within 50 ms). */
const stateCell = (page: Page, sel: string, want: RegExp) =>
  page.waitForFunction(([s, w]) => new RegExp(w).test(document.querySelector(s)?.textContent ?? ''), [sel, want.source] as const, { timeout: 15_000 }).catch(async (err) => {
    throw new Error(`${(err as Error).message.split('\n')[0]}; the list says ${JSON.stringify(await page.textContent(sel))}, not ${want}`);
  });
const lit = (page: Page) => page.$$eval('.chart .node.active:not(.compound)', (ns) => ns.map((n) => `${n.closest('svg')!.dataset.machine}:${(n as SVGElement).dataset.state}`).sort());

test('inspector: after a kill -9 mid-turn and the restart, the session is shown idle with no turn; failed, with its restart; revived, at rest', { timeout: 120_000 }, async (t) => {
  const { d, c, sessionId } = await daemonWithSession(t, 'http', { script, args: ['--restart-intensity', '1', '--restart-period-ms', '60000'] });
  const browser = await headlessChromium(t);
  const { page, errors } = await openInspector(browser, d, sessionId);
  const victim = c.agent.request('session/prompt', { sessionId, prompt: prompt('hang') });
  await c.until(() => c.updatesFor(sessionId, 'agent_message_chunk').length > 0, 'the hanging turn');
  await d.untilDurable(sessionId, c.updatesFor(sessionId, 'agent_message_chunk').at(-1)._meta.troupe.seq);
  await until(page, 'the turn running', () => document.querySelector('[data-testid=state-session]')?.textContent === 'running');
  const row = `#sessions tr[data-session="${sessionId}"] [data-testid=session-state]`;
  // The list follows the feed: its row shows the running turn before the crash (so that what it
  // shows after is the restart's, not what it said before the prompt).
  await stateCell(page, row, /^running \/ \S+ · child busy$/);
  const pid = (await d.api('GET', `/v1/sessions/${sessionId}`)).json.child.pid as number;
  process.kill(pid, 'SIGKILL');
  await assert.rejects(victim, (e: any) => e.data?.code === 'agent_crashed');
  const ready = await waitFor('the new child ready', async () => {
    const all = await transitions(d, sessionId);
    const exit = all.findIndex((x) => x.machine === 'child' && x.event === 'EXITED');
    return exit >= 0 && all.slice(exit).find((x) => x.machine === 'child' && x.state === 'ready');
  });
  // The new process's session machine reported its start before the child was ready.
  await received(page, ready.n);
  assert.deepEqual(await captions(page), ['idle', '—', 'ready']);
  assert.deepEqual(await lit(page), ['child:ready', 'session:idle'], 'no state of the dead turn is lit');
  await stateCell(page, row, /^idle · child ready$/);
  // The restart is counted by the daemon: the row has it from the list's next read.
  await page.waitForFunction((sel) => document.querySelector(sel)?.textContent === '1', `#sessions tr[data-session="${sessionId}"] [data-testid=session-restarts]`, { timeout: 15_000 });
  assert.equal(await page.textContent(row), 'idle · child ready');
  // A page opened now has seen no transition: its list has the daemon's states from the start.
  const { page: fresh } = await openInspector(browser, d);
  await fresh.waitForSelector(row, { timeout: 15_000 });
  assert.equal(await fresh.textContent(row), 'idle · child ready');

  // One crash more than the intensity allows: the session fails, and once released (no client)
  // its row still counts the restart.
  process.kill((await d.api('GET', `/v1/sessions/${sessionId}`)).json.child.pid, 'SIGKILL');
  await waitFor('the session failed', async () => (await d.api('GET', `/v1/sessions/${sessionId}`)).json.status === 'failed');
  c.close();
  const cells = (sel: string) => fresh.textContent(`#sessions tr[data-session="${sessionId}"] [data-testid=${sel}]`);
  await fresh.waitForFunction((sel) => document.querySelector(sel)?.textContent === '—', `#sessions tr[data-session="${sessionId}"] [data-testid=session-pid]`, { timeout: 15_000 });
  assert.deepEqual([await fresh.textContent(`#sessions tr[data-session="${sessionId}"] .pill`), await cells('session-restarts'), await cells('session-state')], ['failed', '1', '— · child failed']);

  // Revived, it is at rest as an idle-stopped session no child holds: the revive reaches the pages as
  // its child machine's transition, and the list is read again. Until 2026-12-07 no transition came:
  // both pages drew it failed until its next message started it.
  assert.equal((await d.api('POST', `/v1/sessions/${sessionId}/revive`, {})).status, 200);
  const revived = (await transitions(d, sessionId)).at(-1)!;
  assert.deepEqual([revived.machine, revived.state, revived.event], ['child', 'idleStopped', 'REVIVE']);
  await received(page, revived.n);
  assert.deepEqual(await captions(page), ['—', '—', 'idleStopped']);
  assert.deepEqual(await lit(page), ['child:idleStopped']);
  await received(fresh, revived.n);
  await fresh.waitForFunction((sel) => document.querySelector(sel)?.textContent === 'stored', `#sessions tr[data-session="${sessionId}"] .pill`, { timeout: 15_000 });
  assert.deepEqual([await cells('session-restarts'), await cells('session-state')], ['—', '—']);
  assert.deepEqual(errors, []);
});

test('inspector: an idle-stopped session lights no session or turn state', { timeout: 120_000 }, async (t) => {
  const { d, c, sessionId } = await daemonWithSession(t, 'http', { script, args: ['--idle-ms', '300'] });
  const browser = await headlessChromium(t);
  const { page, errors } = await openInspector(browser, d, sessionId);
  assert.equal(((await c.agent.request('session/prompt', { sessionId, prompt: prompt('ping') })) as { stopReason: string }).stopReason, 'end_turn');
  // (Stopped idle before the prompt too, perhaps, while the page opened: the last stop is the one.)
  const stopped = await waitFor('the idle stop', async () => {
    const last = (await transitions(d, sessionId)).filter((x) => x.machine === 'child').at(-1);
    return last?.state === 'idleStopped' && last;
  });
  await received(page, stopped.n);
  assert.deepEqual(await captions(page), ['—', '—', 'idleStopped'], "not the stopped process's idle and done");
  assert.deepEqual(await lit(page), ['child:idleStopped']);
  await stateCell(page, `#sessions tr[data-session="${sessionId}"] [data-testid=session-state]`, /^— · child idleStopped$/);
  assert.deepEqual(errors, []);
});

test('inspector: the list follows the live feed between its reads from the daemon', { timeout: 120_000 }, async (t) => {
  const { d, c, sessionId } = await daemonWithSession(t, 'http', { script });
  const browser = await headlessChromium(t);
  const { page, errors } = await openInspector(browser, d);
  const row = `#sessions tr[data-session="${sessionId}"] [data-testid=session-state]`;
  await stateCell(page, row, /^idle · child ready$/);
  // From here the list's reads are held unanswered: only the feed can move the row.
  const held: Route[] = [];
  let hold = true;
  await page.route((url) => url.pathname === '/v1/sessions', (route) => void (hold ? held.push(route) : route.continue()));
  assert.equal(((await c.agent.request('session/prompt', { sessionId, prompt: prompt('ping') })) as { stopReason: string }).stopReason, 'end_turn');
  const last = (await transitions(d, sessionId)).at(-1)!;
  await received(page, last.n);
  await stateCell(page, row, /^idle \/ done · child ready$/);
  hold = false;
  await Promise.all(held.map((r) => r.continue()));
  assert.deepEqual(errors, []);
});
