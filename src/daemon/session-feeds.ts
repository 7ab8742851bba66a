/**
 * Event feeds for the management API: per session, a cursor broker fed with the durable events its
 * child reports, backed by the session's log file for older cursors. Gaps (a feed created while
 * events were already flowing) are filled from the file, which holds every durable event.
 */
import { existsSync, readFileSync } from 'node:fs';
import type { AgentEvent } from '../core/events.js';
import type { EventWatcher } from '../core/ports.js';
import { TroupeError } from '../core/errors.js';
import { decodeLogBuffer, EventBroker, sessionLogPath, sessionsDir } from '../store/index.js';

const RETENTION = { maxEvents: 2_000, maxBytes: 4 * 1024 * 1024 };

export class SessionFeeds {
  private readonly brokers = new Map<string, EventBroker>();
  /** Latest seq seen of sessions nobody has opened a feed for (they get no broker: see publish). */
  private readonly seen = new Map<string, number>();

  constructor(private readonly home: string) {}

  /**
   * Events of a session. Until someone opens a feed on it, only its latest seq is kept: the log file
   * holds every durable event and a broker made later starts from it, so buffering every streamed
   * event of every session here (and reading its log to start a broker) would be work for nobody.
   */
  publish(sessionId: string, events: AgentEvent[]): void {
    const broker = this.brokers.get(sessionId);
    if (!broker) {
      const last = events[events.length - 1]?.seq;
      if (last !== undefined && last > (this.seen.get(sessionId) ?? 0)) this.seen.set(sessionId, last);
      return;
    }
    for (const e of events) {
      if (e.seq <= broker.lastSeq()) continue;
      if (e.seq > broker.lastSeq() + 1) for (const missed of this.fromFile(sessionId, broker.lastSeq(), e.seq - 1)) broker.publish(missed, 0);
      broker.publish(e, approximateBytes(e));
    }
  }

  /** Replay after `cursor`, then live. Throws `session_not_found`, `invalid_cursor`; the iterator may throw `replay_gap`. */
  subscribe(sessionId: string, cursor: number, queueLimit = 4096): EventWatcher {
    if (!existsSync(sessionLogPath(sessionsDir(this.home), sessionId))) throw new TroupeError('session_not_found', `no session ${sessionId}`, { sessionId });
    return this.broker(sessionId).subscribe(cursor, { queueLimit });
  }

  lastSeq(sessionId: string): number {
    return this.broker(sessionId).lastSeq();
  }

  /** The latest durable seq this daemon has seen for the session, without opening a feed for it. */
  knownLastSeq(sessionId: string): number | undefined {
    return this.brokers.get(sessionId)?.lastSeq() ?? this.seen.get(sessionId);
  }

  close(): void {
    for (const b of this.brokers.values()) b.close();
  }

  private broker(sessionId: string): EventBroker {
    let broker = this.brokers.get(sessionId);
    if (broker) return broker;
    const path = sessionLogPath(sessionsDir(this.home), sessionId);
    let initial = 0;
    let first = 1;
    if (existsSync(path)) {
      const scan = readLogFileSyncSafe(path);
      initial = scan.lastSeq;
      first = scan.firstSeq;
    }
    broker = new EventBroker({
      retention: RETENTION,
      initialSeq: initial,
      cold: { firstSeq: () => first, read: async (after, max) => this.fromFile(sessionId, after, after + max) },
    });
    this.brokers.set(sessionId, broker);
    this.seen.delete(sessionId);
    return broker;
  }

  private fromFile(sessionId: string, after: number, through: number): AgentEvent[] {
    const { events } = readLogFileSyncSafe(sessionLogPath(sessionsDir(this.home), sessionId));
    return events.filter((e) => e.seq > after && e.seq <= through);
  }
}

/** The whole file, read-only (never repaired: the child owns it). Synchronous: feeds are opened rarely. */
function readLogFileSyncSafe(path: string): { events: AgentEvent[]; lastSeq: number; firstSeq: number } {
  const { scan, events } = decodeLogBuffer(readFileSync(path), path);
  return { events, lastSeq: scan.lastSeq, firstSeq: scan.firstSeq ?? scan.lastSeq + 1 };
}

/**
 * An event's size for the feed's memory bound, without serializing it: the text it carries plus a
 * fixed overhead for the envelope. The bound needs an order of magnitude, not an exact count.
 */
function approximateBytes(e: AgentEvent): number {
  const text = 'text' in e && typeof e.text === 'string' ? e.text.length : 0;
  const output = 'output' in e && typeof e.output === 'string' ? e.output.length : 0;
  return 256 + text + output;
}
