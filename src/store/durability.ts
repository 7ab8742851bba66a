/**
 * The durability policy of a log file: which events force an fdatasync at once, and how long other
 * events may wait for a group commit. See spec/event-log.md §3.
 */
import type { AgentEvent, AgentEventType } from '../core/events.js';
import { TroupeError } from '../core/errors.js';

/**
 * - `group` (default): barrier events are synced at once (with everything before them); other
 *   events are synced by a group commit at most `groupCommitMs` after they were appended.
 * - `always`: every event is a barrier, synced as soon as possible; appends in the same tick, or
 *   made while the previous fdatasync runs, share the next one.
 * - `never`: events are written out every `groupCommitMs` but synced only when someone awaits
 *   `whenDurable` or the log closes. For benchmarks and throw-away sessions.
 */
export type SyncPolicy = 'group' | 'always' | 'never';

export interface DurabilityOptions {
  sync?: SyncPolicy;
  /** Longest wait of a non-barrier event for its fdatasync, in ms (1–10000, default 5). */
  groupCommitMs?: number;
  /** Overrides which events are barriers (default: `isBarrierEvent`). */
  isBarrier?: (event: AgentEvent) => boolean;
}

/** Turn boundaries, permission decisions and session lifecycle: a client may act on these, so they must survive a crash once reported. */
export const BARRIER_EVENT_TYPES: ReadonlySet<AgentEventType> = new Set<AgentEventType>([
  'session_created',
  'session_configured',
  'session_closed',
  'user_message',
  'turn_started',
  'turn_completed',
  'permission_requested',
  'permission_resolved',
  'steer_received',
  'steer_applied',
  'steer_rejected',
  'compaction_completed',
]);

export function isBarrierEvent(event: AgentEvent): boolean {
  return BARRIER_EVENT_TYPES.has(event.type);
}

export interface ResolvedDurability {
  sync: SyncPolicy;
  groupCommitMs: number;
  isBarrier: (event: AgentEvent) => boolean;
}

export function resolveDurability(options: DurabilityOptions = {}): ResolvedDurability {
  const sync = options.sync ?? 'group';
  if (sync !== 'group' && sync !== 'always' && sync !== 'never') throw new TroupeError('invalid_params', `unknown sync policy ${String(sync)}`);
  const ms = options.groupCommitMs ?? 5;
  if (!Number.isFinite(ms) || ms < 1 || ms > 10_000) throw new TroupeError('invalid_params', `groupCommitMs must be from 1 to 10000, got ${ms}`);
  return { sync, groupCommitMs: ms, isBarrier: options.isBarrier ?? isBarrierEvent };
}
