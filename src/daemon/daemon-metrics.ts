/** The daemon's metrics: what /metrics exposes, named once here. */
import type { SessionIndex } from '../store/index.js';
import type { ChildPool } from '../actors/child-pool.actor.js';
import type { AcpTransportHandle } from './http/http-server.js';
import type { Metrics } from './metrics.js';
import type { Relay } from './relay/relay.js';

export function daemonMetrics(m: Metrics) {
  const spawned = m.counter('troupe_children_spawned_total', 'Child processes started (pool and direct).');
  const exits = m.counter('troupe_child_exits_total', 'Child processes that ended, by reason and whether it was a crash.');
  const restarts = m.counter('troupe_child_restarts_total', 'Crashed children restarted from their session log.');
  const failed = m.counter('troupe_sessions_failed_total', 'Sessions that exceeded their restart intensity.');
  const events = m.counter('troupe_events_total', 'Durable session events reported by children.');
  return {
    spawned: () => spawned(),
    events: (n: number) => events({}, n),
    exited: (reason: string, info: { crashed: boolean; willRestart: boolean; failed: boolean }) => {
      exits({ reason, crashed: String(info.crashed) });
      if (info.willRestart) restarts();
      if (info.failed) failed();
    },
    gauges: (relay: Relay, index: SessionIndex, pool: ChildPool, transport: AcpTransportHandle) => {
      m.gauge('troupe_sessions_live', 'Sessions with a running child.', () => relay.liveCount());
      m.gauge('troupe_sessions_stored', 'Sessions in the index (not deleted).', () => index.count());
      m.gauge('troupe_pool_warm', 'Warm children waiting in the pool.', () => pool.available);
      m.gauge('troupe_acp_connections', 'Open ACP transport connections.', () => transport.connections().length);
      m.gauge('troupe_daemon_rss_bytes', 'Resident memory of the daemon process.', () => process.memoryUsage().rss);
      const live = () => [...relay.sessions.values()].filter((s) => s.live && s.health);
      m.gauge('troupe_children_rss_bytes', 'Resident memory of all live children, from their last heartbeats.', () => live().reduce((n, s) => n + s.health!.rss, 0));
      m.gauge('troupe_children_heap_bytes', 'V8 heap in use in all live children, from their last heartbeats.', () => live().reduce((n, s) => n + s.health!.heapUsed, 0));
    },
  };
}
