/**
 * The inspector's side of the daemon (docs/inspector.md): the page at /inspect (login through a
 * one-time code), the live feed of machine transitions, a session's machines rebuilt from its log
 * (time travel for stored sessions too), and the terminal picture `troupe inspect ID` prints.
 */
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TroupeError } from '../../core/errors.js';
import { nextTurn } from '../../core/next-turn.js';
import { describeMachine } from '../../machines/serialize.js';
import { sessionMachine } from '../../machines/session.machine.js';
import { turnMachine } from '../../machines/turn.machine.js';
import { childMachine } from '../../machines/child.machine.js';
import { toMermaid } from '../../machines/mermaid.js';
import { statesAt } from '../../machines/replay.js';
import { sessionLogPath, sessionsDir, type SessionIndex } from '../../store/index.js';
import type { HttpServer } from '../http/http-server.js';
import { staticFiles } from '../http/static-files.js';
import { oneParam } from '../http/query-param.js';
import type { MachineHub } from '../machine-hub.js';
import type { Metrics } from '../metrics.js';
import type { Relay } from '../relay/relay.js';
import { sessionNotFound } from '../quoted-id.js';
import { onlySession, TransitionFeed } from './transition-feed.js';
import { SessionReplays } from './session-replays.js';
import { noLog, replayForPicture } from './picture-replay.js';
import { INSPECTOR_CSS, INSPECTOR_HTML, INSPECTOR_ICON } from './page.js';
import { headOf } from '../../core/text-cut.js';
import { INSPECT_LAST_MAX } from '../../wire/inspect-last.js';

export interface InspectorDeps {
  hub: MachineHub;
  index: SessionIndex;
  relay: Relay;
  /** $TROUPE_HOME: where the session logs are. */
  home: string;
  /** Read for TROUPE_INSPECTOR_KEEP: transitions kept for resuming the live feed (default 5000). */
  env?: NodeJS.ProcessEnv;
  /** Where the replays count the log they read (troupe_inspector_replay_*). */
  metrics?: Metrics;
}

/**
 * `?last=N`: decimal digits from 1 to INSPECT_LAST_MAX (default 20), else `invalid_params`. A larger
 * ask is refused, not cut: until 2026-12-06 `?last=2000` silently answered 500 (and `?last=abc` or
 * `0` answered 20 or 1).
 */
function lastParam(raw: string | null): number {
  if (raw === null) return 20;
  const n = /^\d{1,15}$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= 1 && n <= INSPECT_LAST_MAX)) {
    const asked = JSON.stringify(headOf(raw, 40));
    throw new TroupeError('invalid_params', `last must be a whole number from 1 to ${INSPECT_LAST_MAX} (the most transitions one answer holds), not ${asked}`, { max: INSPECT_LAST_MAX });
  }
  return n;
}

const DEFINITIONS = { session: describeMachine(sessionMachine), turn: describeMachine(turnMachine), child: describeMachine(childMachine) };

/** The compiled page modules (dist/src/inspector-ui) and the installed elkjs bundle. */
const UI_DIR = fileURLToPath(new URL('../../inspector-ui/', import.meta.url));
const ELK_DIR = dirname(createRequire(import.meta.url).resolve('elkjs/lib/elk.bundled.js'));

/** The page loads only its own scripts, styles and feeds: nothing from elsewhere, nothing inline. */
const HTML_HEADERS = {
  'Content-Type': 'text/html; charset=utf-8',
  'Cache-Control': 'no-cache',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Content-Security-Policy': "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'",
};

export function registerInspector(server: HttpServer, deps: InspectorDeps): { feed: TransitionFeed; replays: SessionReplays } {
  const { hub, index, relay } = deps;
  const keep = Number(deps.env?.TROUPE_INSPECTOR_KEEP);
  const feed = new TransitionFeed(hub, Number.isInteger(keep) && keep > 0 ? keep : undefined);
  const bytesRead = deps.metrics?.counter('troupe_inspector_replay_log_bytes_total', 'Session log bytes read to replay machines for the inspector.');
  const eventsRead = deps.metrics?.counter('troupe_inspector_replay_events_total', 'Session log events replayed for the inspector.');
  const replays = new SessionReplays({
    logPath: (id) => sessionLogPath(sessionsDir(deps.home), id),
    pause: nextTurn,
    onRead: (bytes, events) => (bytesRead?.({}, bytes), eventsRead?.({}, events)),
  });
  deps.metrics?.gauge('troupe_inspector_replays_held', 'Sessions whose replay the daemon keeps for the inspector pages asking about them.', () => replays.size);
  const ui = staticFiles(UI_DIR);
  const elk = staticFiles(ELK_DIR);

  const entryOf = (id: string) => {
    const e = index.get(id);
    if (!e || e.status === 'deleted') {
      replays.forget(id);
      throw sessionNotFound(id);
    }
    return e;
  };

  server.route('POST', '/v1/login-codes', () => server.mintLoginCode());

  server.route('GET', '/v1/inspect/transitions', (req, res) => {
    // `?session=ID` names a session as the per-session routes do: an unknown or deleted one (or an
    // empty id) is 404 session_not_found, as its events feed is, before anything is streamed. Until
    // 2026-12-07 it opened a stream that never sent anything. Named twice, it is 400 invalid_params.
    const only = onlySession(req.query);
    if (only !== undefined) entryOf(only);
    return feed.stream(req, res);
  });

  // `?since=<replayId>&after=<seq>`: the page has that replay up to that seq, and gets what follows.
  server.route('GET', '/v1/sessions/:id/replay', async (req) => {
    const id = req.params.id!;
    entryOf(id);
    const replayId = oneParam(req.query, 'since');
    const after = oneParam(req.query, 'after', 'invalid_cursor');
    if (after !== null && !/^\d{1,15}$/.test(after)) throw new TroupeError('invalid_cursor', `after must be a seq (decimal digits), not ${JSON.stringify(headOf(after, 40))}`);
    const answer = await replays.replay(id, replayId !== null && after !== null ? { replayId, after: Number(after) } : undefined).catch((err: unknown) => noLog(id, err));
    return { sessionId: id, ...answer, live: hub.transitions(id) };
  });

  server.route('GET', '/v1/sessions/:id/inspect', async (req) => {
    const id = req.params.id!;
    const last = lastParam(oneParam(req.query, 'last'));
    entryOf(id);
    // A long session's log is read and replayed a slice at a time, the loop free in between: in one
    // piece, an 80,000-event session held the daemon's loop for 80–150 ms per request. A session
    // deleted meanwhile is refused (picture-replay.ts), and the entry shown is the one it has now.
    const replayed = await replayForPicture(sessionLogPath(sessionsDir(deps.home), id), id, { deleted: () => index.get(id)?.status === 'deleted', pause: nextTurn });
    const entry = entryOf(id);
    const live = hub.transitions(id);
    const child = relay.sessions.get(id)?.child;
    // The daemon's states once it has seen the session's machines (no session or turn state while no
    // process runs it: those machines ended with the last one); else the log's (a stored session).
    // Never a mix: the log's turn next to a live session machine would be another process's.
    const liveStates = hub.states(id);
    const seenLive = Object.keys(liveStates).length > 0;
    const states = seenLive ? { ...liveStates, child: liveStates.child ?? child?.state } : { ...statesAt(replayed), child: child?.state };
    const transitions = live.length > 0 ? live : replayed.map(({ machine, state, event, at, seq, cause }) => ({ machine, state, event, at, seq, cause: cause.type }));
    return {
      session: { ...entry, child: relay.childOf(id) ?? null },
      source: seenLive ? 'live' : 'log',
      states,
      transitions: transitions.slice(-last),
      mermaid: {
        session: toMermaid(DEFINITIONS.session, states.session ? [states.session] : []),
        turn: toMermaid(DEFINITIONS.turn, states.turn ? [states.turn] : []),
        child: toMermaid(DEFINITIONS.child, states.child ? [states.child] : []),
      },
    };
  });

  server.route('GET', '/inspect/*', (req, res) => {
    // `/inspect` and `/inspect/` route alike; the page's relative URLs need the slash.
    if (req.path === '/inspect') return res.redirect('/inspect/', 302);
    const rest = req.params['*'] ?? '';
    if (rest === '' || rest === 'index.html') return res.send(200, HTML_HEADERS, INSPECTOR_HTML);
    if (rest === 'style.css') return res.send(200, { 'Content-Type': 'text/css; charset=utf-8', 'Cache-Control': 'no-cache' }, INSPECTOR_CSS);
    if (rest === 'favicon.svg') return res.send(200, { 'Content-Type': 'image/svg+xml', 'Cache-Control': 'max-age=86400' }, INSPECTOR_ICON);
    if (rest === 'vendor/elk.bundled.js') return elk({ ...req, params: { '*': 'elk.bundled.js' } }, res);
    if (rest.startsWith('ui/') && rest.endsWith('.js')) return ui({ ...req, params: { '*': rest.slice(3) } }, res);
    return res.error(404, 'method_not_found', 'No such file');
  });
  return { feed, replays };
}
