/**
 * The session and turn machines with the engine's effects supplied: every named action and actor of
 * session.machine.ts and turn.machine.ts, implemented on an EngineCore.
 *
 * Built once for all sessions: `machine.provide()` per session would build two machines (their state
 * nodes and closures) per session, about 0.5 ms of a pooled child's `session/new`. Each effect finds
 * its engine through the actor system, which the session actor and its turn actors share.
 */
import { fromPromise, type ActorSystem } from 'xstate';
import { TroupeError } from '../core/errors.js';
import { newLocalId } from '../core/ids.js';
import { oneLineClipped } from '../core/one-line.js';
import { sessionMachine } from '../machines/session.machine.js';
import { turnMachine, type TurnResult } from '../machines/turn.machine.js';
import type { EngineCore } from './engine-core.js';
import { modelStep } from './model-step.effect.js';
import { askPermission, cancelPermission, decideTool, failTool, failUnfinishedTools, runTool } from './tool.effects.js';
import { compact, failOpenCompaction, preflight } from './compaction.effect.js';

const TITLE_LENGTH = 60;

/** Any actor system (xstate does not export its `AnyActorSystem` alias). */
type AnyActorSystem = ActorSystem<any>;

/** What the machines report back to the engine that owns them. */
export interface EngineHooks {
  resolvePrompt(promptId: string, result: TurnResult & { turnId: string }): void;
  steerRefused(steerId: string, error: TroupeError): void;
}

interface Owner {
  core: EngineCore;
  hooks: EngineHooks;
}

/** The engine behind each session actor's system. */
const owners = new WeakMap<AnyActorSystem, Owner>();

/** Ties a session actor (created from {@link engineMachine}, not yet started) to its engine. */
export function bindEngine(system: AnyActorSystem, core: EngineCore, hooks: EngineHooks): void {
  owners.set(system, { core, hooks });
}

function ownerOf(system: AnyActorSystem): Owner {
  const owner = owners.get(system);
  if (!owner) throw new Error('engine machine: actor system not bound to an engine');
  return owner;
}
const coreOf = (system: AnyActorSystem): EngineCore => ownerOf(system).core;

/**
 * Runs an effect with a signal aborted by its actor's (a cancel, a machine stopped) or by its session's
 * halt (EngineCore.halt). A machine that fails (an action throws) leaves the actors it invoked running,
 * their signals never aborted (xstate stops an actor's children only within a transition: see
 * Actor._stopProcedure): until 2026-12-07 a session stopped on a bug went on running its command, and
 * kept its permission prompt open at the client, and what they did was logged after the turn's end.
 * The signal is linked by hand, and unlinked when the effect ends: a signal made by AbortSignal.any
 * from the session's long-lived one would be kept by Node for the session's life (see src/tools/mcp/mcp-request.ts).
 */
async function haltable<T>(core: EngineCore, signal: AbortSignal, run: (core: EngineCore, signal: AbortSignal) => Promise<T>): Promise<T> {
  const own = new AbortController();
  const abort = () => own.abort();
  const halt = core.halt.signal;
  if (signal.aborted || halt.aborted) abort();
  signal.addEventListener('abort', abort, { once: true });
  halt.addEventListener('abort', abort, { once: true });
  try {
    return await run(core, own.signal);
  } finally {
    signal.removeEventListener('abort', abort);
    halt.removeEventListener('abort', abort);
  }
}

const turn = turnMachine.provide({
  actors: {
    preflight: fromPromise(({ system, signal }) => haltable(coreOf(system), signal, (core, s) => preflight(core, s))),
    compact: fromPromise(({ system, input, signal }) => haltable(coreOf(system), signal, (core, s) => compact(core, input.turnId, input.reason, s))),
    modelStep: fromPromise(({ system, input, signal }) => haltable(coreOf(system), signal, (core, s) => modelStep(core, input.turnId, s))),
    decideTool: fromPromise(({ system, input, signal }) => haltable(coreOf(system), signal, (core, s) => decideTool(core, input.turnId, input.call, s))),
    askPermission: fromPromise(({ system, input, signal }) => haltable(coreOf(system), signal, (core, s) => askPermission(core, input.turnId, input.call, s))),
    runTool: fromPromise(({ system, input, signal }) => haltable(coreOf(system), signal, (core, s) => runTool(core, input.turnId, input.call, s))),
  },
  actions: {
    steerReceived: ({ system }, p) => {
      const core = coreOf(system);
      core.emitMessage({ type: 'steer_received', sessionId: core.sessionId, turnId: p.turnId, steerId: p.steer.steerId, content: p.steer.content });
    },
    deliverSteers: ({ system }, p) => {
      const core = coreOf(system);
      for (const s of p.steers) core.emit({ type: 'steer_applied', sessionId: core.sessionId, turnId: p.turnId, steerId: s.steerId, step: p.step });
    },
    cancelPermission: ({ system }, p) => cancelPermission(coreOf(system), p.turnId, p.call),
    cancelTool: ({ system }, p) => {
      const cause = coreOf(system).cancelCause;
      failTool(coreOf(system), p.turnId, p.call, 'request_cancelled', cause ? `Cancelled while running: ${cause}.` : 'Cancelled by the user while running.');
    },
    finish: ({ system }, p) => {
      const core = coreOf(system);
      const sessionId = core.sessionId;
      failOpenCompaction(core, 'request_cancelled', p.turnId);
      const cause = core.cancelCause;
      core.cancelCause = undefined;
      // A turn cut off by a shutdown says so (`message`), one its client cancelled needs no words.
      const r = p.result.stopReason === 'cancelled' && cause && !p.result.message ? { ...p.result, message: `cancelled: ${cause}` } : p.result;
      const code = r.stopReason === 'cancelled' ? 'request_cancelled' : (r.errorCode ?? 'internal_error');
      const why = r.stopReason === 'cancelled' ? 'The turn was cancelled before this tool call ran.' : `The turn ended (${code}) before this tool call ran.`;
      failUnfinishedTools(core, p.turnId, code, why);
      for (const s of p.undelivered) {
        core.emit({ type: 'steer_rejected', sessionId, turnId: p.turnId, steerId: s.steerId, expectedTurnId: p.turnId, code: 'turn_ended' });
      }
      core.emit({
        type: 'turn_completed',
        sessionId,
        turnId: p.turnId,
        stopReason: r.stopReason,
        steps: r.steps,
        ...(r.errorCode ? { errorCode: r.errorCode } : {}),
        ...(r.message ? { message: r.message } : {}),
        ...(r.retryAfterMs !== undefined ? { retryAfterMs: r.retryAfterMs } : {}),
        ...(r.vendorMessage !== undefined ? { vendorMessage: r.vendorMessage } : {}),
      });
    },
  },
});

/** The session machine with the engine's effects; actors made from it must be bound with {@link bindEngine}. */
export const engineMachine = sessionMachine.provide({
  actors: { turn },
  actions: {
    startTurn: ({ system }, p) => {
      const core = coreOf(system);
      const sessionId = core.sessionId;
      const conv = core.conversation;
      core.emitMessage({ type: 'user_message', sessionId, turnId: p.prompt.turnId, messageId: newLocalId('msg'), content: p.prompt.content });
      if (conv.title === undefined) {
        const words = p.prompt.content.map((b) => (b.type === 'text' ? b.text : '')).join(' ');
        // One line of printable text (an editor shows the title as given, a control character in it
        // raw), cut before an emoji the cut falls in: half of one is U+FFFD in the log and the client's title.
        const title = oneLineClipped(words, TITLE_LENGTH);
        if (title) core.emit({ type: 'session_configured', sessionId, title });
      }
      core.emit({ type: 'turn_started', sessionId, turnId: p.prompt.turnId, maxSteps: p.maxSteps });
    },
    settleTurn: ({ system }, p) => {
      const { core, hooks } = ownerOf(system);
      const result = { ...p.result, turnId: p.prompt.turnId };
      // A turn's result is reported only once its last event is durable.
      void core.deps.log.whenDurable(core.deps.log.lastSeq()).then(
        () => hooks.resolvePrompt(p.prompt.promptId, result),
        (err) => {
          core.deps.logger.error('log failed to make a turn durable', { error: String(err) });
          const errorCode = err instanceof TroupeError ? err.code : 'internal_error';
          // The log's failure replaces the turn's own outcome, a rate limit's retryAfterMs and a vendor's words with it.
          const { retryAfterMs: _retry, vendorMessage: _vendor, ...rest } = result;
          hooks.resolvePrompt(p.prompt.promptId, { ...rest, stopReason: 'error', errorCode, message: (err as Error).message });
        },
      );
    },
    cancelQueued: ({ system }, p) => {
      const { hooks } = ownerOf(system);
      for (const q of p.prompts) hooks.resolvePrompt(q.promptId, { turnId: q.turnId, stopReason: 'cancelled', steps: 0 });
    },
    rejectSteer: ({ system }, p) => {
      const { core, hooks } = ownerOf(system);
      core.emit({
        type: 'steer_rejected',
        sessionId: core.sessionId,
        steerId: p.steerId,
        expectedTurnId: p.expectedTurnId,
        code: p.code,
        ...(p.turnId ? { turnId: p.turnId } : {}),
      });
      const message =
        p.code === 'no_active_turn' ? 'no turn is running' : `turn ${p.expectedTurnId} is not the running turn (${p.turnId ?? 'none'})`;
      hooks.steerRefused(p.steerId, new TroupeError(p.code, message, { expectedTurnId: p.expectedTurnId, ...(p.turnId ? { turnId: p.turnId } : {}) }));
    },
  },
});
