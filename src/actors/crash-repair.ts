/**
 * Repairs a log whose last turn started and never completed: the process that ran it died
 * (kill -9, OOM, power). The turn is ended `error` / `agent_crashed`, and whatever it had open (tool
 * calls, a permission prompt, undelivered steers) is closed, so no client ever waits on it.
 */
import type { EngineCore } from './engine-core.js';

export const CRASH_MESSAGE = 'The session process stopped during this turn; its last durable events are kept.';

/** Returns true if it appended repair events. */
export function repairInterruptedTurn(core: EngineCore): boolean {
  const open = core.conversation.openTurn;
  if (!open) return false;
  const base = { sessionId: core.sessionId, turnId: open.turnId };
  for (const [requestId, toolCallId] of open.permissions) {
    core.emit({ ...base, type: 'permission_resolved', toolCallId, requestId, outcome: 'cancelled', decidedBy: 'policy' });
  }
  for (const [toolCallId, status] of open.tools) {
    if (status === 'completed' || status === 'failed') continue;
    const output = 'The session process stopped before this tool call finished.';
    core.emit({ ...base, type: 'tool_call_updated', toolCallId, status: 'failed', content: [{ type: 'text', text: output }], output, errorCode: 'agent_crashed' });
  }
  for (const steerId of open.steers) {
    core.emit({ ...base, type: 'steer_rejected', steerId, expectedTurnId: open.turnId, code: 'turn_ended' });
  }
  core.emit({ ...base, type: 'turn_completed', stopReason: 'error', errorCode: 'agent_crashed', message: CRASH_MESSAGE, steps: open.steps });
  return true;
}
