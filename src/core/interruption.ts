/**
 * How the log tells apart the events crash repair writes (src/actors/crash-repair.ts) from the
 * machines' own. A turn left open when its machines stopped (its process died, or its session
 * stopped: the log failed, a machine failed) is ended by the repair, with the stop's code
 * (`agent_crashed`, `log_write_failed`, `internal_error`, …): failed tool calls, a failed compaction
 * and the turn's `error` end look like the ones the machines write, and no code says which is which.
 * So the repair marks them, and readers (the inspector's replay, src/machines/replay.ts) ask this
 * file, not the code: until 2026-12-07 the replay knew a repair by `agent_crashed` alone, and a turn
 * ended by a stop's repair replayed as the turn going on or ending by itself, with no restart.
 */
import type { AgentEvent } from './events.js';

/** Spread into every tool call, compaction and turn end crash repair writes. */
export const INTERRUPTED = { interrupted: true } as const;

/** What marks a repair's event: `INTERRUPTED`, or nothing (a machine's own event, or none the repair marks). */
export type InterruptionMark = typeof INTERRUPTED | Record<string, never>;

/**
 * Did crash repair write `e` (so no machine did anything then)? A permission prompt it ends is the
 * one `permission_resolved` decided by `policy` (the policy otherwise fails the call instead). Logs
 * written before 2026-12-07 carry no mark: their repairs are known by `agent_crashed`, which only the
 * repair ever logged (their stops' repairs, unmarked, are not told apart).
 */
export function isInterruptionRepair(e: AgentEvent): boolean {
  switch (e.type) {
    case 'permission_resolved':
      return e.decidedBy === 'policy';
    case 'tool_call_updated':
    case 'compaction_completed':
    case 'turn_completed':
      return e.interrupted === true || e.errorCode === 'agent_crashed';
    default:
      return false;
  }
}
