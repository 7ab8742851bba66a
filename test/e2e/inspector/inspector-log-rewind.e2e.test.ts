// The page in a real headless Chromium against a real daemon, showing a session whose log is then cut
// short (a damaged tail cut, as after a machine crash) and opened again: the daemon ends the page's
// log feed with `replay_gap` `{lastSeq}`, and the session's next events take the seqs the log lost.
// The page must show exactly what the log holds now: until 2026-12-07 it read the log again from its
// start skipping the seqs it had, so it kept showing the lost turns and hid the new one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { daemonWithSession, waitFor, type AcpClient, type Daemon } from '../../support/daemon.js';
import { headlessChromium, openInspector, showSession, until } from '../../support/inspector-page.js';
import { cutAfterCreation } from '../../support/store/store-fixtures.js';
import { readLogFile, sessionLogPath, sessionsDir } from '../../../src/store/index.js';
import { buildRows, statesThrough, type Row } from '../../../src/inspector-ui/timeline.js';
import type { LogEvent, ReplayedTransition } from '../../../src/inspector-ui/types.js';

const script = { replies: [{ when: 'loses', items: [{ text: 'words the log loses' }] }, { when: 'keeps', items: [{ text: 'words' }, { text: 'it keeps' }] }] };
const prompt = async (c: AcpClient, sessionId: string, text: string) =>
  assert.equal((await c.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text }] })).stopReason, 'end_turn');

/** A row of the timeline as the test compares it: its lane, seq, machine state and text. */
const line = (r: { lane?: string; seq?: string | number; state?: string; text: string }) => `${r.lane} #${String(r.seq)} ${r.state ?? ''} ${r.text}`;
const rowLine = (r: Row) => line({ lane: r.lane, seq: r.seq, ...(r.transition ? { state: `${r.transition.machine}:${r.transition.state}` } : {}), text: r.text });

/**
 * The log and session/turn rows the page should show for the log as it is now: its events and the
 * daemon's whole replay of them, put together by the page's own rule (the child's live transitions
 * and the notices are the daemon's and the page's, not the log's: left out).
 */
async function expectedRows(d: Daemon, id: string): Promise<Row[]> {
  const { events } = await readLogFile(sessionLogPath(sessionsDir(d.home), id));
  const replay = (await d.api('GET', `/v1/sessions/${id}/replay`)).json as { lastSeq: number; transitions: ReplayedTransition[] };
  const held = events.filter((e) => e.seq <= replay.lastSeq) as unknown as LogEvent[];
  return buildRows(held, replay.transitions, [], []);
}

/** The log and session/turn rows the page's timeline lists. */
const shownRows = (page: Page) =>
  page.$$eval('#timeline li[data-lane]', (lis) =>
    lis
      .map((li) => li as HTMLElement)
      .filter((li) => li.dataset.lane === 'log' || li.dataset.lane === 'session' || li.dataset.lane === 'turn')
      .map((li) => ({ lane: li.dataset.lane, seq: li.dataset.seq, state: li.dataset.state, text: li.querySelector('.what')?.textContent ?? '' })),
  );

/** Waits (bounded) until the page lists the rows of the log as it is now; fails saying what differs. */
async function showsTheLog(page: Page, d: Daemon, id: string, what: string): Promise<Row[]> {
  let last: { shown: string[]; want: string[] } = { shown: [], want: [] };
  await waitFor(what, async () => {
    const want = await expectedRows(d, id);
    last = { shown: (await shownRows(page)).map(line), want: want.map(rowLine) };
    return JSON.stringify(last.shown) === JSON.stringify(last.want) && want;
  }).catch(() => assert.deepEqual(last.shown, last.want, `${what}: the page's rows are not the log's`));
  return expectedRows(d, id);
}

/** A session that ran two turns and rests, shown in the page once the page has caught up with its log. */
async function shownSession(t: { after(fn: () => unknown): void }) {
  const { d, c, sessionId: id, cwd } = await daemonWithSession(t, 'http', { script });
  await prompt(c, id, 'a turn the log loses');
  await prompt(c, id, 'another turn it loses');
  await c.agent.request('session/close', { sessionId: id });
  const path = sessionLogPath(sessionsDir(d.home), id);
  const before = (await readLogFile(path)).events as unknown as LogEvent[];

  const browser = await headlessChromium(t);
  const { page, errors } = await openInspector(browser, d);
  // The page asks for the replay again once the log's events have come (what follows the replay
  // it has): that ask is awaited, so that the page asks nothing more of itself after the cut.
  const caughtUp = page.waitForResponse((r) => r.url().includes(`/v1/sessions/${id}/replay?since=`) && r.url().endsWith(`&after=${before.at(-1)!.seq}`), { timeout: 15_000 });
  await showSession(page, id);
  await caughtUp;
  const lost = await showsTheLog(page, d, id, 'the whole log before the cut');
  assert.ok(lost.some((r) => r.text === 'prompt "another turn it loses"'));
  assert.ok(lost.some((r) => r.lane === 'turn'), 'the lost turns are shown, with their turn machine');
  return { d, c, id, cwd, path, before, page, errors, lost };
}

test('inspector: a session log found cut short while shown: the page drops what the log lost, shows the new events that take its seqs, and rebuilds the machines from the log as it is', { timeout: 120_000 }, async (t) => {
  const { d, c, id, cwd, path, before, page, errors, lost } = await shownSession(t);
  // Looked at (time travel): a moment of the second turn, which the log loses.
  const lostRow = lost.findLast((r) => r.lane === 'turn')!;
  await page.locator(`#timeline li[data-lane=turn][data-seq="${lostRow.seq}"]`).last().click();
  await until(page, 'time travel', () => !(document.querySelector('#travel') as HTMLElement).hidden);

  // Cut while the session rests, then opened again (its process says the log holds seq 1 only):
  // the page's feed, which was sent seqs 1..N, ends with replay_gap {lastSeq: 1}.
  cutAfterCreation(path);
  await c.agent.request('session/resume', { sessionId: id, cwd, mcpServers: [] });
  // At once, before the session writes anything new: only what the log holds, its replay included.
  const cut = await showsTheLog(page, d, id, 'the log as it is once cut, before the session writes on');
  assert.deepEqual(
    cut.filter((r) => r.lane === 'log').map((r) => r.seq),
    [1],
  );
  assert.equal(await page.$eval('#travel', (e) => (e as HTMLElement).hidden), true, 'a moment the log lost is not shown any more');
  assert.equal(await page.$$eval('#timeline li.selected, #timeline li.future', (lis) => lis.length), 0, 'no row selected, none dimmed');
  await prompt(c, id, 'a turn it keeps');
  const after = (await readLogFile(path)).events as unknown as LogEvent[];
  assert.equal(after[0]!.seq, 1);
  assert.ok(after.at(-1)!.seq < before.at(-1)!.seq, 'the new turn reuses some of the lost seqs, not all: they would hide it whole');
  assert.notDeepEqual(
    after.map((e) => e.type),
    before.slice(0, after.length).map((e) => e.type),
  );

  // Until 2026-12-07 the page kept the two lost turns (and their transitions) and hid this one.
  const now = await showsTheLog(page, d, id, 'the log as it is after the cut');
  assert.ok(now.some((r) => r.text === 'prompt "a turn it keeps"'));
  assert.ok(!now.some((r) => /loses/.test(r.text)));
  const seqs = (await shownRows(page)).filter((r) => r.lane === 'log').map((r) => Number(r.seq));
  assert.deepEqual(seqs, [...new Set(seqs)].sort((a, b) => a - b), 'each seq once, in order');
  const notices = await page.$$eval('#gaps .gap', (gs) => gs.map((g) => g.textContent));
  assert.deepEqual(notices, ['the log was found cut short after seq 1 (a damaged tail cut, a machine crash): the events after it are gone, and new events take their seqs']);

  // The machines at the new turn's last transition (time travel): the turn the log holds now.
  const lastTurn = now.findLastIndex((r) => r.lane === 'turn');
  const row = now[lastTurn]!;
  await page.locator(`#timeline li[data-lane=turn][data-seq="${row.seq}"][data-state="turn:${row.transition!.state}"]`).last().click();
  const want = statesThrough(now, lastTurn);
  const turnId = after.findLast((e) => e.type === 'turn_started' && e.seq <= row.seq!)!.turnId;
  assert.deepEqual(
    await page.evaluate(() => ['session', 'turn', 'turn-id'].map((k) => document.querySelector(`[data-testid=${k.includes('-') ? k : `state-${k}`}]`)?.textContent)),
    [want.session, want.turn ?? '—', want.turn ? turnId : ''],
  );
  assert.ok(!before.some((e) => e.type === 'turn_started' && e.turnId === turnId), 'a turn the log holds now, not a lost one');
  assert.deepEqual(errors, []);
});

test('inspector: a session log found cut short while the log feed was away (its replay_gap missed): the reconnect, refused its cursor, goes on from where the log ends now', { timeout: 120_000 }, async (t) => {
  const { d, c, id, cwd, path, page, errors } = await shownSession(t);
  type Shown = { troupeInspector: { app: { log: { pause(): void; resume(): void } } } };
  // As a network blip would: the feed's connection drops, its cursor (the last seq) kept.
  await page.evaluate(() => (window as unknown as Shown).troupeInspector.app.log.pause());
  cutAfterCreation(path);
  await c.agent.request('session/resume', { sessionId: id, cwd, mcpServers: [] });
  await waitFor('the daemon to know the log holds seq 1 only', async () => ((await d.api('GET', `/v1/sessions/${id}`)).json as { lastSeq: number }).lastSeq === 1);
  await page.evaluate(() => (window as unknown as Shown).troupeInspector.app.log.resume());
  // Until 2026-12-07 the page said `the log feed was refused (400)` and kept the lost turns.
  await showsTheLog(page, d, id, 'the log as it is once cut');
  await prompt(c, id, 'a turn it keeps');
  const now = await showsTheLog(page, d, id, 'the log as it is after the cut');
  assert.ok(now.some((r) => r.text === 'prompt "a turn it keeps"'));
  const notices = await page.$$eval('#gaps .gap', (gs) => gs.map((g) => g.textContent));
  assert.deepEqual(notices, ['the log was found cut short after seq 1 (a damaged tail cut, a machine crash): the events after it are gone, and new events take their seqs']);
  assert.deepEqual(errors, []);
});

test("inspector: a session log cut short and written past the page's cursor again while the log feed was away: the feed, back with the id of an event the log no longer has, reads the log again from its start", { timeout: 120_000 }, async (t) => {
  const { d, c, id, cwd, path, before, page, errors } = await shownSession(t);
  type Shown = { troupeInspector: { app: { log: { pause(): void; resume(): void } } } };
  await page.evaluate(() => (window as unknown as Shown).troupeInspector.app.log.pause());
  cutAfterCreation(path);
  await c.agent.request('session/resume', { sessionId: id, cwd, mcpServers: [] });
  // The session writes on past the seq the page had: its cursor is not beyond the log any more.
  while ((await readLogFile(path)).events.at(-1)!.seq < before.at(-1)!.seq) await prompt(c, id, 'a turn it keeps');
  await page.evaluate(() => (window as unknown as Shown).troupeInspector.app.log.resume());
  // Until 2026-12-07 (ids were bare seqs) the daemon served the events after the page's cursor: the
  // page kept the lost turns, and showed only the tail of the new ones.
  const now = await showsTheLog(page, d, id, 'the log as it is now');
  assert.ok(now.some((r) => r.text === 'prompt "a turn it keeps"'));
  assert.ok(!now.some((r) => /loses/.test(r.text)));
  const notices = await page.$$eval('#gaps .gap', (gs) => gs.map((g) => g.textContent));
  assert.deepEqual(notices, ['the log holds other events than those shown (cut short and written again while the log feed was away): it is read again from its start']);
  assert.deepEqual(errors, []);
});
