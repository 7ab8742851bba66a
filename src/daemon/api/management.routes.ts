/**
 * The management API (JSON, bearer auth): health, sessions, a session's detail with the state of
 * every machine, its event log as SSE with cursors, cancel, steer, revive, delete, machine definitions and
 * Prometheus metrics. spec/daemon.md §Management API.
 */
import { isAbsolute } from 'node:path';
import { ERROR_CODES, TroupeError, type ErrorCode } from '../../core/errors.js';
import type { ContentBlock } from '../../core/events.js';
import { nextTurn } from '../../core/next-turn.js';
import { describeMachine } from '../../machines/serialize.js';
import { sessionMachine } from '../../machines/session.machine.js';
import { turnMachine } from '../../machines/turn.machine.js';
import { childMachine } from '../../machines/child.machine.js';
import type { SessionIndex, SessionEntry } from '../../store/index.js';
import type { HttpServer } from '../http/http-server.js';
import type { Relay } from '../relay/relay.js';
import type { MachineHub } from '../machine-hub.js';
import type { Metrics } from '../metrics.js';
import type { SessionFeeds } from '../session-feeds.js';
import { sessionNotFound } from '../quoted-id.js';
import { oneParam } from '../http/query-param.js';
import { streamSessionEvents } from './session-events.stream.js';
import { headOf } from '../../core/text-cut.js';
import { kernelDirectory } from '../../tools/kernel-directory.js';

/** The turn each session is running, from its durable turn_started / turn_completed events. */
export interface RunningTurns {
  running(sessionId: string): string | undefined;
}

export interface ManagementDeps {
  turns: RunningTurns;
  relay: Relay;
  index: SessionIndex;
  feeds: SessionFeeds;
  hub: MachineHub;
  metrics: Metrics;
  version: string;
  startedAt: number;
}

/** Sessions serialized per event-loop turn by GET /v1/sessions. */
const LIST_SLICE = 500;

/**
 * `GET /v1/sessions`' query, refused with `invalid_params` where it cannot be read rather than
 * ignored: `cwd` absolute, as session/list has it (a relative one was resolved against the daemon's
 * own directory and listed nothing; an empty one, a script's unset variable, listed every session);
 * `all` 1 or true, 0 or false (`?all` and `all=yes` listed without the deleted, as if not asked).
 * Each at most once. Until 2026-12-07 all of these were answered 200. The cwd is compared as the
 * directory the kernel reaches (kernelDirectory: `/a/link/..` with `link -> /b/c` is `/b`), as
 * sessions' cwds are stored and session/list compares them; until 2026-12-07 as text (`/a`).
 */
function listQuery(query: URLSearchParams): { all: boolean; cwd?: string } {
  const all = oneParam(query, 'all');
  if (all !== null && !['1', 'true', '0', 'false'].includes(all)) throw new TroupeError('invalid_params', `all takes 1 or true (0 or false, the default), not ${JSON.stringify(headOf(all, 40))}`);
  const cwd = oneParam(query, 'cwd');
  if (cwd !== null && !isAbsolute(cwd)) throw new TroupeError('invalid_params', `cwd must be an absolute path, not ${JSON.stringify(headOf(cwd, 200))}`);
  return { all: all === '1' || all === 'true', ...(cwd !== null ? { cwd: kernelDirectory(cwd) } : {}) };
}

/**
 * A steer's guidance: its body's `text` (a string) or `prompt` (a non-empty array of content blocks),
 * exactly one of them (spec/daemon.md: `{expectedTurnId, text | prompt}`), else `invalid_params`
 * naming what was wrong. Until 2026-12-07 a prompt that was not an array was passed over for the
 * text, and `prompt: []` with a text was refused as having no text.
 */
function steerPrompt(body: { text?: unknown; prompt?: unknown }): ContentBlock[] {
  const hasText = body.text !== undefined;
  const hasPrompt = body.prompt !== undefined;
  if (hasText && hasPrompt) throw new TroupeError('invalid_params', 'steer takes text or prompt, not both');
  if (hasPrompt) {
    if (!Array.isArray(body.prompt)) throw new TroupeError('invalid_params', 'steer prompt must be an array of content blocks');
    if (body.prompt.length === 0) throw new TroupeError('invalid_params', 'steer prompt is empty (give at least one content block)');
    return body.prompt as ContentBlock[];
  }
  if (!hasText) throw new TroupeError('invalid_params', 'steer needs text (a string) or prompt (content blocks)');
  if (typeof body.text !== 'string') throw new TroupeError('invalid_params', 'steer text must be a string');
  return [{ type: 'text', text: body.text }];
}

const MACHINES = { session: describeMachine(sessionMachine), turn: describeMachine(turnMachine), child: describeMachine(childMachine) };

export function registerManagementRoutes(server: HttpServer, deps: ManagementDeps): void {
  const { relay, index, feeds, hub, turns } = deps;

  const summary = (e: SessionEntry) => {
    const live = relay.sessions.get(e.id);
    // The index is written at turn boundaries; the feed knows every durable event since.
    const lastSeq = Math.max(e.lastSeq, feeds.knownLastSeq(e.id) ?? 0);
    const child = relay.childOf(e.id);
    // The machines' current states, once this daemon has seen them (the inspector's list shows them).
    const machines = hub.states(e.id);
    return {
      ...e,
      lastSeq,
      child: child ? { ...child, ...(live?.health ? { rss: live.health.rss, heapUsed: live.health.heapUsed, heartbeatAt: live.health.at } : {}) } : null,
      connections: live ? live.attached.size : 0,
      // As /v1/health counts it: a process runs the session or is being started for it.
      live: live?.live ?? false,
      ...(Object.keys(machines).length > 0 ? { machines } : {}),
    };
  };
  /**
   * The session's index entry. Every session a client can name has one: the relay adds it when the
   * child answers session/new, before the answer goes (relay.ts `registered`), and the daemon's index
   * never lets an entry go while it runs. Until 2026-12-07 a live session without one was made up
   * here (model and mode '', lastSeq 0, created now): a path left from before that entry was added.
   */
  const entryOf = (id: string): SessionEntry => {
    const e = index.get(id);
    if (e && e.status !== 'deleted') return e;
    throw sessionNotFound(id);
  };

  server.route('GET', '/v1/health', () => ({
    version: deps.version,
    uptimeMs: Date.now() - deps.startedAt,
    sessions: { live: relay.liveCount(), total: index.count() },
  }));

  server.route('GET', '/v1/sessions', async (req, res) => {
    const { all, cwd } = listQuery(req.query);
    await index.refreshIfChanged();
    const page = index.list({ limit: 10_000, includeDeleted: all, ...(cwd !== undefined ? { cwd } : {}) });
    const list = page.sessions.filter((s) => all || s.status !== 'closed' || relay.sessions.has(s.id));
    // Thousands of sessions are tens of milliseconds of JSON: built in slices, with the loop free
    // between them, so that one listing does not hold up every other client (spec/daemon.md).
    const parts: string[] = [];
    for (let i = 0; i < list.length; i += LIST_SLICE) {
      if (i > 0) await nextTurn();
      parts.push(list.slice(i, i + LIST_SLICE).map((e) => JSON.stringify(summary(e))).join(','));
    }
    res.send(200, { 'Content-Type': 'application/json' }, `{"sessions":[${parts.join(',')}]}`);
  });

  server.route('GET', '/v1/sessions/:id', (req) => {
    const e = entryOf(req.params.id!);
    const turnId = turns.running(e.id);
    return { ...summary(e), ...(turnId ? { turnId } : {}), machines: hub.states(e.id), transitions: hub.transitions(e.id).slice(-50) };
  });

  server.route('GET', '/v1/sessions/:id/transitions', (req) => {
    entryOf(req.params.id!);
    return { transitions: hub.transitions(req.params.id!) };
  });

  server.route('GET', '/v1/machines', () => MACHINES);

  server.route('GET', '/v1/sessions/:id/events', (req, res) => {
    // A deleted session's log is a tombstone (its history gone); its feed does not come back with it.
    // The feed checks it again whenever a stream's feed is opened anew (an overflow, a rewind).
    const e = entryOf(req.params.id!);
    return streamSessionEvents(req, res, (cursor, mark) => feeds.subscribe(e.id, cursor, mark), (cursor) => feeds.check(e.id, cursor));
  });

  server.route('POST', '/v1/sessions/:id/cancel', async (req) => {
    const id = req.params.id!;
    entryOf(id);
    // A failed session runs nothing until revived, and says so (as to its ACP requests): until
    // 2026-12-07 cancel answered `cancelled: false`, and steer no_active_turn.
    relay.refuseFailed(id);
    // Only a running turn (or a prompt waiting for one) can be cancelled; an idle session says so rather than pretend.
    const cancelled = await relay.cancelTurn(id, () => hub.states(id).session === 'running');
    return { sessionId: id, cancelled };
  });

  server.route('POST', '/v1/sessions/:id/steer', async (req) => {
    const id = req.params.id!;
    entryOf(id);
    const body = (req.body ?? {}) as { expectedTurnId?: unknown; text?: unknown; prompt?: unknown };
    if (typeof body.expectedTurnId !== 'string') throw new TroupeError('invalid_params', 'steer needs expectedTurnId (the running turn, from _troupe/session_state or the event log)');
    const prompt = steerPrompt(body);
    relay.refuseFailed(id);
    const live = relay.sessions.get(id);
    if (!live?.live) throw new TroupeError('no_active_turn', 'the session has no running turn', { sessionId: id });
    try {
      return await live.request('_troupe/steer', { sessionId: id, expectedTurnId: body.expectedTurnId, prompt });
    } catch (err) {
      // The child's typed refusal (turn_mismatch, no_active_turn, invalid_params for a bad prompt, …)
      // keeps its code and status; only what has none is an internal error.
      // Its process gone under it is the relay's answer (agent_crashed; session_not_found with
      // `deleted` for a delete), as a client's request gets: its data (but the code) goes with it.
      const rpc = (err as { rpc?: { data?: { code?: unknown }; message?: string } }).rpc;
      const { code, ...data } = rpc?.data ?? {};
      if (typeof code === 'string' && Object.hasOwn(ERROR_CODES, code)) throw new TroupeError(code as ErrorCode, rpc?.message ?? code, { ...data, sessionId: id });
      throw err;
    }
  });

  server.route('POST', '/v1/sessions/:id/revive', async (req) => {
    const id = req.params.id!;
    await relay.revive(id);
    return { sessionId: id, revived: true };
  });

  server.route('DELETE', '/v1/sessions/:id', async (req) => {
    const id = req.params.id!;
    // ACP's session/delete takes ids it never knew; here a mistyped id is told so, as on every other
    // route, rather than answered `deleted: true`. One already deleted (a tombstone) is deleted:
    // DELETE again succeeds.
    if (!index.get(id) && !relay.sessions.has(id)) throw sessionNotFound(id);
    await relay.deleteById(id);
    return { sessionId: id, deleted: true };
  });

  // A HEAD (a probe checking the route is up) is no scrape: it must not start a new window of the
  // gauges that cover the time since the last one, or the scraper misses what happened before it
  // (until 2026-12-07 it did: HEAD runs this GET handler).
  server.route('GET', '/metrics', (req, res) => {
    res.send(200, { 'Content-Type': 'text/plain; version=0.0.4' }, deps.metrics.render({ newWindow: req.method !== 'HEAD' }));
  });
}
