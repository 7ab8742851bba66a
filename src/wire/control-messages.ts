/**
 * What a supervised child tells its daemon on the control channel (fd 3). stdout stays ACP only.
 * spec/daemon.md §Control channel.
 */
import type { AgentEvent } from '../core/events.js';

/**
 * The JSON-RPC id of the `initialize` the daemon sends a pooled child on stdin before any session
 * needs it (spec/daemon.md §Warm pool): relayed ids are numbers, so it never meets one, and the child
 * knows this `initialize` is no client waiting (its warm-up goes on).
 */
export const POOL_INITIALIZE_ID = 'troupe-pool-initialize';

/** A machine transition, as the inspector draws it. */
export interface MachineTransition {
  sessionId: string;
  /** `session` or `turn` (the daemon adds `child` for its own supervisor machine). */
  machine: 'session' | 'turn';
  /** The state after the transition, as a dotted path (`tools.awaitingPermission`). */
  state: string;
  /** The event that caused it (`PROMPT`, `done: modelStep`, …). */
  event: string;
  at: number;
}

export type ControlMessage =
  /** First message: the child is up. */
  | { t: 'hello'; pid: number; version: string }
  /** Every heartbeat interval: the child's event loop is alive. */
  | { t: 'hb'; at: number; rss: number; heapUsed: number; events: number }
  /**
   * Session events once durable, in seq order (the daemon folds them into its index and serves them).
   * `count`, `lastSeq` and `indexed` (the INDEXED_EVENT_TYPES among them) say what a burst holds
   * without its events being read: decoded from a `records` message, `events` is decoded on its first
   * read, and most bursts reach no feed (spec/daemon.md §Control channel). `lastSeq` is absent only
   * from a part of a run of records split over several messages but its last (`count` 0 there: the
   * last part counts the run's events).
   */
  | { t: 'events'; sessionId: string; events: AgentEvent[]; count: number; lastSeq?: number; indexed: AgentEvent[] }
  /**
   * Once, as a session opens: the indexed events (INDEXED_EVENT_TYPES) its log holds after the seq
   * the daemon's index entry had folded (INDEXED_SEQ in the opening request), which the daemon's
   * index missed. For the index only: they are history, not news for the session's feeds.
   * `rewound`: the log's last seq once opened, when it is below INDEXED_SEQ (the log lost events
   * the entry folded: a machine crash, a damaged tail cut); `events` are then the log's indexed
   * events from its start, the first slice of them, and the entry is made again from them.
   */
  | { t: 'indexed'; sessionId: string; events: AgentEvent[]; rewound?: number }
  | ({ t: 'transition' } & MachineTransition);

/**
 * What goes on the pipe: the messages above, and durable events as the log's own records (bytes
 * exactly as in the session's log file, spec/event-log.md §1), which the child forwards without
 * encoding them again. The decoder turns a `records` message into an `events` message.
 */
/** What an `events` message tells of a burst (its events decoded on their first read). */
export type ReportedEvents = Omit<Extract<ControlMessage, { t: 'events' }>, 't' | 'sessionId'>;

export type ControlWireMessage =
  | Exclude<ControlMessage, { t: 'events' }>
  | { t: 'events'; sessionId: string; events: AgentEvent[] }
  /**
   * `n`: how many events the records hold, `last`: the last seq, `ix`: the indexed events among them
   * (so that the daemon need not decode the records to learn them). A run of records too big for one
   * message goes in parts, each whole records: the parts before the last have `n: 0` and no `last`.
   */
  | { t: 'records'; sessionId: string; records: Uint8Array; n: number; last?: number; ix?: AgentEvent[] };
