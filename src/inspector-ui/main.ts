/**
 * The inspector page (docs/inspector.md): the session list, the selected session's three machines
 * drawn from their definitions with the active states lit live, and the timeline of its log and
 * transitions where selecting a row replays the machines to that moment.
 */
import { addressSession, addressedSession, onAddressChange } from './address.js';
import { Feed, HttpError, getJson } from './api.js';
import { openLogFeed } from './log-feed.js';
import { shownEvent } from './event-label.js';
import { debounce } from './debounce.js';
import { layoutMachine } from './layout.js';
import { mendNotice, sayNotice } from './notices.js';
import { applyLive, foldedStates, lastEvents, LiveFolder, mergeLive, type LiveFold } from './live-states.js';
import { keepingFocus, onPressed } from './pressed.js';
import { renderSessions, writeSessionRow } from './sessions.js';
import { Statechart } from './statechart.js';
import { buildRows, loggedStates, renderStrip, statesThrough, turnAt } from './timeline.js';
import { renderList } from './timeline-list.js';
import { visibleJson } from './visible-text.js';
import type { LiveTransition, MachineDescription, MachineName, ReplayAnswer, SessionRow, States } from './types.js';
import { app } from './page-state.js';

const MACHINES: MachineName[] = ['session', 'turn', 'child'];
const $ = <T extends Element>(sel: string) => document.querySelector(sel) as T;

function status(text: string, cls: 'live' | 'down' | '') {
  const s = $<HTMLElement>('#feed-status');
  s.textContent = text;
  s.className = `status ${cls}`;
}

/** The login is gone (the daemon restarted, or the cookie expired): say so once, and stop asking. */
function loggedOut() {
  app.loggedOut = true;
  window.clearInterval(app.poll);
  app.transitions?.close();
  app.log?.close();
  status('logged out (the daemon restarted?): run troupe inspect --url again', 'down');
}

/** A notice in the header (notices.ts), and a row in the timeline. */
function noteGap(text: string, about: 'session' | 'feed', kind = text) {
  app.gaps.push({ at: Date.now(), text });
  sayNotice($('#gaps'), text, about, kind);
  renderTimeline();
}

/** The fold of the session shown's live transitions, kept as they come (live-states.ts). */
const liveFold = new LiveFolder();

/**
 * The states to show now: the live ones, by the hub's rules (live-states.ts: none for the session and
 * turn machines while no process runs the session); for a machine the feed said nothing of, what the
 * log rebuilds (a stored session).
 */
function liveStates(): States {
  const out: States = {};
  // Both kept as rows and transitions come (each worked out once, not from every row or transition).
  const fromLog = loggedStates(app.rows);
  const fold = liveFold.foldOf(app.live);
  for (const m of MACHINES) {
    const v = fold[m] === undefined ? fromLog[m] : fold[m];
    if (typeof v === 'string') out[m] = v;
  }
  if (out.child === undefined) {
    const row = app.sessions.find((s) => s.id === app.selected);
    if (row?.child) out.child = row.child.state;
  }
  return out;
}

function show(states: States, seq?: number) {
  $('[data-testid=turn-id]').textContent = states.turn ? (turnAt(app.events, seq) ?? '') : '';
  for (const m of MACHINES) {
    app.charts.get(m)?.setActive(states[m]);
    $(`[data-testid=state-${m}]`).textContent = states[m] ?? '—';
    $(`[data-testid=event-${m}]`).textContent = app.lastEvent[m] ? `last: ${shownEvent(app.lastEvent[m])}` : '';
  }
  app.shown = states;
}

/** The session of a row of the list, and the key of a row of the timeline (pressed.ts). */
const sessionKey = (el: Element) => el.closest<HTMLElement>('tr[data-session]')?.dataset.session;
const timelineKey = (el: Element) => el.closest<HTMLElement>('li[data-key]')?.dataset.key;

const renderTimeline = () => {
  const travelled = app.travel === undefined ? undefined : app.rows[app.travel]?.key;
  app.rows = buildRows(app.events, app.replayed, app.live.filter((t) => t.machine === 'child'), app.gaps);
  // The moment looked at stays the row selected, found by its key: the transitions rebuilt from the
  // log come after the events that caused them and are sorted in before later rows, so the index
  // named another row. Until 2026-12-07 the selection moved up a row or more while the session ran
  // (the Cause and the machines shown were of the row clicked, the row lit was another), and the
  // machines shown missed the transitions of that moment that arrived after the click.
  if (travelled !== undefined) {
    const i = app.rows.findIndex((r) => r.key === travelled);
    if (i >= 0) app.travel = i;
    if (app.rows[app.travel!]) showMoment(app.travel!);
  }
  keepingFocus($('#timeline'), timelineKey, () => renderList($('#timeline'), app.rows, app.travel));
  renderStrip($('#strip'), app.rows, app.travel, select);
};
const scheduleTimeline = debounce(renderTimeline, 60, 250);

/** Shows the machines as they were once row `index` had happened, with each one's last event then. */
function showMoment(index: number) {
  // The last event of each machine as of that moment, not as of now.
  app.lastEvent = {};
  for (const r of app.rows.slice(0, index + 1)) if (r.transition) app.lastEvent[r.transition.machine] = r.transition.event;
  // The latest log seq at or before this row: the row's own, else the one of the row before it.
  const seq = app.rows.slice(0, index + 1).reduce((s, r) => (r.seq !== undefined ? r.seq : s), 0);
  show(statesThrough(app.rows, index), seq);
}

function select(index: number) {
  const row = app.rows[index];
  if (!row) return;
  const before = statesThrough(app.rows, index - 1);
  app.travel = index;
  for (const chart of app.charts.values()) chart.clearFire();
  showMoment(index);
  if (row.transition) app.charts.get(row.transition.machine)?.fire(before[row.transition.machine], row.transition.state, row.transition.event);
  $<HTMLElement>('#travel').hidden = false;
  $('#travel-text').textContent = `Time travel: the machines at ${new Date(row.at).toISOString()}${row.seq !== undefined ? ` (log seq ${row.seq})` : ''}, rebuilt from the log.`;
  $('#cause').textContent = visibleJson(row.cause ?? { gap: row.text });
  keepingFocus($('#timeline'), timelineKey, () => renderList($('#timeline'), app.rows, app.travel));
  renderStrip($('#strip'), app.rows, app.travel, select);
}

function backToLive() {
  app.travel = undefined;
  app.lastEvent = lastEvents(app.live);
  for (const chart of app.charts.values()) chart.clearFire();
  $<HTMLElement>('#travel').hidden = true;
  renderTimeline();
  show(liveStates());
}

// The whole list (up to 10,000 sessions) from the daemon: while sessions keep moving, no more often
// than the 3 s poll below.
const refreshSessions = debounce(() => void readSessions(), 150, 3000);

/** Reads the session list and draws it; whether it could be read. */
async function readSessions(): Promise<boolean> {
  try {
    const { sessions } = await getJson<{ sessions: SessionRow[] }>('/v1/sessions?all=1');
    app.sessions = sessions.filter((s) => s.status !== 'deleted');
    // The session shown was deleted: said as the list says so, not once its ended log feed's next try
    // is refused, seconds later (until 2026-12-07 its row went at once, the notice 3 s after).
    const shown = app.selected === undefined ? undefined : sessions.find((s) => s.id === app.selected);
    if (shown?.status === 'deleted' && app.log && !app.log.ended) {
      app.log.close();
      noteGap(`session ${shown.id} was deleted: its log feed ended`, 'session');
    }
    renderSessionList();
    if (app.selected && app.travel === undefined) show(liveStates());
    if (app.listFailed) {
      app.listFailed = false;
      if (!app.loggedOut) status(...app.feedSays);
    }
    return true;
  } catch (err) {
    if (app.loggedOut) return false;
    app.listFailed = true;
    if (err instanceof HttpError && (err.status === 401 || err.status === 403)) loggedOut();
    // Not answered at all (fetch's TypeError): the daemon is away, as the feed finds too.
    else if (!(err instanceof HttpError)) status('reconnecting…', 'down');
    else status(`cannot list sessions: ${String(err)}`, 'down');
    return false;
  }
}

/** The live feed's state, in the header unless the list cannot be read or the login is gone. */
function feedStatus(text: string, cls: 'live' | 'down') {
  app.feedSays = [text, cls];
  if (!app.loggedOut && !app.listFailed) status(text, cls);
}

/**
 * A session's states for the list: those the daemon gave (`machines`) where the feed has not moved a
 * machine since, the feed's are newer. (The list's states are the daemon's only: it rebuilds none
 * from the log.)
 */
function listStates(s: SessionRow): States {
  const fold: LiveFold = { ...s.machines };
  for (const [m, v] of Object.entries(app.machines.get(s.id) ?? {})) fold[m as MachineName] = v;
  return foldedStates(fold);
}

/** A row clicked: its session is shown, as a new entry of the browser's history (address.ts). */
const showRow = (id: string) => {
  addressSession(id);
  void selectSession(id);
};

/** The address changed under the page (back, forward, a link in the same tab): its session is shown, or none. */
function followAddress() {
  const id = addressedSession();
  if (id === app.selected) return;
  if (id !== undefined) return void selectSession(id);
  forgetShown(undefined);
  $<HTMLElement>('#detail-pane').hidden = true;
  renderSessionList();
}

function renderSessionList() {
  app.redraw.clear();
  keepingFocus($('#sessions tbody'), sessionKey, () => renderSessions($('#sessions tbody'), app.sessions, listStates, app.selected));
}

/**
 * Redraws the rows of the sessions the feed moved, 50 ms after the first such move: the list follows
 * the feed at once, not only at its next read from the daemon (150 ms after the feed pauses, at most
 * every 3 s while it does not), and a busy daemon does not have every row rebuilt for each transition.
 */
function redrawMoved(sessionId: string) {
  app.redraw.add(sessionId);
  app.redrawTimer ??= window.setTimeout(() => {
    app.redrawTimer = undefined;
    for (const id of app.redraw) {
      const tr = document.querySelector(`#sessions tr[data-session="${CSS.escape(id)}"]`);
      const s = app.sessions.find((x) => x.id === id);
      if (tr && s) writeSessionRow(tr as HTMLTableRowElement, s, listStates(s), id === app.selected);
    }
    app.redraw.clear();
  }, 50);
}

/**
 * Asks for the replay of session `id`: only what follows the replay the page has (the daemon keeps
 * its fold and reads only what the log gained), or all of it when the page has none or the daemon's
 * is another (restarted, rebuilt): then the answer replaces what the page had.
 */
async function fetchReplay(id: string): Promise<ReplayAnswer> {
  const from = app.replayFrom;
  const query = from ? `?since=${encodeURIComponent(from.replayId)}&after=${from.lastSeq}` : '';
  const r = await getJson<ReplayAnswer>(`/v1/sessions/${encodeURIComponent(id)}/replay${query}`);
  if (id !== app.selected || app.replayFrom !== from) return r;
  app.replayed = r.after === 0 ? r.transitions : app.replayed.concat(r.transitions);
  app.replayFrom = { replayId: r.replayId, lastSeq: r.lastSeq };
  return r;
}

/** One replay request at a time (each follows on from the one before). */
const replay = { busy: false, again: false };
const refreshReplay = debounce(async () => {
  const id = app.selected;
  if (!id) return;
  if (replay.busy) return void (replay.again = true);
  replay.busy = true;
  try {
    await fetchReplay(id);
    if (id !== app.selected) return;
    renderTimeline();
    if (app.travel === undefined) show(liveStates());
  } catch (err) {
    console.warn(err);
  } finally {
    replay.busy = false;
    if (replay.again) {
      replay.again = false;
      refreshReplay();
    }
  }
}, 200, 1000);

function onTransition(t: LiveTransition) {
  (window as unknown as { troupeInspector: { received: number[] } }).troupeInspector.received.push(t.n);
  if (!t.sessionId) return;
  app.machines.set(t.sessionId, applyLive(app.machines.get(t.sessionId) ?? {}, t));
  redrawMoved(t.sessionId);
  refreshSessions();
  if (t.sessionId !== app.selected) return;
  if (t.n <= app.liveN) return;
  app.live.push(t);
  app.liveN = t.n;
  app.lastEvent[t.machine] = t.event;
  if (app.travel === undefined) {
    const before = app.shown[t.machine];
    show(liveStates());
    app.charts.get(t.machine)?.fire(before, t.state, t.event);
  }
  if (t.machine === 'child') scheduleTimeline();
}

/**
 * After a gap of the live feed, what it missed is read again: the daemon's states for the list (what
 * the feed moved of them may be stale), and the transitions of the session shown, for its charts and
 * its timeline; once both are read, the notice of the gap says when. Until 2026-12-07 the session
 * shown was not read again: its charts kept their states from before the gap (idle, no turn, while a
 * turn ran) until its machines moved again, its timeline missed the child's moves, and the red
 * notice stayed for as long as the page was open.
 */
async function readAgainAfterGap() {
  const gap = ++app.feedGaps;
  app.machines.clear();
  const id = app.selected;
  const path = `/v1/sessions/${encodeURIComponent(id ?? '')}/transitions`;
  const [listed, kept] = await Promise.all([readSessions(), id ? getJson<{ transitions: LiveTransition[] }>(path).catch(() => undefined) : undefined]);
  // Another gap since: its own reading says when it is whole.
  if (gap !== app.feedGaps) return;
  if (kept && id === app.selected) {
    app.live = mergeLive(app.live, kept.transitions);
    app.liveN = app.live.at(-1)?.n ?? 0;
    if (app.travel === undefined) {
      app.lastEvent = lastEvents(app.live);
      show(liveStates());
    }
    scheduleTimeline();
  }
  // (Another session shown meanwhile was read whole as it was chosen.)
  if (listed && (id === undefined || kept || id !== app.selected)) mendNotice($('#gaps'), 'missed-transitions', `read again at ${new Date().toTimeString().slice(0, 8)}`);
}

/**
 * The shown session's log holds only through `lastSeq` now (a damaged tail cut, a machine crash:
 * the log feed's `replay_gap` with `lastSeq`). What the page built on the events after it goes: the
 * events, the transitions rebuilt from them (the whole replay is asked for again: a fold reads ahead,
 * so even a transition at or before `lastSeq` may have been decided on an event now gone), and a
 * moment of them being looked at (time travel ends).
 */
function logRewound(lastSeq: number) {
  app.events = app.events.filter((e) => e.seq <= lastSeq);
  app.replayed = app.replayed.filter((t) => t.seq <= lastSeq);
  // An answer on its way, to an ask that follows the replay the page had, is not taken (fetchReplay).
  app.replayFrom = undefined;
  noteGap(
    lastSeq === 0
      ? // The daemon's answer to a feed come back with the id of an event the log no longer has at that seq (spec/event-log.md §4.5).
        'the log holds other events than those shown (cut short and written again while the log feed was away): it is read again from its start'
      : `the log was found cut short after seq ${lastSeq} (a damaged tail cut, a machine crash): the events after it are gone, and new events take their seqs`,
    'session',
  );
  if (app.travel !== undefined) backToLive();
  else show(liveStates());
  refreshReplay();
}

/** Drops all the page holds of the session shown, which is `selected` from now on (none: undefined). */
function forgetShown(selected: string | undefined) {
  app.log?.close();
  Object.assign(app, { selected, events: [], replayed: [], replayFrom: undefined, live: [], liveN: 0, travel: undefined, lastEvent: {}, gaps: [] });
  // What was said of the session shown before (deleted, not found) is not said of this one.
  for (const notice of document.querySelectorAll('#gaps .gap[data-about=session]')) notice.remove();
}

async function selectSession(id: string) {
  forgetShown(id);
  $<HTMLElement>('#detail-pane').hidden = false;
  $<HTMLElement>('#travel').hidden = true;
  $('#cause').textContent = 'Select a row of the timeline.';
  renderSessionList();
  let r: ReplayAnswer;
  try {
    r = await fetchReplay(id);
  } catch (err) {
    if (id !== app.selected) return;
    if (err instanceof HttpError && (err.status === 401 || err.status === 403)) return loggedOut();
    // A deleted or unknown session (an old link): say so, and read no feed for it.
    noteGap(err instanceof HttpError && err.status === 404 ? `no session ${id} (deleted, or never in this daemon's home)` : `cannot read session ${id}: ${String(err)}`, 'session');
    return;
  }
  if (id !== app.selected) return;
  // What the feed brought while the replay was on its way: the newer ones go after the daemon's list.
  const arrived = app.live;
  app.live = [...r.live, ...arrived.filter((t) => t.n > (r.live.at(-1)?.n ?? 0))];
  app.liveN = app.live.at(-1)?.n ?? 0;
  app.lastEvent = lastEvents(app.live);
  openLogFeed(id, {
    rewound: logRewound,
    note: (text) => noteGap(text, 'session'),
    loggedOut,
    grew: () => {
      scheduleTimeline();
      refreshReplay();
    },
  });
  renderTimeline();
  show(liveStates());
}

async function start() {
  const defs = await getJson<Record<MachineName, MachineDescription>>('/v1/machines');
  await Promise.all(
    MACHINES.map(async (m) => {
      const host = $<HTMLElement>(`.chart[data-machine=${m}] .svg`);
      app.charts.set(m, new Statechart(host, await layoutMachine(defs[m]), m));
    }),
  );
  $('#back-live').addEventListener('click', backToLive);
  // Clicks and keys on rows, known by their keys: the rows may be redrawn meanwhile (pressed.ts).
  onPressed($('#sessions tbody'), sessionKey, showRow);
  onPressed($('#timeline'), timelineKey, (key) => select(app.rows.findIndex((r) => r.key === key)), () => app.rows.map((r) => r.key));
  app.transitions = new Feed(
    (after) => `/v1/inspect/transitions${after ? `?after=${after}` : ''}`,
    ['transition', 'replay_gap'],
    {
      message: (name, data) => {
        if (name === 'replay_gap') {
          const d = data as { after?: number; resumedFrom?: number };
          noteGap(`missed transitions after #${String(d.after)} (feed resumed at #${String(d.resumedFrom)})`, 'feed', 'missed-transitions');
          void readAgainAfterGap();
        } else onTransition(data as LiveTransition);
      },
      // (The daemon's transition feed sends no `event: error` today: it reads no file.)
      failed: ({ code, message }) => {
        noteGap(`the live feed failed: ${message} (${code})`, 'feed', 'live-feed-failed');
        feedStatus('the live feed failed', 'down');
      },
      status: (s, code) =>
        s === 'ended'
          ? code === 401 || code === 403
            ? loggedOut()
            : feedStatus(`the daemon refused the feed (${String(code)})`, 'down')
          : feedStatus(s === 'live' ? 'live' : 'reconnecting…', s),
    },
  );
  refreshSessions();
  app.poll = window.setInterval(refreshSessions, 3000);
  onAddressChange(followAddress);
  const fromHash = addressedSession();
  if (fromHash) await selectSession(fromHash);
  document.body.dataset.ready = 'true';
}

/** For tests and debugging from the console: drop the live feed and resume it (Last-Event-ID). */
(window as unknown as { troupeInspector: unknown }).troupeInspector = {
  app,
  reconnect: () => app.transitions?.restart(),
  disconnect: () => app.transitions?.pause(),
  resume: () => app.transitions?.resume(),
  received: [] as number[],
};

start().catch((err) => {
  status(`failed to start: ${String(err)}`, 'down');
  console.error(err);
});
