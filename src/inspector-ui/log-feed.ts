/**
 * The log feed of the session shown (`GET /v1/sessions/:id/events`): its events into `app.events`,
 * each seq once and in seq order, and what the daemon says of the log besides: cut short
 * (`replay_gap` with `lastSeq`), a cursor it cannot serve (a plain `replay_gap`), a cursor beyond the
 * log's end (400), a damaged record, the session deleted, the login gone.
 */
import { Feed, getJson } from './api.js';
import { app } from './page-state.js';
import type { LogEvent } from './types.js';

/** What the page does with what the feed tells. */
export interface LogFeedPage {
  /** The log holds only through `lastSeq` now: what the page built on the events after it goes. */
  rewound(lastSeq: number): void;
  /** Something to say of the session's log (a notice, and a row of the timeline). */
  note(text: string): void;
  loggedOut(): void;
  /** `app.events` gained an event. */
  grew(): void;
}

/** Opens session `id`'s log feed from its start, as `app.log`, for as long as the session is shown. */
export function openLogFeed(id: string, page: LogFeedPage): void {
  const seen = new Set<number>();
  let reloaded = false;
  /** The log holds only through `lastSeq` now: what the page had after it goes, and the feed reads on from there. */
  const rewind = (lastSeq: number) => {
    for (const seq of seen) if (seq > lastSeq) seen.delete(seq);
    page.rewound(lastSeq);
    app.log = open(String(lastSeq));
  };
  /**
   * The feed was refused its cursor (400 `invalid_cursor`: beyond the log's end) when it reconnected:
   * the log was cut short while the feed was away (a network blip), whose `replay_gap` it missed.
   * Until 2026-12-07 the page said the feed was refused and kept what the log lost.
   */
  const refused = async (feed: Feed | undefined) => {
    let held: number | undefined;
    try {
      held = (await getJson<{ lastSeq: number }>(`/v1/sessions/${encodeURIComponent(id)}`)).lastSeq;
    } catch {
      // not known: said as a refusal, below
    }
    if (id !== app.selected || app.log !== feed) return;
    const cursor = app.events.at(-1)?.seq ?? 0;
    if (held !== undefined && held < cursor) rewind(held);
    else page.note('the log feed was refused (400)');
  };
  const open = (after: string) =>
    new Feed(
      (cursor) => `/v1/sessions/${encodeURIComponent(id)}/events?after=${cursor || '0'}`,
      ['event', 'replay_gap'],
      {
        message: (name, data) => {
          if (name === 'replay_gap' && typeof (data as { lastSeq?: unknown }).lastSeq === 'number') {
            // The log was found cut short: it holds what the page has through `lastSeq`, and its
            // next events take the seqs after it. Until 2026-12-07 the page read the log again
            // from its start skipping the seqs it had: it kept the events the log lost, and hid
            // the new ones that took their seqs.
            app.log?.close();
            if (id === app.selected) rewind((data as { lastSeq: number }).lastSeq);
            return;
          }
          if (name === 'replay_gap') {
            // The daemon cannot serve that cursor any more: say so, and read the log again from
            // its start once (events already shown are skipped by seq).
            page.note(`log feed gap after seq ${String((data as { after?: unknown }).after)}${reloaded ? '' : ': reloading the log'}`);
            app.log?.close();
            if (!reloaded && id === app.selected) {
              reloaded = true;
              app.log = open('0');
            }
            return;
          }
          const e = data as LogEvent;
          if (seen.has(e.seq)) return;
          seen.add(e.seq);
          const lastSeq = app.events.at(-1)?.seq ?? 0;
          app.events.push(e);
          // The feed is in seq order; only a reload after a gap can bring older events.
          if (e.seq < lastSeq) app.events.sort((a, b) => a.seq - b.seq);
          page.grew();
        },
        // The log cannot be read on (a damaged record): said with the daemon's words; what was read stays.
        failed: ({ code, message }) => {
          if (id === app.selected) page.note(`the log feed failed: ${message} (${code})`);
        },
        // The session was deleted (404) while shown, or the login is gone: what was read stays.
        status: (s, code) => {
          if (s !== 'ended' || id !== app.selected) return;
          if (code === 401 || code === 403) page.loggedOut();
          else if (code === 400) void refused(app.log);
          else page.note(code === 404 ? `session ${id} was deleted: its log feed ended` : `the log feed was refused (${String(code)})`);
        },
      },
      after,
    );
  app.log = open('0');
}
