/** What a RelaySession needs from the relay that owns it. */
import type { Logger } from '../../core/ports.js';
import type { AgentEvent } from '../../core/events.js';
import type { ReportedEvents } from '../../wire/control-messages.js';
import type { ChildSpec } from '../../machines/restart-window.js';
import type { ChildExit } from '../../actors/child-process.actor.js';
import type { ChildPool } from '../../actors/child-pool.actor.js';
import type { RelaySession } from './relay-session.js';

export interface RelayOptions {
  childSpec: ChildSpec;
  idleMs: number;
  heartbeatTimeoutMs: number;
  /** A child that has not said hello this long after its spawn is judged (--startup-timeout-ms). */
  startupTimeoutMs: number;
  /** Sessions with a running child at once; one more is `capacity_exceeded`. */
  maxLiveSessions: number;
}

export interface RelayContext {
  readonly options: RelayOptions;
  readonly pool: ChildPool;
  readonly logger: Logger;
  readonly version: string;
  /** session/new answered: the session has its id. */
  registered(session: RelaySession, sessionId: string, result: Record<string, unknown>): void;
  /** session/fork answered: `sessionId` is a new session, made (and for now held open) by `source`'s child. */
  forked(source: RelaySession, sessionId: string, mcpServers: unknown[]): void;
  /** session/new failed: the child serves nothing and is stopped. */
  unregistered(session: RelaySession): void;
  /** Durable events from the child (`events` decoded when read: ReportedEvents). */
  events(session: RelaySession, sessionId: string, reported: ReportedEvents): void;
  /** Where the index entry of `sessionId` stands (INDEXED_SEQ): told to the child that opens it. */
  indexedSeq(sessionId: string): number | undefined;
  /** What the log of a session the child opened held beyond that (the `indexed` control message). */
  indexed(sessionId: string, events: AgentEvent[], rewound?: number): void;
  /**
   * A machine of `sessionId` changed state: the child machine of a relay session, or a session or
   * turn machine its process reports (for the session that process names: see RelaySession.control).
   */
  transition(sessionId: string | undefined, machine: 'session' | 'turn' | 'child', state: string, event: string, at: number): void;
  heartbeat(session: RelaySession, hb: { rss: number; heapUsed: number; events: number }): void;
  /** The session's child was silent but short of CPU, and is waited for (SupervisedChild). */
  slowChild(session: RelaySession): void;
  exited(session: RelaySession, exit: ChildExit, info: { crashed: boolean; willRestart: boolean; failed: boolean }): void;
  /** A request forwarded to a session's process was answered (`ok`: with a result), `seconds` after it was forwarded. */
  answered(method: string, seconds: number, ok: boolean): void;
}
