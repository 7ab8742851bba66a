/**
 * Ends a turn left open: the process that ran it died (kill -9, OOM, power; found when its log is
 * next opened), or its session stopped on an error. The turn is ended `error` with the reason's
 * code, and whatever it had open (a compaction, tool calls, a permission prompt, undelivered steers)
 * is closed, so no client ever waits on it. A compaction left open outside any turn (`/compact`) is
 * ended the same way. The ends it writes are marked (core/interruption.ts): whatever the code, a
 * reader tells them from the machines' own.
 */
import { INTERRUPTED } from '../core/interruption.js';
import { failOpenCompaction } from './compaction.effect.js';
import type { EngineCore } from './engine-core.js';
import { failUnfinishedTools } from './tool.effects.js';

export const CRASH_MESSAGE = 'The session process stopped during this turn; its last durable events are kept.';

/** Why a turn was left open: the code and message its end carries. */
export interface Interruption {
  code: string;
  message: string;
}

/** A turn found open in a log: its process died. */
export const CRASHED: Interruption = { code: 'agent_crashed', message: CRASH_MESSAGE };

/**
 * Returns true if it appended events. A prompt logged without its turn's start (killed between the
 * two writes of a large prompt) is ended the same way, as a turn of no step, so that every prompt
 * in the history has its turn and its end.
 */
export function endInterruptedTurn(core: EngineCore, why: Interruption): boolean {
  const unstarted = core.conversation.unstartedTurnId;
  if (!core.conversation.openTurn && unstarted !== undefined) {
    core.emit({ sessionId: core.sessionId, turnId: unstarted, type: 'turn_started', maxSteps: core.deps.limits.maxSteps });
  }
  // A compaction the process died in (a turn's, or /compact's outside any turn) is ended failed:
  // until 2026-12-07 it was left open, and a client shown the log saw it in progress for ever.
  const compacting = failOpenCompaction(core, why.code, undefined, INTERRUPTED);
  const open = core.conversation.openTurn;
  if (!open) return compacting;
  const base = { sessionId: core.sessionId, turnId: open.turnId };
  for (const [requestId, toolCallId] of open.permissions) {
    core.emit({ ...base, type: 'permission_resolved', toolCallId, requestId, outcome: 'cancelled', decidedBy: 'policy' });
  }
  const output = why === CRASHED ? 'The session process stopped before this tool call finished.' : `The session stopped before this tool call finished: ${why.message}`;
  failUnfinishedTools(core, open.turnId, why.code, output, INTERRUPTED);
  for (const steerId of open.steers) {
    core.emit({ ...base, type: 'steer_rejected', steerId, expectedTurnId: open.turnId, code: 'turn_ended' });
  }
  core.emit({ ...base, type: 'turn_completed', stopReason: 'error', errorCode: why.code, message: why.message, steps: open.steps, ...INTERRUPTED });
  return true;
}
