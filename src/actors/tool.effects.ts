/**
 * The tool half of a turn: decide whether a call may run, ask a person when the mode says so, run
 * it, and record the result the model will see. Denials and failures are results, not exceptions:
 * the model reads them and the turn goes on.
 */
import { isTroupeError, type ErrorCode } from '../core/errors.js';
import { newLocalId } from '../core/ids.js';
import { oneLineClipped } from '../core/one-line.js';
import type { PermissionOutcome, ToolContent } from '../core/events.js';
import type { InterruptionMark } from '../core/interruption.js';
import type { ToolCallRequest } from '../core/ports.js';
import type { EngineCore } from './engine-core.js';
import { emitToolResult } from './tool-result-fit.js';

/** Record a call's final result (failed), as the model will read it. `mark`: crash repair's (core/interruption.ts). */
export function failTool(core: EngineCore, turnId: string, call: Pick<ToolCallRequest, 'id'>, errorCode: string, output: string, mark: InterruptionMark = {}): void {
  // The output a terminal showed stays visible: content replaces the call's earlier content.
  const terminals = core.shownTerminals.get(call.id) ?? [];
  core.shownTerminals.delete(call.id);
  emitToolResult(core, {
    type: 'tool_call_updated',
    sessionId: core.sessionId,
    turnId,
    toolCallId: call.id,
    status: 'failed',
    content: [...terminals, { type: 'text', text: output }],
    output,
    errorCode,
    ...mark,
  });
}

/**
 * Fails every call of the open turn that has no final status yet, as the turn ends: a call announced
 * and never run (the later calls of a step a cancel cut short) would otherwise be shown pending for
 * ever, live and in every replay of the log.
 */
export function failUnfinishedTools(core: EngineCore, turnId: string, errorCode: string, output: string, mark: InterruptionMark = {}): void {
  const open = core.conversation.openTurn;
  if (open?.turnId !== turnId) return;
  for (const [id, status] of open.tools) {
    if (status !== 'completed' && status !== 'failed') failTool(core, turnId, { id }, errorCode, output, mark);
  }
}

export async function decideTool(core: EngineCore, turnId: string, call: ToolCallRequest, signal: AbortSignal): Promise<'allow' | 'ask' | 'deny'> {
  const description = core.descriptions.get(call.id);
  if (!description || description instanceof Error) {
    const code = isTroupeError(description) ? description.code : 'unknown_tool';
    failTool(core, turnId, call, code, description?.message ?? `unknown tool '${call.name}'`);
    return 'deny';
  }
  const conv = core.conversation;
  const decision = core.deps.policy.decide(call, description, conv.mode, conv.remembered);
  if (decision.kind === 'ask') return previewAhead(core, turnId, call, signal);
  if (decision.by === 'remembered') {
    core.emit({
      type: 'permission_resolved',
      sessionId: core.sessionId,
      turnId,
      toolCallId: call.id,
      requestId: newLocalId('perm'),
      outcome: decision.kind === 'allow' ? 'allow_always' : 'reject_always',
      decidedBy: 'remembered',
    });
  }
  if (decision.kind === 'allow') return 'allow';
  failTool(core, turnId, call, 'permission_denied', decision.reason);
  return 'deny';
}

/**
 * The codes of a preview's error that say the call cannot succeed as asked, whoever allows it:
 * `tool_failed` (the tool looked and refused: old_string not in the file or not unique, no such file,
 * too large, not text, a write under an editor's unsaved changes…), `path_outside_workspace`, and
 * `invalid_params` and `unknown_tool` (the input or the name; describe finds most, the path guard an
 * empty or NUL-bearing path). Not `tool_timeout` (an editor that did not answer in time may answer
 * the run), `request_cancelled`, `internal_error`, nor an error that is no TroupeError (a bug, a
 * system error no tool has judged): then the person is asked, as before, with nothing shown.
 */
const CANNOT_SUCCEED: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['tool_failed', 'path_outside_workspace', 'invalid_params', 'unknown_tool']);

/**
 * Before a person is asked: what allowing the call would do (an edit's diff), kept for the prompt. A
 * call whose preview says it cannot succeed fails now with that error, as its run would have (one
 * failed tool_call_updated: the log, the client and the model see a failed call), and nobody is asked
 * to allow what cannot happen. Until 2026-12-07 the person was asked, shown no diff, and the call
 * failed once allowed. The run checks again all the same: the file may change before it.
 */
async function previewAhead(core: EngineCore, turnId: string, call: ToolCallRequest, signal: AbortSignal): Promise<'ask' | 'deny'> {
  let content: ToolContent[] | undefined;
  try {
    content = await core.deps.tools.preview?.(call, signal);
  } catch (err) {
    // A cancel records the call's end itself (the turn's finish).
    if (signal.aborted) return 'deny';
    if (isTroupeError(err) && CANNOT_SUCCEED.has(err.code)) {
      failTool(core, turnId, call, err.code, err.message);
      return 'deny';
    }
  }
  if (signal.aborted) return 'deny';
  core.preview = { toolCallId: call.id, content };
  return 'ask';
}

const OPTIONS: PermissionOutcome[] = ['allow_once', 'allow_always', 'reject_once', 'reject_always'];

export async function askPermission(core: EngineCore, turnId: string, call: ToolCallRequest, signal: AbortSignal): Promise<'allow' | 'deny'> {
  const description = core.descriptions.get(call.id) as Exclude<ReturnType<typeof core.descriptions.get>, Error | undefined>;
  // What allowing it would do (an edit's diff), for the person to see before answering: made as the
  // call was decided (previewAhead).
  const content = core.preview?.toolCallId === call.id ? core.preview.content : undefined;
  core.preview = undefined;
  if (signal.aborted) return 'deny';
  const requestId = newLocalId('perm');
  core.openPermission = { requestId, toolCallId: call.id };
  core.emit({ type: 'permission_requested', sessionId: core.sessionId, turnId, toolCallId: call.id, requestId, options: OPTIONS });

  // The ask ends on cancel (signal) or on the timeout, whichever comes first.
  const ask = new AbortController();
  const onAbort = () => ask.abort();
  signal.addEventListener('abort', onAbort, { once: true });
  let timedOut = false;
  const timer = core.deps.clock.setTimeout(() => {
    timedOut = true;
    ask.abort();
  }, core.deps.limits.permissionTimeoutMs);
  let outcome: PermissionOutcome;
  let unoffered: string | undefined;
  try {
    const answer = await core.deps.asker.ask(
      { requestId, toolCallId: call.id, toolName: call.name, title: description.title, kind: description.kind, input: call.input, options: OPTIONS, ...(content?.length ? { content } : {}) },
      ask.signal,
    );
    if (typeof answer === 'string') outcome = answer;
    else {
      // Kept safe: the call does not run, recorded as a rejection; the client is told what it did.
      unoffered = oneLineClipped(answer.unoffered, 60);
      core.deps.logger.warn('permission answer names an option that was not offered; the call is refused', { toolCallId: call.id, optionId: unoffered });
      outcome = 'reject_once';
    }
  } catch (err) {
    core.deps.logger.warn('permission request failed; treating it as cancelled', { error: String(err) });
    outcome = 'cancelled';
  } finally {
    core.deps.clock.clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
  }
  // On cancel the machine's cancelPermission action records the outcome; record nothing here.
  if (signal.aborted) return 'deny';
  core.openPermission = undefined;
  if (timedOut) outcome = 'timeout';
  const always = outcome === 'allow_always' || outcome === 'reject_always';
  core.emit({
    type: 'permission_resolved',
    sessionId: core.sessionId,
    turnId,
    toolCallId: call.id,
    requestId,
    outcome,
    decidedBy: 'user',
    ...(always ? { remember: call.name } : {}),
  });
  if (outcome === 'allow_once' || outcome === 'allow_always') return 'allow';
  // `cancelled` without a cancel of the turn: the client withdrew the prompt, or could not show it
  // (its request failed); nobody rejected the call, and the model and the person are told so.
  const [code, why] =
    outcome === 'timeout'
      ? ['tool_timeout', `Nobody answered the permission request within ${core.deps.limits.permissionTimeoutMs} ms, so the call was denied.`]
      : outcome === 'cancelled'
        ? ['permission_denied', 'The permission request ended without an answer (the client cancelled it or could not ask), so the call did not run.']
        : unoffered !== undefined
          ? ['permission_denied', `The client answered with option ${JSON.stringify(unoffered)}, which was not offered (${OPTIONS.join(', ')}), so the call did not run.`]
          : ['permission_denied', 'The user rejected this tool call.'];
  failTool(core, turnId, call, code, why);
  return 'deny';
}

/** The cancel transition, while a permission prompt is open. */
export function cancelPermission(core: EngineCore, turnId: string, call: ToolCallRequest): void {
  const open = core.openPermission;
  core.openPermission = undefined;
  if (open) {
    core.emit({ type: 'permission_resolved', sessionId: core.sessionId, turnId, toolCallId: call.id, requestId: open.requestId, outcome: 'cancelled', decidedBy: 'user' });
  }
  failTool(core, turnId, call, 'request_cancelled', 'The turn was cancelled before this tool call was allowed.');
}

export async function runTool(core: EngineCore, turnId: string, call: ToolCallRequest, signal: AbortSignal): Promise<void> {
  const base = { type: 'tool_call_updated' as const, sessionId: core.sessionId, turnId, toolCallId: call.id };
  core.emit({ ...base, status: 'in_progress' });
  let result;
  try {
    result = await core.deps.tools.run(call, {
      signal,
      update: (content) => {
        if (signal.aborted) return;
        const terminals = content.filter((c) => c.type === 'terminal');
        if (terminals.length) core.shownTerminals.set(call.id, terminals);
        core.emit({ ...base, content });
      },
    });
  } catch (err) {
    if (signal.aborted) return;
    const code = isTroupeError(err) ? err.code : 'tool_failed';
    failTool(core, turnId, call, code, err instanceof Error ? err.message : String(err));
    return;
  }
  // On cancel the machine's cancelTool action records the outcome.
  if (signal.aborted) return;
  core.shownTerminals.delete(call.id);
  if (result.plan) core.emit({ type: 'plan_updated', sessionId: core.sessionId, turnId, entries: result.plan });
  emitToolResult(core, {
    ...base,
    status: result.isError ? 'failed' : 'completed',
    content: result.content ?? [{ type: 'text', text: result.output }],
    output: result.output,
    ...(result.locations ? { locations: result.locations } : {}),
    ...(result.errorCode ? { errorCode: result.errorCode } : {}),
  });
}
