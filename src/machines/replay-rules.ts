/**
 * The log-reading rules of the replay (replay.ts): which turn effect emits which AgentEvent, when
 * the log shows an effect has finished, and what the effect returned to the turn machine. They
 * mirror what the session engine's effects emit (src/actors/*.effect.ts); test/unit/inspector
 * checks the replayed states against the states a live engine reports.
 */
import type { AgentEvent } from '../core/events.js';
import type { ToolCallRequest } from '../core/ports.js';
import type { StepOutcome } from './turn.machine.js';

export const EFFECTS = ['preflight', 'compact', 'modelStep', 'decideTool', 'askPermission', 'runTool'] as const;
export type Effect = (typeof EFFECTS)[number];

/** One invocation of an effect during the replay, and the log events it has emitted so far (of a model step, its tool calls only: nothing else decides what it returned). */
export interface EffectRun {
  effect: Effect;
  input: { turnId: string; call?: ToolCallRequest };
  emitted: AgentEvent[];
}

const MODEL_EVENTS = new Set<AgentEvent['type']>(['agent_message_chunk', 'agent_thought_chunk', 'reasoning_part', 'tool_call_started', 'usage', 'model_retry']);

const ofCall = (run: EffectRun, e: AgentEvent) => 'toolCallId' in e && e.toolCallId === run.input.call?.id;
const failedCall = (run: EffectRun, e: AgentEvent) => e.type === 'tool_call_updated' && ofCall(run, e) && e.status === 'failed';
const has = (run: EffectRun, test: (e: AgentEvent) => boolean) => run.emitted.some(test);

/** Could this effect, in the state its emitted events show, have emitted `e`? */
export function owns(run: EffectRun, e: AgentEvent): boolean {
  if (finished(run)) return false;
  switch (run.effect) {
    case 'preflight':
      return false;
    case 'compact':
      // model_retry: the summary's model call, made again.
      return e.type === 'compaction_started' ? run.emitted.length === 0 : e.type === 'compaction_completed' || e.type === 'usage' || e.type === 'model_retry';
    case 'modelStep':
      return MODEL_EVENTS.has(e.type);
    case 'decideTool':
      return (e.type === 'permission_resolved' && e.decidedBy !== 'user' && ofCall(run, e)) || failedCall(run, e);
    case 'askPermission':
      return (
        (e.type === 'permission_requested' && ofCall(run, e) && run.emitted.length === 0) ||
        (e.type === 'permission_resolved' && e.decidedBy === 'user' && ofCall(run, e)) ||
        (failedCall(run, e) && has(run, (x) => x.type === 'permission_resolved'))
      );
    case 'runTool':
      return (e.type === 'tool_call_updated' && ofCall(run, e)) || e.type === 'plan_updated';
  }
}

/** Has the effect emitted its last event (so it returned right after it)? */
export function finished(run: EffectRun): boolean {
  switch (run.effect) {
    case 'compact':
      return has(run, (e) => e.type === 'compaction_completed');
    case 'decideTool':
      return has(run, (e) => failedCall(run, e));
    case 'askPermission': {
      const resolved = run.emitted.find((e) => e.type === 'permission_resolved');
      if (!resolved || resolved.type !== 'permission_resolved') return false;
      return allows(resolved.outcome) || has(run, (e) => failedCall(run, e));
    }
    case 'runTool':
      return has(run, (e) => e.type === 'tool_call_updated' && ofCall(run, e) && (e.status === 'completed' || e.status === 'failed'));
    default:
      return false;
  }
}

const allows = (outcome: string) => outcome === 'allow_once' || outcome === 'allow_always';

export type EffectOutput =
  | { ok: true; output: unknown }
  | { ok: false; error: { code: string; message: string; retryAfterMs?: number; vendorMessage?: string; compactable?: boolean } };

/**
 * What the effect returned (or threw), judged from what it emitted and from `next`, the first log
 * event it could not have emitted (undefined when it ended on its own last event).
 */
export function outputFor(run: EffectRun, next: AgentEvent | undefined): EffectOutput {
  // A turn that ended in error while this effect ran: the effect threw that error.
  // Preflight emits nothing: it is the one that threw only if the turn never reached a model step.
  const threw = run.effect !== 'preflight' || (next?.type === 'turn_completed' && next.steps === 0);
  if (next?.type === 'turn_completed' && next.stopReason === 'error' && !finished(run) && threw) {
    const retry = next.retryAfterMs !== undefined ? { retryAfterMs: next.retryAfterMs } : {};
    const vendor = next.vendorMessage !== undefined ? { vendorMessage: next.vendorMessage } : {};
    return { ok: false, error: { code: next.errorCode ?? 'internal_error', message: next.message ?? 'failed', ...retry, ...vendor } };
  }
  switch (run.effect) {
    case 'preflight':
      return { ok: true, output: { overBudget: next?.type === 'compaction_started' && next.reason === 'preflight' } };
    case 'compact': {
      const done = run.emitted.find((e) => e.type === 'compaction_completed');
      if (done?.type === 'compaction_completed' && done.status === 'failed') return { ok: false, error: { code: done.errorCode ?? 'internal_error', message: 'compaction failed' } };
      return { ok: true, output: undefined };
    }
    case 'modelStep': {
      // The overflow compaction that follows shows the overflow was one a compaction could help (the
      // turn machine compacts only then); one that ended the turn at once is the error branch above.
      if (next?.type === 'compaction_started' && next.reason === 'overflow') return { ok: false, error: { code: 'context_overflow', message: 'context overflow', compactable: true } };
      const toolCalls: ToolCallRequest[] = run.emitted.flatMap((e) => (e.type === 'tool_call_started' ? [{ id: e.toolCallId, name: e.name, input: e.input }] : []));
      const stop: StepOutcome['stop'] =
        toolCalls.length > 0 ? 'tool_use' : next?.type === 'turn_completed' && (next.stopReason === 'max_tokens' || next.stopReason === 'refusal') ? next.stopReason : 'end_turn';
      return { ok: true, output: { stop, toolCalls } satisfies StepOutcome };
    }
    case 'decideTool':
      return { ok: true, output: finished(run) ? 'deny' : next?.type === 'permission_requested' ? 'ask' : 'allow' };
    case 'askPermission': {
      const resolved = run.emitted.find((e) => e.type === 'permission_resolved');
      return { ok: true, output: resolved?.type === 'permission_resolved' && allows(resolved.outcome) ? 'allow' : 'deny' };
    }
    case 'runTool':
      return { ok: true, output: undefined };
  }
}
