/**
 * The supervised child machine: one `troupe acp` process serving one session, with Erlang/OTP
 * restart semantics (transient child, restart intensity, backoff). Pure: the supervisor supplies
 * `spawn`, `stopChild` and `killChild`, and sends what happens to the process as events.
 *
 *   spawning → initializing → ready ⇄ busy → stopping → idleStopped ⇄ (WAKE) spawning
 *                                             └──────→ exited (final)
 *   (unexpected exit, hang) crashed → backoff → restarting → initializing … | failed
 *   failed → (REVIVE: an operator's action) idleStopped, its restart window cleared
 */
import { assign, setup } from 'xstate';
import { allowsRestart, backoffDelay, type ChildSpec } from './restart-window.js';

export interface ChildContext {
  spec: ChildSpec;
  /** Times of the restarts within the current window (oldest first). */
  restarts: number[];
  /** Why the child is stopping: `idle` and `closed` can be woken again; `shutdown` and `deleted` are final. */
  stopReason?: 'idle' | 'closed' | 'shutdown' | 'deleted';
  lastExit?: { code: number | null; signal: string | null; reason: string };
}

export type ChildEvent =
  | { type: 'SPAWNED'; pid: number }
  | { type: 'READY' }
  | { type: 'BOOT_FAILED'; reason: string }
  | { type: 'BUSY' }
  | { type: 'IDLE' }
  | { type: 'IDLE_TIMEOUT' }
  | { type: 'HUNG' }
  | { type: 'STOP'; reason: 'idle' | 'closed' | 'shutdown' | 'deleted' }
  | { type: 'EXITED'; code: number | null; signal: string | null; reason: string; at: number }
  | { type: 'WAKE' }
  | { type: 'REVIVE' };


/**
 * Where an operator's REVIVE takes a failed child: at rest, as an idle-stopped one. Named once: the
 * relay reports the same transition for a failed child it no longer holds a machine for (Relay.revive).
 */
export const REVIVED_STATE = 'idleStopped';

export const childMachine = setup({
  types: { context: {} as ChildContext, events: {} as ChildEvent, input: {} as { spec: ChildSpec } },
  actions: {
    spawn: () => {},
    /** End stdin, then SIGTERM, then SIGKILL after the grace period. */
    stopChild: () => {},
    /** SIGKILL at once (a hung child cannot be asked). */
    killChild: () => {},
    /** Tell every client of the session that it failed for good. */
    markFailed: () => {},
    recordExit: assign({
      lastExit: ({ event }) =>
        event.type === 'EXITED' ? { code: event.code, signal: event.signal, reason: event.reason } : { code: null, signal: null, reason: event.type.toLowerCase() },
    }),
  },
  guards: {
    restartAllowed: ({ context, event }) => allowsRestart(context.restarts, event.type === 'EXITED' ? event.at : Date.now(), context.spec),
    /** A clean exit nobody asked for: transient, so not restarted (it is woken on demand instead). */
    cleanExit: ({ event }) => event.type === 'EXITED' && event.code === 0 && event.signal === null,
    wakeable: ({ context }) => context.stopReason === 'idle' || context.stopReason === 'closed',
  },
  delays: {
    backoff: ({ context }) => backoffDelay(context.restarts.length, context.spec),
  },
}).createMachine({
  id: 'child',
  context: ({ input }) => ({ spec: input.spec, restarts: [] }),
  initial: 'spawning',
  on: {
    STOP: { target: '.stopping', actions: assign({ stopReason: ({ event }) => event.reason }) },
  },
  states: {
    spawning: {
      entry: 'spawn',
      on: { SPAWNED: 'initializing', EXITED: { target: 'crashed', actions: 'recordExit' } },
    },
    restarting: {
      entry: 'spawn',
      on: { SPAWNED: 'initializing', EXITED: { target: 'crashed', actions: 'recordExit' } },
    },
    initializing: {
      on: {
        READY: 'ready',
        BOOT_FAILED: { target: 'crashed', actions: ['killChild', 'recordExit'] },
        HUNG: { target: 'crashed', actions: ['killChild', 'recordExit'] },
        EXITED: { target: 'crashed', actions: 'recordExit' },
      },
    },
    ready: {
      on: {
        BUSY: 'busy',
        IDLE_TIMEOUT: { target: 'stopping', actions: assign({ stopReason: 'idle' as const }) },
        HUNG: { target: 'crashed', actions: ['killChild', 'recordExit'] },
        EXITED: [
          { guard: 'cleanExit', target: 'idleStopped', actions: 'recordExit' },
          { target: 'crashed', actions: 'recordExit' },
        ],
      },
    },
    busy: {
      on: {
        IDLE: 'ready',
        HUNG: { target: 'crashed', actions: ['killChild', 'recordExit'] },
        EXITED: { target: 'crashed', actions: 'recordExit' },
      },
    },
    stopping: {
      entry: 'stopChild',
      on: {
        // Whatever the exit code, a child we asked to stop stopped normally.
        EXITED: [
          { guard: 'wakeable', target: 'idleStopped', actions: 'recordExit' },
          { target: 'exited', actions: 'recordExit' },
        ],
        STOP: { actions: assign({ stopReason: ({ event }) => event.reason }) },
      },
    },
    idleStopped: {
      on: { WAKE: { target: 'spawning', actions: assign({ stopReason: undefined }) }, STOP: { target: 'exited', actions: assign({ stopReason: ({ event }) => event.reason }) } },
    },
    crashed: {
      always: [
        {
          guard: 'restartAllowed',
          target: 'backoff',
          actions: assign({
            restarts: ({ context }) => [...context.restarts.filter((t) => Date.now() - t < context.spec.periodMs), Date.now()],
          }),
        },
        { target: 'failed' },
      ],
    },
    backoff: {
      after: { backoff: 'restarting' },
      on: { STOP: { target: 'exited', actions: assign({ stopReason: ({ event }) => event.reason }) } },
    },
    // Failed for good, as far as restarts go: only an operator brings it back (revive, spec/daemon.md
    // §Supervision), once the cause is fixed. It then rests as an idle-stopped child does, and its
    // next message wakes it with a fresh restart window.
    failed: {
      entry: 'markFailed',
      on: {
        REVIVE: { target: REVIVED_STATE, actions: assign({ restarts: () => [], stopReason: 'idle' as const }) },
        STOP: { target: 'exited', actions: assign({ stopReason: ({ event }) => event.reason }) },
      },
    },
    exited: { type: 'final' },
  },
});
