/**
 * An in-memory `EventLog`: the same broker as the durable log, without a file. Durability is
 * immediate (there is nothing more durable to wait for), and an evicted event is gone for good,
 * so a cursor before `droppedThrough` is a `replay_gap`. Retention is unbounded by default.
 */
import type { AgentEvent, AgentEventInput } from '../core/events.js';
import type { Clock, EventLog, EventPage, EventWatcher, ReadOptions } from '../core/ports.js';
import { systemClock } from '../core/ports.js';
import { TroupeError } from '../core/errors.js';
import { EventBroker, type RetentionOptions } from './event-broker.js';
import { prepareEvent, stampEvent } from './event-stamp.js';
import { resolveMaxEventBytes } from './strict-json.codec.js';

export interface MemoryEventLogOptions {
  sessionId: string;
  clock?: Clock;
  retention?: RetentionOptions;
  /** Largest event in bytes of compact JSON: 1 KiB to 8 MiB, default 1 MiB. */
  maxEventBytes?: number;
  /** Default queue bound of a live watcher. */
  queueLimit?: number;
}

export class MemoryEventLog implements EventLog {
  readonly sessionId: string;
  private readonly clock: Clock;
  readonly maxEventBytes: number;
  /** The broker, exposed for tests and metrics (retention, live watchers). */
  readonly broker: EventBroker;

  constructor(options: MemoryEventLogOptions) {
    this.sessionId = options.sessionId;
    this.clock = options.clock ?? systemClock;
    this.maxEventBytes = resolveMaxEventBytes(options.maxEventBytes);
    this.broker = new EventBroker({ retention: options.retention, queueLimit: options.queueLimit });
  }

  lastSeq(): number {
    return this.broker.lastSeq();
  }

  /** Highest seq evicted from memory. */
  droppedThrough(): number {
    return this.broker.droppedThrough();
  }

  check(input: AgentEventInput): void {
    prepareEvent(input, this.sessionId, this.maxEventBytes);
  }

  /** Memory takes every event: never fails. */
  failure(): undefined {
    return undefined;
  }

  onFailure(): void {}

  append(input: AgentEventInput): AgentEvent {
    if (this.broker.isClosed()) throw new TroupeError('session_closed', 'the event log is closed', { sessionId: this.sessionId });
    const prepared = prepareEvent(input, this.sessionId, this.maxEventBytes);
    const event = stampEvent(prepared, this.broker.lastSeq() + 1, this.clock.now());
    this.broker.publish(event, prepared.bytes);
    return event;
  }

  /** Nothing to write: the broker alone holds what is appended (within its retention). */
  writePending(): void {}

  whenDurable(seq: number): Promise<void> {
    try {
      this.broker.checkCursor(seq);
    } catch (err) {
      return Promise.reject(err);
    }
    return Promise.resolve();
  }

  readAfter(cursor: number, options?: ReadOptions): Promise<EventPage> {
    return this.broker.readAfter(cursor, options);
  }

  subscribe(cursor: number, options?: { queueLimit?: number }): EventWatcher {
    return this.broker.subscribe(cursor, options);
  }

  async close(): Promise<void> {
    this.broker.close();
  }
}
