/**
 * Time travel from a session's log: drives the REAL session and turn machines with every effect
 * replaced by a stand-in that completes when the log says the effect completed. The result is the
 * sequence of machine transitions, each with the log event that caused it, labelled exactly like
 * the live transitions a `troupe acp --supervised` child reports on its control channel (same
 * statePath, same eventLabel, same de-duplication), so stored and live sessions look alike.
 *
 * The inference rules (which effect emitted which event, when an effect must have finished, what
 * it returned) are in docs/inspector.md §Replay. Pure and synchronous: XState delivers a
 * stand-in's done event to its parent inside the same `send`.
 */
import { createActor, type AnyActorLogic, type AnyActorRef } from 'xstate';
import type { AgentEvent } from '../core/events.js';
import { TroupeError } from '../core/errors.js';
import { sessionMachine } from './session.machine.js';
import { turnMachine } from './turn.machine.js';
import { owns, finished, outputFor, EFFECTS, type Effect, type EffectRun } from './replay-rules.js';
import { transitionRecorder, type MachineTransition } from './transition-recorder.js';

export type { MachineTransition } from './transition-recorder.js';

/** A transition rebuilt from the log, with the log event that caused it. */
export interface ReplayedTransition extends MachineTransition {
  seq: number;
  cause: AgentEvent;
}

type StandInSnapshot = { status: 'active' | 'done' | 'error'; output: unknown; error: unknown; effect: Effect; input: unknown };
type StandInEvent = { type: 'replay.resolve'; output: unknown } | { type: 'replay.reject'; error: unknown };

/** An effect that does nothing until the replay says how it ended. */
function standIn(effect: Effect): AnyActorLogic {
  const logic = {
    transition: (snap: StandInSnapshot, ev: StandInEvent): StandInSnapshot =>
      snap.status !== 'active' ? snap : ev.type === 'replay.resolve' ? { ...snap, status: 'done', output: ev.output } : { ...snap, status: 'error', error: ev.error },
    getInitialSnapshot: (_scope: unknown, input: unknown): StandInSnapshot => ({ status: 'active', output: undefined, error: undefined, effect, input }),
    getPersistedSnapshot: (snap: StandInSnapshot) => snap,
  };
  return logic as unknown as AnyActorLogic;
}

const noop = () => {};
const replayMachine = sessionMachine.provide({
  actors: {
    turn: turnMachine.provide({
      actors: Object.fromEntries(EFFECTS.map((e) => [e, standIn(e)])) as never,
      actions: { steerReceived: noop, deliverSteers: noop, cancelPermission: noop, cancelTool: noop, finish: noop },
    }),
  },
  actions: { startTurn: noop, settleTurn: noop, cancelQueued: noop, rejectSteer: noop, announceClosed: noop },
});

/** Events that only a cancel (or a close) produces. */
function isCancelMark(e: AgentEvent): boolean {
  return (
    (e.type === 'turn_completed' && e.stopReason === 'cancelled') ||
    (e.type === 'permission_resolved' && e.outcome === 'cancelled') ||
    (e.type === 'tool_call_updated' && e.errorCode === 'request_cancelled') ||
    (e.type === 'compaction_completed' && e.turnId !== undefined && e.errorCode === 'request_cancelled')
  );
}

/** How soon after a cancelled turn's end a session_closed means the close ended that turn. */
export const CLOSE_GAP_MS = 100;

/** Upper bound on effect completions one log event can imply (a turn's steps are bounded too). */
const MAX_STEPS_PER_EVENT = 10_000;

/**
 * Rebuilds the session and turn machines' transitions from a session's events (in seq order).
 * Throws `invalid_params` if the events are not one session's log in order.
 */
export function replaySession(events: readonly AgentEvent[]): ReplayedTransition[] {
  const replay = replayer(events);
  for (let i = 0; i < events.length; i++) replay.step(i);
  return replay.finish();
}

/**
 * `replaySession`, awaiting `pause()` after every `slice` events: a daemon replaying a long log
 * (tens of thousands of events, ~1 µs each) for the inspector keeps its event loop for its clients.
 */
export async function replaySessionInSlices(events: readonly AgentEvent[], pause: () => Promise<void>, slice = 4096): Promise<ReplayedTransition[]> {
  const replay = replayer(events);
  for (let i = 0; i < events.length; i++) {
    if (i > 0 && i % slice === 0) await pause();
    replay.step(i);
  }
  return replay.finish();
}

function replayer(events: readonly AgentEvent[]): { step(index: number): void; finish(): ReplayedTransition[] } {
  const out: ReplayedTransition[] = [];
  let cause: AgentEvent | undefined;
  let actor: ReturnType<typeof createActor<typeof replayMachine>> | undefined;
  const record = transitionRecorder((t) => cause && out.push({ ...t, at: cause.ts, seq: cause.seq, cause }));
  const start = (from: number) => {
    actor?.stop();
    // The machines stop a turn at its step limit: use the one the log's next turn ran with.
    const next = events.slice(from).find((x) => x.type === 'turn_started');
    const maxSteps = next?.type === 'turn_started' ? next.maxSteps : Number.MAX_SAFE_INTEGER;
    actor = createActor(replayMachine, { input: { maxSteps }, inspect: record });
    actor.start();
  };
  /**
   * Turns whose cancel came from CLOSE: session_closed follows their turn_completed at once. The
   * log says no more than that, so a cancel followed by a close within CLOSE_GAP_MS reads the same.
   */
  const closedWhileRunning = new Set<string>();
  for (let i = 0; i + 1 < events.length; i++) {
    const e = events[i]!;
    const next = events[i + 1]!;
    if (e.type === 'turn_completed' && e.stopReason === 'cancelled' && next.type === 'session_closed' && next.ts - e.ts <= CLOSE_GAP_MS) closedWhileRunning.add(e.turnId);
  }
  const turnRef = (): AnyActorRef | undefined => {
    const ref = actor?.getSnapshot().children.turn as AnyActorRef | undefined;
    return ref && ref.getSnapshot().status === 'active' ? ref : undefined;
  };
  const pending = (): { ref: AnyActorRef; run: EffectRun } | undefined => {
    const turn = turnRef();
    if (!turn) return undefined;
    for (const ref of Object.values(turn.getSnapshot().children as Record<string, AnyActorRef>)) {
      const snap = ref.getSnapshot() as StandInSnapshot;
      if (snap.status === 'active' && snap.effect) return { ref, run: runs.get(ref) ?? fresh(ref, snap) };
    }
    return undefined;
  };
  const runs = new WeakMap<AnyActorRef, EffectRun>();
  const fresh = (ref: AnyActorRef, snap: StandInSnapshot): EffectRun => {
    const run: EffectRun = { effect: snap.effect, input: snap.input as EffectRun['input'], emitted: [] };
    runs.set(ref, run);
    return run;
  };
  const complete = (p: { ref: AnyActorRef; run: EffectRun }, next: AgentEvent | undefined) => {
    const o = outputFor(p.run, next);
    p.ref.send(o.ok ? { type: 'replay.resolve', output: o.output } : { type: 'replay.reject', error: o.error });
  };
  /** Completes effects until `until()` holds or the turn has ended. */
  const advance = (until: () => boolean, next: AgentEvent) => {
    for (let n = 0; !until(); n++) {
      const p = pending();
      if (!p) return;
      if (n > MAX_STEPS_PER_EVENT) throw new TroupeError('internal_error', `replay made no progress at seq ${next.seq}`);
      complete(p, next);
    }
  };

  let lastSeq = 0;
  const step = (index: number): void => {
    const e = events[index]!;
    if (e.seq <= lastSeq) throw new TroupeError('invalid_params', `events out of order: seq ${e.seq} after ${lastSeq}`);
    lastSeq = e.seq;
    cause = e;
    switch (e.type) {
      case 'session_created':
        start(index);
        break;
      case 'user_message':
        // A turn still open here means its process died before the log could say so.
        if (!actor || turnRef()) start(index);
        actor!.send({ type: 'PROMPT', promptId: `replay-${e.seq}`, turnId: e.turnId, content: e.content });
        break;
      case 'turn_completed':
        if (e.errorCode === 'agent_crashed') {
          // Written by the next process when it reopened the session: the machines restarted.
          start(index);
          break;
        }
        if (isCancelMark(e)) cancel(e);
        advance(() => !turnRef(), e);
        break;
      case 'steer_received':
        turnRef() && actor!.send({ type: 'STEER', steerId: e.steerId, expectedTurnId: e.turnId, content: e.content });
        break;
      case 'steer_applied':
        advance(() => !(turnRef()?.getSnapshot().context.pendingSteers as { steerId: string }[] | undefined)?.some((s) => s.steerId === e.steerId), e);
        break;
      case 'turn_started':
      case 'session_configured':
      case 'steer_rejected':
        // Emitted by the machines' own actions, not by an effect: nothing has to finish first.
        break;
      case 'session_closed':
        if (actor?.getSnapshot().status === 'active') actor.send({ type: 'CLOSE' });
        break;
      default:
        if (isCancelMark(e)) {
          cancel(e);
          break;
        }
        if (!turnRef()) break;
        advance(() => {
          const p = pending();
          return !p || owns(p.run, e);
        }, e);
        {
          const p = pending();
          if (p && owns(p.run, e)) {
            p.run.emitted.push(e);
            // An effect whose last event is in the log ends now, not at the next event.
            if (finished(p.run)) complete(p, undefined);
          }
        }
    }
  };
  return {
    step,
    finish: () => {
      actor?.stop();
      return out;
    },
  };

  function cancel(e: AgentEvent) {
    if (!turnRef()) return;
    // Effects already finished in the log ended before the cancel did.
    advance(() => {
      const p = pending();
      return !p || !finished(p.run);
    }, e);
    const turnId = 'turnId' in e ? e.turnId : undefined;
    actor!.send({ type: turnId && closedWhileRunning.has(turnId) ? 'CLOSE' : 'CANCEL' });
  }
}

/** The states of the machines after the transitions up to and including `seq` (or all of them). */
export function statesAt(transitions: readonly Pick<ReplayedTransition, 'machine' | 'state' | 'seq' | 'event'>[], seq = Infinity): { session?: string; turn?: string } {
  const states: { session?: string; turn?: string } = {};
  for (const t of transitions) {
    if (t.seq > seq) break;
    states[t.machine] = t.state;
    // A new session machine (a restart) has no turn until it starts one.
    if (t.machine === 'session' && t.event === 'init') delete states.turn;
  }
  return states;
}
