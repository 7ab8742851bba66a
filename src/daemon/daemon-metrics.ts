/** The daemon's metrics: what /metrics exposes, named once here. */
import type { SessionIndex } from '../store/index.js';
import type { ChildPool } from '../actors/child-pool.actor.js';
import type { AcpTransportHandle } from './http/http-server.js';
import type { ByteMeter } from './http/http-exchange.js';
import type { Metrics } from './metrics.js';
import type { Relay } from './relay/relay.js';
import type { SessionFeeds } from './session-feeds.js';
import { LoopWatch } from './loop-watch.js';

export function daemonMetrics(m: Metrics) {
  const spawned = m.counter('troupe_children_spawned_total', 'Child processes started (pool and direct).');
  const exits = m.counter('troupe_child_exits_total', 'Child processes that ended, by reason and whether it was a crash.', { labelled: true });
  const restarts = m.counter('troupe_child_restarts_total', 'Crashed children restarted from their session log.');
  const failed = m.counter('troupe_sessions_failed_total', 'Sessions that exceeded their restart intensity.');
  const slow = m.counter('troupe_child_slow_waits_total', 'Times a silent child was found short of CPU (the machine busy) and waited for, not killed as hung.');
  const events = m.counter('troupe_events_total', 'Durable session events reported by children.');
  // From a millisecond (a warm session/new, a mode switch) to minutes (a prompt is a whole turn).
  const requests = m.histogram(
    'troupe_acp_request_duration_seconds',
    'ACP requests answered, by method and outcome (ok, error): one a session process answered from when the relay forwarded it to its answer, one the daemon answered itself (initialize, session/list, session/delete, a session/close another client stays attached to, a refusal) from when it took it. A session/new includes the start of a process when no warm one waits; a session/prompt is the whole turn.',
    [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
  );
  const loop = new LoopWatch();
  // Read once per scrape (the gauges below share it), then a new window starts.
  let window = loop.read();
  const sec = (ms: number) => Math.round(ms * 1000) / 1e6;
  m.gauge('troupe_event_loop_delay_p50_seconds', 'Event-loop delay, median, since the last scrape (monitorEventLoopDelay).', () => ((window = loop.read()), sec(window.delayP50Ms)));
  m.gauge('troupe_event_loop_delay_p99_seconds', 'Event-loop delay, 99th percentile, since the last scrape.', () => sec(window.delayP99Ms));
  m.gauge('troupe_event_loop_delay_max_seconds', 'Event-loop delay, max, since the last scrape.', () => sec(window.delayMaxMs));
  m.gauge('troupe_event_loop_blocked_max_seconds', 'Longest stall since the last scrape during which the daemon used the CPU (its own work: JavaScript, GC, fork).', () => sec(window.blockedMaxMs));
  m.gauge('troupe_event_loop_starved_max_seconds', 'Longest stall since the last scrape during which the daemon mostly waited for a core (other processes ran).', () => sec(window.starvedMaxMs));
  // A count that only grows is a counter (until 2026-12-07 two gauges, which rate() does not read as counts).
  m.counterFrom('troupe_event_loop_stalls_over_50ms_total', 'Stalls over 50 ms since start, by cause: blocked (the daemon busy) or starved (it waited for a core).', () => [
    [{ cause: 'blocked' }, loop.stallsOver50.blocked],
    [{ cause: 'starved' }, loop.stallsOver50.starved],
  ]);
  m.gauge('troupe_daemon_heap_used_bytes', 'V8 heap in use in the daemon.', () => process.memoryUsage().heapUsed);
  m.afterScrape(() => loop.reset());
  return {
    spawned: () => spawned(),
    slowChild: () => slow(),
    answered: (method: string, seconds: number, ok: boolean) => requests(seconds, { method, outcome: ok ? 'ok' : 'error' }),
    events: (n: number) => events({}, n),
    exited: (reason: string, info: { crashed: boolean; willRestart: boolean; failed: boolean }) => {
      exits({ reason, crashed: String(info.crashed) });
      if (info.willRestart) restarts();
      if (info.failed) failed();
    },
    gauges: (relay: Relay, index: SessionIndex, pool: ChildPool, transport: AcpTransportHandle, feeds: SessionFeeds, sse: () => { streams: number; queuedBytes: number }, managementBytes: ByteMeter) => {
      // Body bytes only (headers aside): SSE streams as written, with their framing and keep-alives.
      m.counterFrom('troupe_acp_bytes_total', 'Bytes of ACP messages on /acp, by transport (http: POST bodies received, response bodies and SSE streams sent; ws: text frames) and direction.', () => {
        const { http, ws } = transport.traffic();
        return [
          [{ transport: 'http', direction: 'received' }, http.received],
          [{ transport: 'http', direction: 'sent' }, http.sent],
          [{ transport: 'ws', direction: 'received' }, ws.received],
          [{ transport: 'ws', direction: 'sent' }, ws.sent],
        ];
      });
      m.counterFrom('troupe_management_bytes_total', 'Body bytes of every other route (the management API and its event streams, /metrics, the inspector), by direction.', () => [
        [{ direction: 'received' }, managementBytes.received],
        [{ direction: 'sent' }, managementBytes.sent],
      ]);
      m.gauge('troupe_sessions_live', 'Sessions with a running child.', () => relay.liveCount());
      // What the daemon keeps per session beyond the index: both go back down as sessions come to rest.
      m.gauge('troupe_sessions_held', 'Sessions the relay holds in memory: a child, a client attached or a request in flight (or failed).', () => relay.sessions.size);
      m.gauge('troupe_event_feeds_open', 'Sessions whose /v1 event feed has a watcher.', () => feeds.open);
      // Nonzero only when a child's reports were lost (one killed after writing them): a gap each open feed read from the log.
      m.counterFrom('troupe_event_feed_gap_fill_events_total', 'Durable events an open /v1 event feed was not told of and read from the session log to fill the gap.', () => [[{}, feeds.filled.events]]);
      m.counterFrom('troupe_event_feed_gap_fill_bytes_total', 'Bytes of those events (as the feed counts them: characters of their strings plus 256 each).', () => [[{}, feeds.filled.bytes]]);
      m.gauge('troupe_event_feed_queued_bytes', 'Events pushed to /v1 event-stream watchers and not yet taken by their streams (bounded per watcher, and in all by --feed-queue-mb).', () => feeds.queuedBytes);
      m.gauge('troupe_sessions_stored', 'Sessions in the index (not deleted).', () => index.count());
      m.gauge('troupe_pool_warm', 'Warm children waiting in the pool.', () => pool.available);
      m.gauge('troupe_acp_connections', 'Open ACP transport connections.', () => transport.connections().length);
      m.gauge('troupe_acp_retained_bytes', 'Output already delivered on SSE streams, kept for Last-Event-ID resume (within --acp-retain-mb per connection and --acp-retain-total-mb in all).', () => transport.retainedBytes());
      m.gauge('troupe_acp_client_requests_open', 'Requests of session processes sent to ACP clients (a permission, a file, a terminal) that the client has not answered and the process has not withdrawn.', () =>
        transport.connections().reduce((n, c) => n + c.clientRequestsOpen, 0),
      );
      m.gauge('troupe_acp_unsent_bytes', 'ACP output no client has taken yet, over all connections (within --acp-unsent-total-mb: over it the connections holding most are closed).', () => transport.unsentBytes());
      m.gauge('troupe_sse_streams', 'Open /v1 and inspector SSE streams.', () => sse().streams);
      m.gauge('troupe_sse_queued_bytes', 'Output of /v1 and inspector SSE streams waiting for their sockets to take it.', () => sse().queuedBytes);
      m.gauge('troupe_daemon_rss_bytes', 'Resident memory of the daemon process.', () => process.memoryUsage().rss);
      const live = () => [...relay.sessions.values()].filter((s) => s.live && s.health);
      m.gauge('troupe_children_rss_bytes', 'Resident memory of all live children, from their last heartbeats.', () => live().reduce((n, s) => n + s.health!.rss, 0));
      m.gauge('troupe_children_heap_bytes', 'V8 heap in use in all live children, from their last heartbeats.', () => live().reduce((n, s) => n + s.health!.heapUsed, 0));
    },
  };
}
