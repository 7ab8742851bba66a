/**
 * The session machine: one turn at a time, a FIFO queue of prompts, steer fencing, cancel and close.
 *
 *   idle ⇄ running(turn) → closed
 *
 * The running turn is an invoked child (`turn`, see turn.machine.ts), so the inspector sees both.
 * Pure: effects are named actions supplied by the session engine. See spec/machines.md.
 */
import { assign, sendTo, setup } from 'xstate';
import type { ContentBlock } from '../core/events.js';
import { turnMachine, type TurnResult } from './turn.machine.js';

export interface QueuedPrompt {
  promptId: string;
  turnId: string;
  content: ContentBlock[];
}

export interface SessionInput {
  maxSteps: number;
}

export interface SessionContext extends SessionInput {
  queue: QueuedPrompt[];
  current?: QueuedPrompt;
  /** Set by CLOSE while a turn runs: the session ends when that turn does. */
  closing: boolean;
  /**
   * A compaction asked for outside any turn (`/compact`) is running: prompts wait in the queue until
   * it ends, since a turn alongside it would read and change the conversation it is replacing.
   */
  compacting: boolean;
}

export type SessionEvent =
  | ({ type: 'PROMPT' } & QueuedPrompt)
  | { type: 'CANCEL' }
  /** The client withdrew one prompt (`$/cancel_request`): that prompt ends cancelled, the others go on. */
  | { type: 'WITHDRAW'; promptId: string }
  | { type: 'STEER'; steerId: string; expectedTurnId: string; content: ContentBlock[] }
  /**
   * No live engine sends it (session/close unloads, session/delete tombstones the log): the inspector's
   * replay does, for a log's `session_closed` (src/core/events.ts says which logs hold one).
   */
  | { type: 'CLOSE' }
  /** A compaction outside any turn started (`running: true`) or ended; its owner runs and stops it. */
  | { type: 'COMPACTION'; running: boolean };

export const sessionMachine = setup({
  types: {
    context: {} as SessionContext,
    events: {} as SessionEvent,
    input: {} as SessionInput,
  },
  actors: { turn: turnMachine },
  actions: {
    /** Emit user_message and turn_started for the prompt whose turn begins. */
    startTurn: (_, _params: { prompt: QueuedPrompt; maxSteps: number }) => {},
    /** Report a finished turn's result to whoever sent its prompt (once its events are durable). */
    settleTurn: (_, _params: { prompt: QueuedPrompt; result: TurnResult }) => {},
    /** Queued prompts that will never run: each gets a `cancelled` result of its own. */
    cancelQueued: (_, _params: { prompts: QueuedPrompt[] }) => {},
    rejectSteer: (_, _params: { steerId: string; expectedTurnId: string; code: 'turn_mismatch' | 'no_active_turn'; turnId?: string }) => {},
    announceClosed: () => {},
  },
  guards: {
    hasQueued: ({ context }) => context.queue.length > 0,
    canStartTurn: ({ context }) => context.queue.length > 0 && !context.compacting,
    isQueued: ({ context, event }) => event.type === 'WITHDRAW' && context.queue.some((q) => q.promptId === event.promptId),
    isCurrent: ({ context, event }) => event.type === 'WITHDRAW' && context.current?.promptId === event.promptId,
    steerMatchesTurn: ({ context, event }) => event.type === 'STEER' && event.expectedTurnId === context.current?.turnId,
    isClosing: ({ context }) => context.closing,
    acceptsPrompts: ({ context }) => !context.closing,
  },
}).createMachine({
  id: 'session',
  context: ({ input }) => ({ ...input, queue: [], closing: false, compacting: false }),
  initial: 'idle',
  on: {
    COMPACTION: { actions: assign({ compacting: ({ event }) => event.running }) },
    PROMPT: {
      guard: 'acceptsPrompts',
      actions: assign({ queue: ({ context, event }) => [...context.queue, { promptId: event.promptId, turnId: event.turnId, content: event.content }] }),
    },
    // A queued prompt withdrawn leaves the queue; one that is not there (done already) changes nothing.
    WITHDRAW: {
      guard: 'isQueued',
      actions: [
        { type: 'cancelQueued', params: ({ context, event }) => ({ prompts: context.queue.filter((q) => q.promptId === event.promptId) }) },
        assign({ queue: ({ context, event }) => context.queue.filter((q) => q.promptId !== (event as { promptId: string }).promptId) }),
      ],
    },
  },
  states: {
    idle: {
      always: {
        guard: 'canStartTurn',
        target: 'running',
        actions: assign({ current: ({ context }) => context.queue[0], queue: ({ context }) => context.queue.slice(1) }),
      },
      on: {
        STEER: {
          actions: {
            type: 'rejectSteer',
            params: ({ event }) => ({ steerId: event.steerId, expectedTurnId: event.expectedTurnId, code: 'no_active_turn' as const }),
          },
        },
        // Prompts wait here only behind a compaction (its owner stops that compaction itself).
        CANCEL: {
          guard: 'hasQueued',
          actions: [{ type: 'cancelQueued', params: ({ context }) => ({ prompts: context.queue }) }, assign({ queue: [] })],
        },
        CLOSE: {
          target: 'closed',
          actions: [{ type: 'cancelQueued', params: ({ context }) => ({ prompts: context.queue }) }, assign({ queue: [] })],
        },
      },
    },
    running: {
      entry: { type: 'startTurn', params: ({ context }) => ({ prompt: context.current!, maxSteps: context.maxSteps }) },
      invoke: {
        id: 'turn',
        src: 'turn',
        input: ({ context }) => ({ turnId: context.current!.turnId, maxSteps: context.maxSteps }),
        onDone: [
          {
            guard: 'isClosing',
            target: 'closed',
            actions: { type: 'settleTurn', params: ({ context, event }) => ({ prompt: context.current!, result: event.output }) },
          },
          {
            target: 'idle',
            actions: [
              { type: 'settleTurn', params: ({ context, event }) => ({ prompt: context.current!, result: event.output }) },
              assign({ current: undefined }),
            ],
          },
        ],
      },
      on: {
        // Cancel stops everything the person asked for: the running turn and the queued prompts.
        CANCEL: {
          actions: [
            { type: 'cancelQueued', params: ({ context }) => ({ prompts: context.queue }) },
            assign({ queue: [] }),
            sendTo('turn', { type: 'CANCEL' }),
          ],
        },
        // The running prompt withdrawn: its turn is cancelled; the queue goes on. (Queued: the root handler.)
        WITHDRAW: { guard: 'isCurrent', actions: sendTo('turn', { type: 'CANCEL' }) },
        STEER: [
          {
            guard: 'steerMatchesTurn',
            actions: sendTo('turn', ({ event }) => ({ type: 'STEER' as const, steerId: event.steerId, content: event.content })),
          },
          {
            actions: {
              type: 'rejectSteer',
              params: ({ context, event }) => ({
                steerId: event.steerId,
                expectedTurnId: event.expectedTurnId,
                code: 'turn_mismatch' as const,
                turnId: context.current?.turnId,
              }),
            },
          },
        ],
        CLOSE: {
          actions: [
            { type: 'cancelQueued', params: ({ context }) => ({ prompts: context.queue }) },
            assign({ queue: [], closing: true }),
            sendTo('turn', { type: 'CANCEL' }),
          ],
        },
      },
    },
    closed: { type: 'final', entry: 'announceClosed' },
  },
});
