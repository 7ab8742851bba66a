// The timeline's list in a real headless Chromium against a real daemon, while a long session
// streams: each redraw changes only what changed (timeline-list.ts). The items of rows already
// listed are the same elements after it, never moved; a row that reads otherwise (a message's chunk
// count) is written again; the list is always the window of the rows, in order, once each; a row
// selected stays selected while rows come in.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { daemonWithSession } from '../../support/daemon.js';
import { headlessChromium, openInspector, until } from '../../support/inspector-page.js';

const prompt = (text: string) => [{ type: 'text' as const, text }];
type Marked = HTMLElement & { old?: boolean };
type Inspector = { troupeInspector: { app: { rows: { key: string; text: string }[]; travel?: number } }; removed: Node[] };

/** What the list holds against the page's rows: the differences found (none: the list is right). */
const wrong = (page: Page) =>
  page.evaluate(() => {
    const { rows, travel } = (window as unknown as Inspector).troupeInspector.app;
    const lis = [...document.querySelectorAll<HTMLElement>('#timeline > li[data-key]')];
    const keys = lis.map((li) => li.dataset.key!);
    const from = rows.findIndex((r) => r.key === keys[0]);
    const out: string[] = [];
    if (new Set(keys).size !== keys.length) out.push('a row listed twice');
    if (travel === undefined && from + keys.length !== rows.length) out.push(`the list ends at row ${from + keys.length} of ${rows.length}`);
    lis.forEach((li, k) => {
      const r = rows[from + k];
      if (r?.key !== li.dataset.key) out.push(`item ${k} is ${li.dataset.key}, row ${from + k} is ${r?.key}`);
      else if (li.querySelector('.what')?.textContent !== r.text) out.push(`item ${li.dataset.key} reads "${li.querySelector('.what')?.textContent}", its row "${r.text}"`);
      const selected = travel !== undefined && from + k === travel;
      if (li.classList.contains('selected') !== selected) out.push(`item ${li.dataset.key} ${selected ? 'not ' : ''}lit as selected`);
      if (li.classList.contains('future') !== (travel !== undefined && from + k > travel)) out.push(`item ${li.dataset.key} dimmed wrongly`);
    });
    if (document.querySelectorAll('#timeline li.selected').length !== (travel === undefined ? 0 : 1)) out.push('not one row lit as selected');
    return out.slice(0, 5);
  });

/** Marks the items listed now (and their text), and records every item taken out of the list from now on. */
const mark = (page: Page) =>
  page.evaluate(() => {
    const w = window as unknown as Inspector & { observer?: MutationObserver };
    for (const li of document.querySelectorAll<Marked>('#timeline > li[data-key]')) ((li.old = true), ((li.querySelector('.what') as Marked).old = true));
    w.removed = [];
    w.observer ??= new MutationObserver((ms) => ms.forEach((m) => w.removed.push(...m.removedNodes)));
    w.observer.observe(document.querySelector('#timeline')!, { childList: true });
  });

/** The items marked that are not the same elements now, of rows whose text did not change; and those moved. */
const replaced = (page: Page, unchanged: string[]) =>
  page.evaluate((keys) => {
    const w = window as unknown as Inspector;
    const items = [...document.querySelectorAll<Marked>('#timeline > li[data-key]')].filter((li) => keys.includes(li.dataset.key!));
    return {
      listed: items.length,
      replaced: items.filter((li) => !li.old || !(li.querySelector('.what') as Marked).old).map((li) => li.dataset.key),
      moved: w.removed.filter((n) => n.isConnected).length,
    };
  }, unchanged);

test('inspector: while a long session streams, the timeline list adds and updates only what changed, in order, its selection kept', { timeout: 180_000 }, async (t) => {
  // More rows than the list holds (thoughts and texts in turn: each a row), then replies whose texts
  // come in two chunks each, one every 10 ms: a row appears, then reads "(2 chunks)".
  const long = Array.from({ length: 1200 }, (_, i) => (i % 2 ? { text: `t${i} ` } : { thought: `h${i} ` }));
  const stream = Array.from({ length: 60 }, (_, i) => [{ thought: `h${i} ` }, { delay_ms: 10 }, { text: `a${i} ` }, { delay_ms: 10 }, { text: `b${i} ` }, { delay_ms: 10 }]).flat();
  const { d, c, sessionId } = await daemonWithSession(t, 'http', { script: { chunkDelayMs: 0, replies: [{ when: 'long', items: long }, { when: 'stream', items: stream }, [{ text: 'Done.' }]] } });
  const ask = async (text: string) => assert.equal(((await c.agent.request('session/prompt', { sessionId, prompt: prompt(text) })) as { stopReason: string }).stopReason, 'end_turn');
  await ask('a long one');
  const browser = await headlessChromium(t);
  const { page, errors } = await openInspector(browser, d, sessionId);
  // Until the page holds the whole log and what is rebuilt from it.
  const settled = async () => {
    const { lastSeq } = (await c.agent.request('_troupe/session_state', { sessionId })) as { lastSeq: number };
    await d.untilDurable(sessionId, lastSeq);
    // The rows are rebuilt from the page's events and replay at each redraw, which follows them within 250 ms.
    type App = { troupeInspector: { app: { replayFrom?: { lastSeq: number }; replayed: unknown[]; rows: { key: string; seq?: number }[] } } };
    await page.waitForFunction(
      (n) => {
        const { replayFrom, replayed, rows } = (window as unknown as App).troupeInspector.app;
        return (replayFrom?.lastSeq ?? 0) >= n && rows.some((r) => r.key === `r${replayed.length - 1}`) && rows.some((r) => r.key.startsWith('e') && r.seq! >= n);
      },
      lastSeq,
      { timeout: 60_000 },
    );
  };
  await settled();
  assert.deepEqual(await wrong(page), []);
  /**
   * The items listed now (marked, to tell them later from items written again), then a streamed reply
   * to `prompt` with the list checked while it streams (`what`) and once it settled.
   */
  const streamWatched = async (prompt: string, what: string): Promise<string[]> => {
    await mark(page);
    const listed = await page.$$eval('#timeline > li[data-key]', (lis) => lis.map((li) => (li as HTMLElement).dataset.key!));
    const streaming = ask(prompt);
    for (let k = 0; k < 10; k++) assert.deepEqual(await wrong(page), [], what);
    await streaming;
    await settled();
    assert.deepEqual(await wrong(page), []);
    return listed;
  };

  // Following the present: the new rows are added after the ones listed, which stay the same
  // elements, in place, save the earliest ones, which leave the window.
  const before = await streamWatched('stream it', 'while the reply streams');
  assert.ok(await page.$('#timeline li[data-type=agent_message_chunk] .what:text-matches("\\(2 chunks\\)")'), 'a message of two chunks reads so');
  const kept = await replaced(page, before);
  assert.ok(kept.listed > 0 && kept.listed < before.length, `the earliest rows left the window, the rest are listed (${kept.listed} of ${before.length})`);
  assert.deepEqual(kept.replaced, [], 'the items of rows already listed are the same elements, not written again');
  assert.equal(kept.moved, 0, 'no item was moved');

  // A row selected stays the one selected, and lit, while rows come in (the window is around it).
  await page.locator('#timeline li[data-type=user_message]').last().click();
  const chosen = await page.$eval('#timeline li.selected', (li) => (li as HTMLElement).dataset.key!);
  const around = await streamWatched('stream it again', 'while the reply streams, a row selected');
  assert.equal(await page.$eval('#timeline li.selected', (li) => (li as HTMLElement).dataset.key!), chosen);
  const still = await replaced(page, around);
  assert.deepEqual(still.replaced, [], 'the items listed around the selection are the same elements');
  assert.equal(still.moved, 0, 'no item was moved');
  assert.deepEqual(errors, []);
});
