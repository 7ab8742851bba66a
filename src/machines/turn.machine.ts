/**
 * The turn machine: one prompt's life, from preflight to a stop reason.
 *
 *   preflight → (compacting) → boundary → modelStep → tools(deciding → awaitingPermission → running)*
 *             → boundary → modelStep … → done
 *
 * Pure: every effect is a named actor or action, supplied by the session engine through
 * `turnMachine.provide()`. Invoked actors are stopped when their state is left, which aborts their
 * `signal`: that is how CANCEL ends a provider stream or a running tool. See spec/machines.md.
 */
import { assign, fromPromise, setup } from 'xstate';
import type { ContentBlock, StopReason } from '../core/events.js';
import type { ProviderStopReason } from '../core/provider.js';
import type { ToolCallRequest } from '../core/ports.js';
import { pairSafeEnd } from '../core/text-cut.js';

export interface Steer {
  steerId: string;
  content: ContentBlock[];
}

export interface TurnResult {
  stopReason: StopReason;
  errorCode?: string;
  message?: string;
  /** With `provider_rate_limited`: when the vendor said to try again. */
  retryAfterMs?: number;
  /** The vendor's own words, where `message` is troupe's account (`context_overflow`). */
  vendorMessage?: string;
  steps: number;
}

export interface TurnInput {
  turnId: string;
  maxSteps: number;
}

export interface TurnContext extends TurnInput {
  /** Model calls started so far (a retried step counts once). */
  step: number;
  /** Compactions forced by a provider overflow in this turn; the second overflow is terminal. */
  overflowCompactions: number;
  compactionReason: 'preflight' | 'overflow';
  /** Accepted guidance waiting for the next step boundary. */
  pendingSteers: Steer[];
  toolCalls: ToolCallRequest[];
  toolIndex: number;
  result?: TurnResult;
}

export type TurnEvent = { type: 'CANCEL' } | ({ type: 'STEER' } & Steer);

/** What a model step reports back: why it stopped and which tools it wants run. */
export interface StepOutcome {
  stop: ProviderStopReason;
  toolCalls: ToolCallRequest[];
}

/** Why a step or a compaction failed, already classified by the engine. */
export interface StepFailure {
  code: string;
  message: string;
  retryAfterMs?: number;
  vendorMessage?: string;
  /** With `context_overflow`: whether a compaction could make the request smaller (else retrying is futile). */
  compactable?: boolean;
}

const notProvided = (name: string) => () => {
  throw new Error(`turn machine: effect '${name}' was not provided`);
};

/**
 * The longest failure message a turn keeps. It is for a person, and the turn's last event carries
 * it: a vendor or a proxy in between may answer with megabytes (an HTML error page), which would
 * not fit the log's largest event.
 */
export const MAX_FAILURE_MESSAGE_CHARS = 8192;

function bounded(message: string): string {
  if (message.length <= MAX_FAILURE_MESSAGE_CHARS) return message;
  // Not between the two halves of a surrogate pair: a lone one is not valid text for the log.
  const cut = pairSafeEnd(message, MAX_FAILURE_MESSAGE_CHARS);
  return `${message.slice(0, cut)}… [${message.length - cut} more characters]`;
}

/** A failure thrown by an effect, in the engine's classified form (or internal_error). */
function failureOf(error: unknown): StepFailure {
  if (error && typeof error === 'object' && 'code' in error && typeof (error as StepFailure).code === 'string') {
    const { code, vendorMessage } = error as StepFailure;
    const message = bounded(String((error as { message?: unknown }).message ?? error));
    const vendor = typeof vendorMessage === 'string' ? { vendorMessage: bounded(vendorMessage) } : {};
    // Whole milliseconds, as the log stores them (a vendor's retry-after-ms may have a fraction).
    const retryAfterMs = Math.ceil(Number((error as StepFailure).retryAfterMs));
    return Number.isSafeInteger(retryAfterMs) && retryAfterMs >= 0 ? { code, message, retryAfterMs, ...vendor } : { code, message, ...vendor };
  }
  return { code: 'internal_error', message: bounded(error instanceof Error ? error.message : String(error)) };
}

const STOP_OF: Record<ProviderStopReason, StopReason> = {
  end_turn: 'end_turn',
  tool_use: 'end_turn',
  max_tokens: 'max_tokens',
  refusal: 'refusal',
};

const turnSetup = setup({
  types: {
    context: {} as TurnContext,
    events: {} as TurnEvent,
    input: {} as TurnInput,
    output: {} as TurnResult,
  },
  actors: {
    preflight: fromPromise<{ overBudget: boolean }, { turnId: string }>(notProvided('preflight')),
    compact: fromPromise<void, { turnId: string; reason: 'preflight' | 'overflow' }>(notProvided('compact')),
    modelStep: fromPromise<StepOutcome, { turnId: string; step: number }>(notProvided('modelStep')),
    decideTool: fromPromise<'allow' | 'ask' | 'deny', { turnId: string; call: ToolCallRequest }>(notProvided('decideTool')),
    askPermission: fromPromise<'allow' | 'deny', { turnId: string; call: ToolCallRequest }>(notProvided('askPermission')),
    runTool: fromPromise<void, { turnId: string; call: ToolCallRequest }>(notProvided('runTool')),
  },
  actions: {
    /** Emit steer_received. */
    steerReceived: (_, _params: { turnId: string; steer: Steer }) => {},
    /** Emit steer_applied for each steer and add its guidance to the conversation (no-op when empty). */
    deliverSteers: (_, _params: { turnId: string; steers: Steer[]; step: number }) => {},
    /** A permission prompt was open at cancel: resolve it as cancelled. */
    cancelPermission: (_, _params: { turnId: string; call: ToolCallRequest }) => {},
    /** A tool was running at cancel: mark it failed (its signal aborts the work). */
    cancelTool: (_, _params: { turnId: string; call: ToolCallRequest }) => {},
    /** Emit steer_rejected(turn_ended) for undelivered steers, then turn_completed. */
    finish: (_, _params: { turnId: string; result: TurnResult; undelivered: Steer[] }) => {},
    failWithError: assign({
      result: ({ context, event }) => {
        const failure = failureOf((event as { error?: unknown }).error);
        const retry = failure.retryAfterMs !== undefined ? { retryAfterMs: failure.retryAfterMs } : {};
        const vendor = failure.vendorMessage !== undefined ? { vendorMessage: failure.vendorMessage } : {};
        return { stopReason: 'error' as const, errorCode: failure.code, message: failure.message, ...retry, ...vendor, steps: context.step };
      },
    }),
  },
  guards: {
    hasToolCalls: (_, params: { output: StepOutcome }) => params.output.toolCalls.length > 0,
    hasPendingSteers: ({ context }) => context.pendingSteers.length > 0,
    stepLimitReached: ({ context }) => context.step >= context.maxSteps,
    /**
     * A provider overflow a compaction can help, and the turn has not yet compacted because of one.
     * Until 2026-12-06 it did not ask whether a compaction could make anything smaller, and sent the
     * same refused request again after a compaction that did nothing.
     */
    canCompactOverflow: ({ context }, params: { error: unknown }) =>
      failureOf(params.error).code === 'context_overflow' && (params.error as StepFailure).compactable === true && context.overflowCompactions === 0,
    moreTools: ({ context }) => context.toolIndex + 1 < context.toolCalls.length,
  },
});

export const turnMachine = turnSetup.createMachine({
  id: 'turn',
  context: ({ input }) => ({
    ...input,
    step: 0,
    overflowCompactions: 0,
    compactionReason: 'preflight',
    pendingSteers: [],
    toolCalls: [],
    toolIndex: 0,
  }),
  output: ({ context }) => context.result!,
  on: {
    // Any state that does not say otherwise: cancel ends the turn, keeping what was emitted.
    CANCEL: { target: '.done', actions: assign({ result: ({ context }) => ({ stopReason: 'cancelled', steps: context.step }) }) },
    STEER: {
      actions: [
        assign({ pendingSteers: ({ context, event }) => [...context.pendingSteers, { steerId: event.steerId, content: event.content }] }),
        { type: 'steerReceived', params: ({ context, event }) => ({ turnId: context.turnId, steer: { steerId: event.steerId, content: event.content } }) },
      ],
    },
  },
  initial: 'preflight',
  states: {
    preflight: {
      invoke: {
        src: 'preflight',
        input: ({ context }) => ({ turnId: context.turnId }),
        onDone: [
          { guard: ({ event }) => event.output.overBudget, target: 'compacting', actions: assign({ compactionReason: 'preflight' }) },
          { target: 'boundary' },
        ],
        onError: { target: 'done', actions: 'failWithError' },
      },
    },
    compacting: {
      invoke: {
        src: 'compact',
        input: ({ context }) => ({ turnId: context.turnId, reason: context.compactionReason }),
        onDone: [
          // After an overflow the same step is retried: no new step number, steers delivered first.
          { guard: ({ context }) => context.compactionReason === 'overflow', target: 'modelStep', actions: [
              { type: 'deliverSteers', params: ({ context }) => ({ turnId: context.turnId, steers: context.pendingSteers, step: context.step }) },
              assign({ pendingSteers: [] }),
            ] },
          { target: 'boundary' },
        ],
        onError: { target: 'done', actions: 'failWithError' },
      },
    },
    /** A step boundary: guidance is delivered here, before the next model call. */
    boundary: {
      always: [
        {
          guard: 'stepLimitReached',
          target: 'done',
          actions: assign({
            result: ({ context }) => ({
              stopReason: 'max_turn_requests' as const,
              message: `the turn reached its limit of ${context.maxSteps} model steps`,
              steps: context.step,
            }),
          }),
        },
        {
          target: 'modelStep',
          actions: [
            assign({ step: ({ context }) => context.step + 1 }),
            { type: 'deliverSteers', params: ({ context }) => ({ turnId: context.turnId, steers: context.pendingSteers, step: context.step }) },
            assign({ pendingSteers: [] }),
          ],
        },
      ],
    },
    modelStep: {
      invoke: {
        src: 'modelStep',
        input: ({ context }) => ({ turnId: context.turnId, step: context.step }),
        onDone: [
          {
            guard: { type: 'hasToolCalls', params: ({ event }) => ({ output: event.output }) },
            target: 'tools',
            actions: assign({ toolCalls: ({ event }) => event.output.toolCalls, toolIndex: 0 }),
          },
          // The model finished, but guidance arrived meanwhile: one more step to answer it.
          { guard: 'hasPendingSteers', target: 'boundary' },
          {
            target: 'done',
            actions: assign({ result: ({ context, event }) => ({ stopReason: STOP_OF[event.output.stop], steps: context.step }) }),
          },
        ],
        onError: [
          {
            // Only once per turn, and only when compacting can help; otherwise the terminal branch below.
            guard: { type: 'canCompactOverflow', params: ({ event }) => ({ error: event.error }) },
            target: 'compacting',
            actions: assign({ overflowCompactions: ({ context }) => context.overflowCompactions + 1, compactionReason: 'overflow' }),
          },
          { target: 'done', actions: 'failWithError' },
        ],
      },
    },
    tools: {
      initial: 'deciding',
      states: {
        deciding: {
          invoke: {
            src: 'decideTool',
            input: ({ context }) => ({ turnId: context.turnId, call: context.toolCalls[context.toolIndex]! }),
            onDone: [
              { guard: ({ event }) => event.output === 'allow', target: 'running' },
              { guard: ({ event }) => event.output === 'ask', target: 'awaitingPermission' },
              { target: 'next' },
            ],
            onError: { target: '#turn.done', actions: 'failWithError' },
          },
        },
        awaitingPermission: {
          on: {
            CANCEL: {
              target: '#turn.done',
              actions: [
                { type: 'cancelPermission', params: ({ context }) => ({ turnId: context.turnId, call: context.toolCalls[context.toolIndex]! }) },
                assign({ result: ({ context }) => ({ stopReason: 'cancelled' as const, steps: context.step }) }),
              ],
            },
          },
          invoke: {
            src: 'askPermission',
            input: ({ context }) => ({ turnId: context.turnId, call: context.toolCalls[context.toolIndex]! }),
            onDone: [{ guard: ({ event }) => event.output === 'allow', target: 'running' }, { target: 'next' }],
            onError: { target: '#turn.done', actions: 'failWithError' },
          },
        },
        running: {
          on: {
            CANCEL: {
              target: '#turn.done',
              actions: [
                { type: 'cancelTool', params: ({ context }) => ({ turnId: context.turnId, call: context.toolCalls[context.toolIndex]! }) },
                assign({ result: ({ context }) => ({ stopReason: 'cancelled' as const, steps: context.step }) }),
              ],
            },
          },
          invoke: {
            src: 'runTool',
            input: ({ context }) => ({ turnId: context.turnId, call: context.toolCalls[context.toolIndex]! }),
            onDone: { target: 'next' },
            onError: { target: '#turn.done', actions: 'failWithError' },
          },
        },
        next: {
          always: [
            { guard: 'moreTools', target: 'deciding', actions: assign({ toolIndex: ({ context }) => context.toolIndex + 1 }) },
            { target: '#turn.boundary' },
          ],
        },
      },
    },
    done: {
      type: 'final',
      entry: {
        type: 'finish',
        params: ({ context }) => ({ turnId: context.turnId, result: context.result!, undelivered: context.pendingSteers }),
      },
    },
  },
});
