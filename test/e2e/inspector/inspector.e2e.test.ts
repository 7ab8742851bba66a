// The inspector in a real headless Chromium against a real daemon, with a real session driven
// through the SDK's HTTP client: a prompt, a tool call with a permission, a steer, a cancel, a
// kill -9 of the child and its restart. The page must show each state change live, the timeline
// must hold each of those events, and selecting an earlier row must show the earlier states.
// Screenshots go to test-artifacts/inspector/.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type Page, type Route } from 'playwright-core';
import { Daemon, daemonWithSession, tempDir, waitFor } from '../../support/daemon.js';
import { CHROMIUM, CHROMIUM_ARGS as ARGS, headlessChromium, openInspector, until } from '../../support/inspector-page.js';

const ARTIFACTS = resolve('test-artifacts/inspector');
/** Transitions the daemon keeps for resuming the page's feed: small, so that a gap can be made. */
const KEEP = 12;

const script = {
  chunkDelayMs: 0,
  replies: [
    { when: 'hello', items: [{ text: 'Hi there.' }] },
    { when: 'write', items: [{ text: 'Writing.' }, { tool_call: { name: 'write_file', input: { path: 'a.txt', content: 'hi\n' } } }] },
    { when: 'slow', items: [{ delay_ms: 1500 }, { text: 'working' }] },
    { when: 'tabs', items: [{ text: 'Using tabs.' }] },
    { when: 'hang', items: [{ text: 'partial' }, { hang: true }] },
    [{ text: 'Done.' }],
  ],
};

const prompt = (text: string) => [{ type: 'text' as const, text }];

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

// Two tests at a time: each has a daemon and a browser of its own, and the longest spends most of
// its time on a reply streamed for 15 s (8 s of CPU in 18 s).
describe('the inspector in a browser', { concurrency: 2 }, () => {
  test('inspector: live states, timeline of every kind of event, time travel, resume and gaps', { timeout: 120_000 }, async (t) => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const d = await Daemon.start({ script, env: { TROUPE_INSPECTOR_KEEP: String(KEEP) } });
    t.after(() => d.stop());
    const browser: Browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
    t.after(() => browser.close());

    // Without the cookie or the token the page and its feeds are refused.
    for (const path of ['/inspect/', '/inspect/ui/main.js', '/v1/inspect/transitions', '/v1/machines']) {
      assert.equal((await fetch(d.url + path)).status, 401, `${path} without credentials`);
      assert.equal((await fetch(d.url + path, { headers: { Authorization: 'Bearer not-the-token' } })).status, 403, `${path} with a wrong token`);
    }
    const anonymous = await browser.newPage();
    assert.equal((await anonymous.goto(`${d.url}/inspect/`))?.status(), 401, 'a browser without the cookie is refused');
    await anonymous.close();

    // The session, through the SDK's HTTP client. Permission answers wait for the test.
    let grant: (() => void) | undefined;
    const c = d.connect('http', {
      permission: () => new Promise((r) => (grant = () => r({ outcome: { outcome: 'selected', optionId: 'allow_once' } }))),
    });
    t.after(() => c.close());
    await c.init();
    const cwd = tempDir();
    const sessionId = (await c.agent.request('session/new', { cwd, mcpServers: [] })).sessionId as string;
    const run = (text: string) => c.agent.request('session/prompt', { sessionId, prompt: prompt(text) }) as Promise<{ stopReason: string }>;

    // Log in the way `troupe inspect --url` does: a one-time code, an HttpOnly cookie, /inspect/.
    const login = (await d.api('POST', '/v1/login-codes')).json as { url: string };
    assert.match(login.url, /\/v1\/login\?code=/);
    const page = await browser.newPage({ viewport: { width: 1600, height: 1200 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    // Console errors include refused loads and Content-Security-Policy violations.
    page.on('console', (m) => m.type() === 'error' && errors.push(`console: ${m.text()}`));
    const landed = await page.goto(login.url);
    assert.equal(new URL(page.url()).pathname, '/inspect/');
    assert.equal(landed?.status(), 200);
    const cookies = await page.context().cookies();
    assert.ok(cookies.some((k) => k.name === 'troupe_session' && k.httpOnly), 'the login cookie is HttpOnly');
    const reused = await (await browser.newPage()).goto(login.url);
    assert.equal(reused?.status(), 403, 'a login code works once');

    // The session list is live: the session appears and is selected by a click.
    await until(page, 'the session in the list', () => document.querySelector(`#sessions tr[data-session]`));
    await page.click(`#sessions tr[data-session="${sessionId}"]`);
    await until(page, 'the charts', () => document.querySelectorAll('.chart svg .node').length > 20);
    const pid0 = (await d.api('GET', `/v1/sessions/${sessionId}`)).json.child.pid as number;
    await until(page, 'the child pid in the list', () => document.querySelector('[data-testid=session-pid]')?.textContent !== '—');
    assert.equal(await page.textContent(`#sessions tr[data-session="${sessionId}"] [data-testid=session-pid]`), String(pid0));

    // Record every state the page shows and every event name it animates, from now on: what the daemon
    // recorded before (the session machine's start, the child's ready) is the page's first picture.
    const watchedFrom = ((await d.api('GET', `/v1/sessions/${sessionId}/transitions`)).json.transitions as { n: number }[]).at(-1)?.n ?? 0;
    await page.evaluate(() => {
      const w = window as unknown as { shown: string[]; toasts: string[] };
      w.shown = [];
      w.toasts = [];
      for (const m of ['session', 'turn', 'child']) {
        const el = document.querySelector(`[data-testid=state-${m}]`)!;
        new MutationObserver(() => w.shown.push(`${m}:${el.textContent}`)).observe(el, { childList: true, characterData: true, subtree: true });
      }
      new MutationObserver((records) => {
        for (const r of records) for (const n of r.addedNodes) if (n instanceof SVGTextElement && n.classList.contains('toast')) w.toasts.push(n.textContent ?? '');
      }).observe(document.querySelector('#charts')!, { childList: true, subtree: true });
    });

    // 1. A prompt.
    assert.equal((await run('hello')).stopReason, 'end_turn');
    // 2. A tool call that asks for permission: the page lights the permission state while it waits.
    const writing = run('write the file');
    await c.until(() => grant !== undefined, 'the permission request');
    await until(page, 'awaitingPermission lit', () => document.querySelector('.chart[data-machine=turn] .node.active[data-state="tools.awaitingPermission"]'));
    const turnShown = await page.textContent('[data-testid=state-turn]');
    if (turnShown !== 'tools.awaitingPermission') {
      // Seen once (a `done` here), never reproduced: say what the page and the daemon held.
      const pageHeld = await page.evaluate(() => {
        const w = window as unknown as { shown: string[]; troupeInspector: { app: { live: { machine: string }[] } } };
        return { live: w.troupeInspector.app.live.filter((t) => t.machine !== 'child').slice(-8), shown: w.shown.slice(-12) };
      });
      const daemonHeld = ((await d.api('GET', `/v1/sessions/${sessionId}/transitions`)).json.transitions as unknown[]).slice(-8);
      assert.fail(`state-turn shows ${turnShown}, not tools.awaitingPermission; the page held ${JSON.stringify(pageHeld)}; the daemon ${JSON.stringify(daemonHeld)}`);
    }
    await until(page, 'the permission request in the live timeline', () => document.querySelector('#timeline li[data-type=permission_requested]'));
    await shot(page, 'permission');
    grant!();
    assert.equal((await writing).stopReason, 'end_turn');
    // 3. A steer while the model works.
    const slow = run('slow one');
    // (The client is not sent its own prompt back: the running turn is asked for.)
    const turnId = await waitFor('the slow turn', async () => {
      const state: any = await c.agent.request('_troupe/session_state' as never, { sessionId } as never);
      return state.session === 'running' && (state.turnId as string);
    });
    await c.agent.request('_troupe/steer', { sessionId, expectedTurnId: turnId, prompt: prompt('tabs please') });
    assert.equal((await slow).stopReason, 'end_turn');
    // 4. A cancel.
    const cancelled = run('hang on');
    await c.until(() => c.updatesFor(sessionId, 'agent_message_chunk').some((u) => u.content.text === 'partial'), 'the hanging turn');
    await c.agent.notify('session/cancel', { sessionId });
    assert.equal((await cancelled).stopReason, 'cancelled');
    // 5. kill -9 of the child mid-turn, then the restart.
    const victim = run('hang again');
    await c.until(() => c.updatesFor(sessionId, 'agent_message_chunk').filter((u) => u.content.text === 'partial').length === 2, 'the second hanging turn');
    // Killed once the turn's start and its partial reply are durable, so that the restarted child finds
    // the turn open and ends it as crashed: under load the kill could come before the log's write.
    await d.untilDurable(sessionId, c.updatesFor(sessionId, 'agent_message_chunk').filter((u) => u.content.text === 'partial').at(-1)._meta.troupe.seq);
    process.kill(pid0, 'SIGKILL');
    await assert.rejects(victim, (e: any) => e.data?.code === 'agent_crashed');
    assert.equal((await run('hello again')).stopReason, 'end_turn', 'the session works in its new child');
    const after = (await d.api('GET', `/v1/sessions/${sessionId}`)).json;
    assert.notEqual(after.child.pid, pid0);
    await until(page, 'the restart count in the list', () => document.querySelector('[data-testid=session-restarts]')?.textContent === '1');
    assert.equal(await page.textContent(`#sessions tr[data-session="${sessionId}"] [data-testid=session-pid]`), String(after.child.pid));

    // Every live transition the daemon recorded since was shown, in order, for each machine.
    const all = (await d.api('GET', `/v1/sessions/${sessionId}/transitions`)).json.transitions as { n: number; machine: string; state: string; event: string }[];
    const live = all.filter((x) => x.n > watchedFrom);
    await until(page, 'the last state shown', () => (window as unknown as { shown: string[] }).shown.length > 0);
    await page.waitForFunction((n) => (window as unknown as { troupeInspector: { app: { liveN: number } } }).troupeInspector.app.liveN >= n, all.at(-1)!.n);
    const shown = await page.evaluate(() => (window as unknown as { shown: string[] }).shown);
    for (const m of ['session', 'turn', 'child']) {
      const want = live.filter((x) => x.machine === m).map((x) => x.state).filter((s, i, a) => i === 0 || s !== a[i - 1]);
      const seen = shown.filter((s) => s.startsWith(`${m}:`)).map((s) => s.slice(m.length + 1)).filter((s, i, a) => i === 0 || s !== a[i - 1]);
      let k = 0;
      for (const s of seen) if (s === want[k]) k++;
      assert.equal(k, want.length, `${m}: every state change shown in order (wanted ${want.join(' → ')}, saw ${seen.join(' → ')})`);
    }
    for (const m of ['child']) assert.ok(shown.includes(`${m}:crashed`) || shown.includes(`${m}:backoff`), 'the crash was shown');
    const toasts = await page.evaluate(() => (window as unknown as { toasts: string[] }).toasts);
    for (const ev of ['PROMPT', 'done: modelStep', 'done: decideTool', 'done: askPermission', 'CANCEL', 'EXITED']) assert.ok(toasts.includes(ev), `the transition on ${ev} was animated (${[...new Set(toasts)].join(', ')})`);

    // The timeline holds each kind of event, from the log and from the supervisor.
    await until(page, 'the crash in the timeline', () => document.querySelector('#timeline li[data-kind=crash][data-type=turn_completed]'));
    const has = (sel: string) => page.$eval('#timeline', (el, s) => el.querySelectorAll(s).length, sel);
    for (const [sel, what] of [
      ['li[data-type=user_message]', 'prompts'],
      ['li[data-type=tool_call_started]', 'tool calls'],
      ['li[data-type=permission_requested]', 'permission requests'],
      ['li[data-type=permission_resolved]', 'permission answers'],
      ['li[data-type=steer_received]', 'steers'],
      ['li[data-type=steer_applied]', 'steers applied'],
      ['li[data-kind=cancel][data-type=turn_completed]', 'the cancel'],
      ['li[data-kind=crash][data-type=turn_completed]', 'the crash in the log'],
      ['li[data-kind=crash][data-lane=child]', 'the crash of the child'],
      ['li[data-kind=restart][data-lane=child]', 'the restart'],
      ['li[data-lane=turn][data-state="turn:tools.awaitingPermission"]', 'turn transitions'],
    ] as const) assert.ok((await has(sel)) > 0, `the timeline shows ${what}`);
    assert.equal(await has('li[data-type=user_message]'), 6);
    await shot(page, 'timeline');

    // Time travel: the row where the permission was asked shows the machines as they were then.
    await page.click('#timeline li[data-lane=turn][data-state="turn:tools.awaitingPermission"]');
    assert.equal(await page.textContent('[data-testid=state-turn]'), 'tools.awaitingPermission');
    assert.equal(await page.textContent('[data-testid=state-session]'), 'running');
    assert.ok(await page.$('.chart[data-machine=turn] .node.active[data-state="tools.awaitingPermission"]'));
    assert.match((await page.textContent('[data-testid=cause]')) ?? '', /"type": "permission_requested"/, 'the transition shows its cause and payload');
    assert.equal(await page.textContent('[data-testid=state-child]'), 'busy');
    assert.equal(await page.textContent('[data-testid=event-child]'), 'last: BUSY', 'the last event as of then');
    const permissionTurn = await page.$eval('#timeline li[data-type=permission_requested]', (li) => li.dataset.seq);
    const writeTurn = (await d.api('GET', `/v1/sessions/${sessionId}/replay`)).json.transitions.find((x: any) => x.cause.seq === Number(permissionTurn)).cause.turnId;
    assert.equal(await page.textContent('[data-testid=turn-id]'), writeTurn, 'the turn chart names the turn of that moment');
    assert.deepEqual(await page.$$eval('.edge.fire', (es) => es.map((e) => `${e.closest('svg')!.dataset.machine}:${(e as SVGElement).dataset.event}`)), ['turn:done: decideTool']);
    await shot(page, 'time-travel');
    // Earlier still: the first prompt, as it arrived (idle), then as its turn began.
    await page.click('#timeline li[data-type=user_message]');
    assert.equal(await page.textContent('[data-testid=state-session]'), 'idle');
    assert.equal(await page.textContent('[data-testid=state-turn]'), '—');
    await page.click('#timeline li[data-lane=session][data-state="session:running"]');
    assert.equal(await page.textContent('[data-testid=state-session]'), 'running');
    assert.equal(await page.textContent('[data-testid=state-turn]'), 'preflight');
    assert.ok(await page.$('.chart[data-machine=session] .node.active[data-state="running"]'));
    await page.click('[data-testid=back-live]');
    assert.equal(await page.textContent('[data-testid=state-session]'), 'idle');

    // The feed resumes after a reconnect from its last id, with nothing missed or repeated…
    const received = () => page.evaluate(() => (window as unknown as { troupeInspector: { received: number[] } }).troupeInspector.received.slice());
    await page.evaluate(() => (window as unknown as { troupeInspector: { disconnect(): void } }).troupeInspector.disconnect());
    const before = await received();
    assert.equal((await run('hello once more')).stopReason, 'end_turn');
    await page.evaluate(() => (window as unknown as { troupeInspector: { resume(): void } }).troupeInspector.resume());
    const total = () => fetch(`${d.url}/v1/sessions/${sessionId}/transitions`, { headers: d.headers }).then((r) => r.json()).then((j: any) => j.transitions.length as number);
    const expected = await total();
    await page.waitForFunction((n) => (window as unknown as { troupeInspector: { app: { live: unknown[] } } }).troupeInspector.app.live.length >= n, expected);
    const resumed = (await received()).slice(before.length);
    assert.ok(resumed.length > 0 && resumed[0] === before.at(-1)! + 1, 'resumed right after the last id seen');
    assert.ok(resumed.every((n, i) => i === 0 || n === resumed[i - 1]! + 1), 'no transition missed or repeated');
    assert.equal(await page.textContent('[data-testid=gaps]'), '', 'no gap reported');
    // …and says so plainly when the daemon no longer has what was missed.
    await page.evaluate(() => (window as unknown as { troupeInspector: { disconnect(): void } }).troupeInspector.disconnect());
    for (let i = 0; i < 3; i++) await run('hello yet again');
    await page.evaluate(() => (window as unknown as { troupeInspector: { resume(): void } }).troupeInspector.resume());
    await until(page, 'the gap notice', () => document.querySelector('#gaps .gap'));
    assert.match((await page.textContent('[data-testid=gaps]')) ?? '', /missed transitions after #\d+/);
    await until(page, 'the gap in the timeline', () => document.querySelector('#timeline li.gap'));
    await shot(page, 'gap');
    assert.deepEqual(errors, [], 'no script errors in the page');
  });

  test('inspector: the timeline keeps up while a reply streams without a pause', { timeout: 120_000 }, async (t) => {
    // 1500 words, one chunk every 10 ms: the log never rests for long while the reply streams.
    const words = Array.from({ length: 1500 }, (_, i) => `w${i}`).join(' ');
    const { d, c, sessionId } = await daemonWithSession(t, 'http', { script: { chunkDelayMs: 10, replies: [{ when: 'stream', items: [{ text: words }] }, [{ text: 'Done.' }]] } });
    const browser = await headlessChromium(t);
    const { page, errors } = await openInspector(browser, d, sessionId);

    let finished = false;
    const streaming = (c.agent.request('session/prompt', { sessionId, prompt: prompt('stream it') }) as Promise<{ stopReason: string }>).finally(() => (finished = true));
    await c.until(() => c.updatesFor(sessionId, 'agent_message_chunk').length > 0, 'the first chunk');
    // The reply's row (and the turn's own rows, rebuilt from the log) show up while it streams, not
    // only once the log goes quiet.
    // (its chunk count growing: a first render of the row can come in the pause before the stream)
    await until(page, 'the streaming reply in the timeline', () => Number(/\((\d+) chunks\)/.exec(document.querySelector('#timeline li[data-type=agent_message_chunk]')?.textContent ?? '')?.[1] ?? 0) >= 100, 60_000);
    const seenWhileStreaming = !finished;
    await until(page, 'the turn in modelStep in the timeline', () => document.querySelector('#timeline li[data-state="turn:modelStep"]'), 60_000);
    const turnRowWhileStreaming = !finished;
    assert.equal((await streaming).stopReason, 'end_turn');
    assert.ok(seenWhileStreaming, 'the reply was in the timeline before the turn ended');
    assert.ok(turnRowWhileStreaming, 'the turn rebuilt from the log was in the timeline before the turn ended');
    assert.deepEqual(errors, []);
  });

  test('inspector: text with bidi overrides, a session deleted while shown, a link to a deleted one, and a login that is gone', { timeout: 120_000 }, async (t) => {
    // A prompt and a reply with a right-to-left override (U+202E) in them, which would make the rest
    // of their row (and of their line in the Cause pane) read backwards, and markup.
    const { d, c, sessionId } = await daemonWithSession(t, 'http', { script: { replies: [[{ text: 'Hi \u202eevil.' }]] } });
    const browser = await headlessChromium(t);
    assert.equal(((await c.agent.request('session/prompt', { sessionId, prompt: prompt('hello \u202eiH <b>x</b>') })) as { stopReason: string }).stopReason, 'end_turn');
    const { page, errors } = await openInspector(browser, d, sessionId);
    await until(page, 'the reply in the timeline', () => document.querySelector('#timeline li[data-type=turn_completed]'));

    // The override is spelled out where it is shown (as the CLI does), the markup shown as text.
    assert.equal(await page.textContent('#timeline li[data-type=user_message] .what'), 'prompt "hello \\u202eiH <b>x</b>"');
    assert.equal(await page.textContent('#timeline li[data-type=agent_message_chunk] .what'), 'agent message: "Hi \\u202eevil."');
    await page.click('#timeline li[data-type=user_message]');
    assert.match((await page.textContent('[data-testid=cause]')) ?? '', /"text": "hello \\u202eiH <b>x<\/b>"/);
    assert.equal(await page.$$eval('#timeline li b, #cause b', (bs) => bs.length), 0, 'no markup from the session');
    assert.doesNotMatch((await page.textContent('body')) ?? '', /\u202e/, 'no override anywhere on the page');
    const feedEnded = () => page.evaluate(() => (window as unknown as { troupeInspector: { app: { log?: { ended: boolean } } } }).troupeInspector.app.log?.ended);
    assert.equal(await feedEnded(), false);

    // Deleted while shown: the page says so and stops asking for its log (a 404 is never retried).
    // It says so from the session list, not waiting for its log feed's next try to be refused:
    // that try is held here, never answered.
    await page.route('**/events?*', () => undefined);
    assert.equal((await d.api('DELETE', `/v1/sessions/${sessionId}`)).status, 200);
    await until(page, 'the deletion noticed', () => /was deleted/.test(document.querySelector('#gaps')?.textContent ?? ''));
    assert.equal(await feedEnded(), true, 'the log feed of a deleted session is not retried');
    assert.ok((await page.$$('#timeline li[data-type=turn_completed]')).length > 0, 'what was read before stays shown');

    // A link to a deleted session: the page starts, and says there is no such session.
    const linked = await page.context().newPage();
    linked.on('pageerror', (e) => errors.push(String(e)));
    await linked.goto(`${d.url}/inspect/#${sessionId}`);
    await until(linked, 'the page started', () => document.body.dataset.ready === 'true');
    assert.match((await linked.textContent('[data-testid=gaps]')) ?? '', /no session/);
    await until(linked, 'the live feed', () => document.querySelector('#feed-status')?.textContent === 'live');

    // The login goes (as when the daemon restarts: the cookie was bound to the old process) and the
    // feed reconnects: the page says it must log in again instead of reconnecting forever.
    await linked.context().clearCookies();
    await linked.evaluate(() => (window as unknown as { troupeInspector: { reconnect(): void } }).troupeInspector.reconnect());
    await until(linked, 'the logged-out notice', () => /logged out/.test(document.querySelector('#feed-status')?.textContent ?? '')).catch(async (err) => {
      throw new Error(`${(err as Error).message}; the header says ${JSON.stringify(await linked.textContent('#feed-status'))}`);
    });
    assert.equal(await linked.evaluate(() => (window as unknown as { troupeInspector: { app: { transitions?: { ended: boolean } } } }).troupeInspector.app.transitions?.ended), true);
    // The session list's 3 s poll, refused too, neither hides the notice nor goes on asking.
    await new Promise((r) => setTimeout(r, 3500));
    assert.match((await linked.textContent('#feed-status')) ?? '', /logged out/);
    assert.deepEqual(errors, []);
  });

  test('inspector: a click across a redraw of its list selects the row, as Enter on the row with the focus does; the row selected stays selected as the transitions rebuilt from the log arrive, and the machines shown take them in', { timeout: 120_000 }, async (t) => {
    const { d, c, sessionId } = await daemonWithSession(t, 'http', { script: { replies: [{ when: 'hello', items: [{ text: 'Hi.' }] }] } });
    const browser = await headlessChromium(t);
    const { page, errors } = await openInspector(browser, d);
    /**
     * Presses the main button on `item`, waits until `list` is redrawn (after `meanwhile`), releases.
     * A redraw adds and removes items, or writes again those that read otherwise (the session list's
     * cells, in place since 2026-12-07); with `replaced`, it is the element pressed that is written
     * again, so that the press and the release are on different elements.
     */
    const clickAcrossRedraw = async (item: string, list: string, meanwhile = async () => {}, replaced = false) => {
      const box = (await (await page.$(item))!.boundingBox())!;
      await page.mouse.move(box.x + 5, box.y + box.height / 2);
      await page.evaluate(([i, l, whole]) => {
        const w = window as unknown as { redrawn: Promise<unknown> };
        const pressed = document.querySelector(i)!;
        w.redrawn = new Promise<void>((r) => {
          const o = new MutationObserver(() => void ((!whole || !pressed.isConnected) && (o.disconnect(), r())));
          o.observe(document.querySelector(l)!, { childList: true, subtree: true });
        });
      }, [item, list, replaced] as const);
      await page.mouse.down();
      await meanwhile();
      await page.evaluate(() => (window as unknown as { redrawn: Promise<unknown> }).redrawn);
      await page.mouse.up();
    };
    // The session list is read again every 3 s, and its last-activity cell (`Ns ago`) written again.
    await page.waitForSelector(`#sessions tr[data-session="${sessionId}"]`);
    await clickAcrossRedraw(`#sessions tr[data-session="${sessionId}"] td:nth-child(6)`, '#sessions tbody', undefined, true);
    await until(page, 'the session shown', () => document.querySelector<HTMLElement>('#detail-pane')?.hidden === false);
    // The page's asks for the replay are held from now on: the turn's events come, its transitions
    // (rebuilt from them by the daemon) not yet. That is how a running session is seen, with the
    // transitions about a second behind the events.
    const held: Route[] = [];
    let hold = true;
    await page.route('**/replay?*', (route) => void (hold ? held.push(route) : route.continue()));
    assert.equal(((await c.agent.request('session/prompt', { sessionId, prompt: prompt('hello') })) as { stopReason: string }).stopReason, 'end_turn');
    await until(page, 'the turn in the timeline', () => document.querySelector('#timeline li[data-type=turn_completed]'));
    await waitFor('an ask for the replay', () => held.length > 0);
    assert.equal(await page.$$eval('#timeline li[data-lane=turn]', (ls) => ls.length), 0, 'no turn transition yet');
    await page.click('#timeline li[data-type=turn_completed]');
    assert.equal(await page.textContent('[data-testid=state-turn]'), '—', 'no turn rebuilt yet');

    // The transitions arrive, sorted in before the row selected.
    hold = false;
    for (const route of held) await route.continue();
    await until(page, 'the turn transitions in the timeline', () => document.querySelector('#timeline li[data-lane=turn]'));
    assert.equal(await page.getAttribute('#timeline li.selected', 'data-type'), 'turn_completed', 'the row clicked is still the one selected');
    assert.equal(await page.$$eval('#timeline li.future', (ls) => ls.filter((l) => l.getAttribute('data-type') === 'turn_completed').length), 0);
    await until(page, 'the turn at that moment', () => document.querySelector('[data-testid=state-turn]')?.textContent !== '—');
    const captions = () => page.$$eval('.chart figcaption', (fs) => fs.map((f) => f.textContent));
    const shown = await captions();
    await page.click('#timeline li[data-type=turn_completed]');
    assert.deepEqual(await captions(), shown, 'the machines shown are those of that row, as a click on it now shows them');

    // The timeline is redrawn as the session runs: here by the events of the next turn.
    const first = '#timeline li[data-type=user_message]';
    await page.$eval(first, (li) => li.scrollIntoView({ block: 'center' }));
    await clickAcrossRedraw(first, '#timeline', async () => void (await c.agent.request('session/prompt', { sessionId, prompt: prompt('hello again') })));
    await until(page, 'the prompt selected', () => document.querySelector('#timeline li.selected')?.getAttribute('data-type') === 'user_message');
    assert.equal(await page.getAttribute('#timeline li.selected', 'data-seq'), await page.getAttribute(first, 'data-seq'), 'the first prompt, not the second');

    // From the keyboard: the focus stays on its row through redraws, and Enter chooses it.
    const redrawn = (list: string) =>
      page.evaluate((l) => new Promise((r) => new MutationObserver(r).observe(document.querySelector(l)!, { childList: true, subtree: true })), list);
    const last = '#timeline li[data-type=turn_completed] >> nth=-1';
    await page.focus(last);
    const focused = await page.getAttribute(last, 'data-seq');
    const timelineRedrawn = redrawn('#timeline');
    await c.agent.request('session/prompt', { sessionId, prompt: prompt('hello once more') });
    await timelineRedrawn;
    await page.keyboard.press('Enter');
    assert.equal(await page.getAttribute('#timeline li.selected', 'data-seq'), focused, 'the row that had the focus, not the turn that came after it');
    const other = (await c.agent.request('session/new', { cwd: tempDir(), mcpServers: [] })).sessionId as string;
    await page.waitForSelector(`#sessions tr[data-session="${other}"]`);
    await page.focus(`#sessions tr[data-session="${other}"]`);
    await redrawn('#sessions tbody');
    await page.keyboard.press('Enter');
    await page.waitForFunction((id) => (window as unknown as { troupeInspector: { app: { selected?: string } } }).troupeInspector.app.selected === id, other, { timeout: 15_000, polling: 50 });
    assert.deepEqual(errors, []);
  });

  test('inspector: a long session lists a window of its rows; the strip reaches the rest', { timeout: 120_000 }, async (t) => {
    // Thoughts and texts in turn: each chunk is a row of its own (2,400 rows and more).
    const items = Array.from({ length: 2400 }, (_, i) => (i % 2 ? { text: `t${i} ` } : { thought: `h${i} ` }));
    const { d, c, sessionId } = await daemonWithSession(t, 'http', { script: { chunkDelayMs: 0, replies: [{ when: 'long', items }, [{ text: 'Done.' }]] } });
    const browser = await headlessChromium(t);
    assert.equal(((await c.agent.request('session/prompt', { sessionId, prompt: prompt('a long one') })) as { stopReason: string }).stopReason, 'end_turn');
    const { page, errors } = await openInspector(browser, d, sessionId);
    await until(page, 'the whole log read', () => document.querySelector('#timeline li[data-type=turn_completed]'), 60_000);
    await until(page, 'the rows rebuilt from the log', () => document.querySelector('#timeline li[data-state="session:idle"]'), 60_000);
    const rows = await page.evaluate(() => (window as unknown as { troupeInspector: { app: { rows: unknown[] } } }).troupeInspector.app.rows.length);
    assert.ok(rows > 2400, `the session has ${rows} rows`);
    const listed = await page.$$eval('#timeline li[data-lane]', (lis) => lis.length);
    assert.ok(listed <= 1000, `the list holds a window of the rows, not all of them (${listed} of ${rows})`);
    assert.match((await page.textContent('[data-testid=more-earlier]')) ?? '', /^\d+ earlier row/);
    // The prompt's mark on the strip travels there, and the list shows that row.
    await page.locator('#strip circle.mark', { has: page.locator('title', { hasText: 'prompt "a long one"' }) }).dispatchEvent('click');
    assert.equal(await page.$eval('#timeline li.selected', (li) => (li as HTMLElement).dataset.type), 'user_message');
    assert.equal(await page.textContent('[data-testid=state-session]'), 'idle');
    assert.ok(await page.$('[data-testid=more-later]'));
    await page.click('[data-testid=back-live]');
    await until(page, 'the present listed again', () => document.querySelector('#timeline li[data-type=turn_completed]'));
    assert.deepEqual(errors, []);
  });

  test('inspector: while a long session streams, each replay ask reads only what the log gained, and the page ends equal to a whole replay', { timeout: 180_000 }, async (t) => {
    // A long first turn (3,000 chunks, each a row), then replies streamed one word every 10 ms.
    const long = Array.from({ length: 3000 }, (_, i) => (i % 2 ? { text: `t${i} ` } : { thought: `h${i} ` }));
    const stream = Array.from({ length: 100 }, (_, i) => [{ text: `w${i} ` }, { delay_ms: 10 }]).flat();
    const { d, c, sessionId } = await daemonWithSession(t, 'http', { script: { chunkDelayMs: 0, replies: [{ when: 'long', items: long }, { when: 'stream', items: stream }, [{ text: 'Done.' }]] } });
    const browser = await headlessChromium(t);
    const ask = (text: string) => (c.agent.request('session/prompt', { sessionId, prompt: prompt(text) }) as Promise<{ stopReason: string }>).then((r) => r.stopReason);
    // From the session's own process: the daemon's view (GET /v1/sessions/:id) follows the durable
    // events its child reports on another pipe, and can be behind the prompt's answer by the last of them.
    const lastSeq = async () => ((await c.agent.request('_troupe/session_state', { sessionId })) as { lastSeq: number }).lastSeq;
    assert.equal(await ask('a long one'), 'end_turn');
    await d.untilDurable(sessionId, await lastSeq());
    const { page, errors } = await openInspector(browser, d, sessionId);
    type Inspector = { troupeInspector: { app: { replayFrom?: { lastSeq: number }; replayed: unknown[] } } };
    const pageSeq = () => page.evaluate(() => (window as unknown as Inspector).troupeInspector.app.replayFrom?.lastSeq ?? 0);
    await page.waitForFunction((n) => ((window as unknown as Inspector).troupeInspector.app.replayFrom?.lastSeq ?? 0) >= n, await lastSeq(), { timeout: 60_000 });

    // The page's asks while replies stream, and the log events the daemon replays for them. Three
    // turns, each waited out until the page has caught up with it: so the page asks at least three
    // times however slowly this machine runs its timers (one ask a second while events flow).
    let asks = 0;
    page.on('request', (r) => void (r.url().includes('/replay?since=') && asks++));
    const before = { seq: await pageSeq(), read: await d.metric('troupe_inspector_replay_events_total') };
    assert.ok(before.seq > 3000, `the log is long (${before.seq} events)`);
    let end = 0;
    for (const k of [1, 2, 3]) {
      assert.equal(await ask(`stream it (${k})`), 'end_turn');
      end = await lastSeq();
      await d.untilDurable(sessionId, end);
      await page.waitForFunction((n) => ((window as unknown as Inspector).troupeInspector.app.replayFrom?.lastSeq ?? 0) >= n, end, { timeout: 60_000 });
    }
    const read = (await d.metric('troupe_inspector_replay_events_total')) - before.read;
    assert.ok(asks >= 3, `the page asked while the replies streamed (${asks} asks)`);
    // Each ask read and replayed only the events after the previous one: together, what the log gained.
    assert.equal(read, end - before.seq, `${asks} asks replayed ${read} events; the log gained ${end - before.seq}`);

    // What the page holds, and the states it shows at a moment of the stream, equal a whole replay.
    const whole = (await d.api('GET', `/v1/sessions/${sessionId}/replay`)).json;
    assert.equal(whole.after, 0);
    assert.equal(whole.lastSeq, end);
    assert.deepEqual(await page.evaluate(() => (window as unknown as Inspector).troupeInspector.app.replayed), whole.transitions);
    await page.locator('#timeline li[data-type=user_message]').last().click();
    const promptSeq = Number(await page.$eval('#timeline li.selected', (li) => (li as HTMLElement).dataset.seq));
    // (a prompt's row comes before the transitions it causes)
    const at = whole.transitions.filter((x: { seq: number }) => x.seq < promptSeq);
    const states: Record<string, string> = {};
    for (const x of at) (x.event === 'init' && x.machine === 'session' && delete states.turn, (states[x.machine] = x.state));
    assert.equal(await page.textContent('[data-testid=state-session]'), states.session);
    assert.equal(await page.textContent('[data-testid=state-turn]'), states.turn ?? '—');

    // A replay id the daemon does not have (another run, a rebuilt replay) gets the whole replay; a
    // malformed seq is refused; a deleted session's replay is not kept.
    const other = (await d.api('GET', `/v1/sessions/${sessionId}/replay?since=0000.1&after=${end}`)).json;
    assert.equal(other.after, 0);
    assert.deepEqual(other.transitions, whole.transitions);
    const same = (await d.api('GET', `/v1/sessions/${sessionId}/replay?since=${whole.replayId}&after=${end}`)).json;
    assert.deepEqual([same.after, same.transitions], [end, []]);
    const bad = await d.api('GET', `/v1/sessions/${sessionId}/replay?since=${whole.replayId}&after=1e3`);
    assert.deepEqual([bad.status, bad.json.error.code], [400, 'invalid_cursor']);
    assert.equal(await d.metric('troupe_inspector_replays_held'), 1);
    assert.equal((await d.api('DELETE', `/v1/sessions/${sessionId}`)).status, 200);
    assert.equal(await d.metric('troupe_inspector_replays_held'), 0);
    assert.equal((await d.api('GET', `/v1/sessions/${sessionId}/replay`)).status, 404);
    assert.deepEqual(errors, []);
  });

  test('inspector: the strip of a 30,000-row session draws a bounded number of marks, keeps its crash visible, and a click selects the row under it', { timeout: 120_000 }, async (t) => {
    const { d, sessionId } = await daemonWithSession(t, 'http', { script: { replies: [[{ text: 'Hi.' }]] } });
    const browser = await headlessChromium(t);
    const { page, errors } = await openInspector(browser, d, sessionId);
    // The page's own strip module, on 30,000 rows a millisecond apart: tool calls, transitions and
    // turns, with one crash among them.
    const result = await page.evaluate(async () => {
      const { renderStrip, STRIP_BIN_PX } = (await import('/inspect/ui/timeline.js' as string)) as typeof import('../../../src/inspector-ui/timeline.js');
      const lanes = ['log', 'session', 'turn', 'child'] as const;
      const kinds = ['tool', 'transition', 'turn', 'permission'];
      const rows = Array.from({ length: 30_000 }, (_, i) => ({ key: `k${i}`, at: 1_000_000 + i, seq: i + 1, lane: lanes[i % 4]!, kind: kinds[i % 4]!, type: 't', text: `row ${i}` }));
      const crash = 17_001; // lane session
      rows[crash] = { ...rows[crash]!, kind: 'crash', text: 'the crash' };
      const svg = document.querySelector('#strip') as SVGSVGElement;
      let picked: number | undefined;
      renderStrip(svg, rows, undefined, (i) => void (picked = i));
      const marks = svg.querySelectorAll('circle.mark').length;
      const crashMark = svg.querySelector('circle.mark[data-kind=crash]') as SVGCircleElement | null;
      const click = (el: Element, cx: number, cy: number) => {
        const box = svg.getBoundingClientRect();
        el.dispatchEvent(new MouseEvent('click', { bubbles: true, clientX: box.left + cx, clientY: box.top + cy }));
      };
      // The crash's mark, clicked where it is drawn.
      const cx = Number(crashMark?.getAttribute('cx'));
      const cy = Number(crashMark?.getAttribute('cy'));
      if (crashMark) crashMark.dispatchEvent(new MouseEvent('click', { bubbles: true }));
      const crashPicked = picked;
      // A click on the strip's background, in the turn lane, at 40 % of the time axis.
      picked = undefined;
      const width = svg.clientWidth;
      const px = 56 + 0.4 * (width - 66);
      click(svg, px, 8 + 2 * 14);
      const bg = picked === undefined ? undefined : { lane: rows[picked]!.lane, x: 56 + ((rows[picked]!.at - rows[0]!.at) / (rows.at(-1)!.at - rows[0]!.at)) * (width - 66) };
      // Clicking the crash mark's place on the background selects the crash too.
      picked = undefined;
      click(svg, cx, cy);
      return { marks, width, bin: STRIP_BIN_PX, crash: crashMark !== null, crashPicked, crashIndex: crash, bg, byPlace: picked, px };
    });
    assert.ok(result.crash, 'the crash has its mark among 30,000 rows');
    const bound = Math.ceil(result.width / result.bin + 1) * 4;
    assert.ok(result.marks <= bound, `${result.marks} marks for 30,000 rows (at most ${bound}: 4 lanes of ${result.width} px in ${result.bin} px bins)`);
    assert.equal(result.crashPicked, result.crashIndex, 'clicking the crash mark selects the crash row');
    assert.equal(result.byPlace, result.crashIndex, 'clicking where the crash is drawn selects it');
    assert.equal(result.bg?.lane, 'turn', 'a click in the turn lane selects a turn row');
    assert.ok(Math.abs(result.bg!.x - result.px) <= result.bin, `the row selected is drawn under the click (${result.bg!.x} vs ${result.px})`);
    assert.deepEqual(errors, []);
  });
});
