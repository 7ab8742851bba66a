/**
 * The session and turn machines with the engine's effects supplied: every named action and actor of
 * session.machine.ts and turn.machine.ts, implemented on an EngineCore.
 */
import { fromPromise } from 'xstate';
import { TroupeError } from '../core/errors.js';
import { newLocalId } from '../core/ids.js';
import { sessionMachine } from '../machines/session.machine.js';
import { turnMachine, type TurnResult } from '../machines/turn.machine.js';
import type { EngineCore } from './engine-core.js';
import { modelStep } from './model-step.effect.js';
import { askPermission, cancelPermission, decideTool, failTool, runTool } from './tool.effects.js';
import { compact, preflight } from './compaction.effect.js';

const TITLE_LENGTH = 60;

/** What the machines report back to the engine that owns them. */
export interface EngineHooks {
  resolvePrompt(promptId: string, result: TurnResult & { turnId: string }): void;
  steerRefused(steerId: string, error: TroupeError): void;
  closeReason(): 'closed' | 'deleted';
}

export function provideMachines(core: EngineCore, hooks: EngineHooks) {
  const sessionId = core.sessionId;
  const turn = turnMachine.provide({
    actors: {
      preflight: fromPromise(({ signal }) => preflight(core, signal)),
      compact: fromPromise(({ input, signal }) => compact(core, input.turnId, input.reason, signal)),
      modelStep: fromPromise(({ input, signal }) => modelStep(core, input.turnId, signal)),
      decideTool: fromPromise(async ({ input }) => decideTool(core, input.turnId, input.call)),
      askPermission: fromPromise(({ input, signal }) => askPermission(core, input.turnId, input.call, signal)),
      runTool: fromPromise(({ input, signal }) => runTool(core, input.turnId, input.call, signal)),
    },
    actions: {
      steerReceived: (_, p) => core.emit({ type: 'steer_received', sessionId, turnId: p.turnId, steerId: p.steer.steerId, content: p.steer.content }),
      deliverSteers: (_, p) => {
        for (const s of p.steers) core.emit({ type: 'steer_applied', sessionId, turnId: p.turnId, steerId: s.steerId, step: p.step });
      },
      cancelPermission: (_, p) => cancelPermission(core, p.turnId, p.call),
      cancelTool: (_, p) => failTool(core, p.turnId, p.call, 'request_cancelled', 'Cancelled by the user while running.'),
      finish: (_, p) => {
        if (core.openCompactionId) {
          core.emit({ type: 'compaction_completed', sessionId, turnId: p.turnId, compactionId: core.openCompactionId, status: 'failed', errorCode: 'request_cancelled' });
          core.openCompactionId = undefined;
        }
        for (const s of p.undelivered) {
          core.emit({ type: 'steer_rejected', sessionId, turnId: p.turnId, steerId: s.steerId, expectedTurnId: p.turnId, code: 'turn_ended' });
        }
        const r = p.result;
        core.emit({
          type: 'turn_completed',
          sessionId,
          turnId: p.turnId,
          stopReason: r.stopReason,
          steps: r.steps,
          ...(r.errorCode ? { errorCode: r.errorCode } : {}),
          ...(r.message ? { message: r.message } : {}),
        });
      },
    },
  });
  return sessionMachine.provide({
    actors: { turn },
    actions: {
      startTurn: (_, p) => {
        const conv = core.conversation;
        core.emit({ type: 'user_message', sessionId, turnId: p.prompt.turnId, messageId: newLocalId('msg'), content: p.prompt.content });
        if (conv.title === undefined) {
          const text = p.prompt.content.map((b) => (b.type === 'text' ? b.text : '')).join(' ').replace(/\s+/g, ' ').trim();
          if (text) core.emit({ type: 'session_configured', sessionId, title: text.length > TITLE_LENGTH ? `${text.slice(0, TITLE_LENGTH - 1)}…` : text });
        }
        core.emit({ type: 'turn_started', sessionId, turnId: p.prompt.turnId, maxSteps: p.maxSteps });
      },
      settleTurn: (_, p) => {
        const result = { ...p.result, turnId: p.prompt.turnId };
        // A turn's result is reported only once its last event is durable.
        void core.deps.log.whenDurable(core.deps.log.lastSeq()).then(
          () => hooks.resolvePrompt(p.prompt.promptId, result),
          (err) => {
            core.deps.logger.error('log failed to make a turn durable', { error: String(err) });
            hooks.resolvePrompt(p.prompt.promptId, { ...result, stopReason: 'error', errorCode: 'internal_error', message: String(err) });
          },
        );
      },
      cancelQueued: (_, p) => {
        for (const q of p.prompts) hooks.resolvePrompt(q.promptId, { turnId: q.turnId, stopReason: 'cancelled', steps: 0 });
      },
      rejectSteer: (_, p) => {
        core.emit({
          type: 'steer_rejected',
          sessionId,
          steerId: p.steerId,
          expectedTurnId: p.expectedTurnId,
          code: p.code,
          ...(p.turnId ? { turnId: p.turnId } : {}),
        });
        const message =
          p.code === 'no_active_turn' ? 'no turn is running' : `turn ${p.expectedTurnId} is not the running turn (${p.turnId ?? 'none'})`;
        hooks.steerRefused(p.steerId, new TroupeError(p.code, message, { expectedTurnId: p.expectedTurnId, ...(p.turnId ? { turnId: p.turnId } : {}) }));
      },
      announceClosed: () => {
        core.emit({ type: 'session_closed', sessionId, reason: hooks.closeReason() });
      },
    },
  });
}
