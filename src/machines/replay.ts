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
import { isInterruptionRepair } from '../core/interruption.js';
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

/**
 * How soon after a cancelled turn's end a session_closed means the close ended that turn: how
 * SessionEngine.close() (removed 2026-12-07, see src/core/events.ts) ended a running turn, kept for
 * the logs that hold such a close.
 */
export const CLOSE_GAP_MS = 100;

/** Upper bound on effect completions one log event can imply (a turn's steps are bounded too). */
const MAX_STEPS_PER_EVENT = 10_000;

/**
 * Rebuilds the session and turn machines' transitions from a session's events (in seq order).
 * Throws `invalid_params` if the events are not one session's log in order.
 */
export function replaySession(events: readonly AgentEvent[]): ReplayedTransition[] {
  const fold = new ReplayFold();
  const out = fold.append(events);
  fold.stop();
  return out;
}

/**
 * `replaySession`, awaiting `pause()` after every `slice` events: a daemon replaying a long log
 * (tens of thousands of events, ~1 µs each) for the inspector keeps its event loop for its clients.
 */
export async function replaySessionInSlices(events: readonly AgentEvent[], pause: () => Promise<void>, slice = 4096): Promise<ReplayedTransition[]> {
  const fold = new ReplayFold();
  const out = await fold.appendInSlices(events, pause, slice);
  fold.stop();
  return out;
}

/** Cancelled turns whose end the fold may wait to learn about (one or two in any real log). */
const MAX_UNKNOWN_ENDS = 16;

type ReplayActor = ReturnType<typeof createActor<typeof replayMachine>>;

/**
 * The replay as a fold over the log, resumable: `append` the events that follow the ones already
 * folded, and get the transitions they cause. Folding a log in any number of appends gives what
 * `replaySession` gives for the whole of it, with one exception the fold reports instead of hiding.
 *
 * Two of the replay's rules read the log AFTER the event they decide on: machines that start use
 * the step limit of the next `turn_started`, and a cancel followed by a close within CLOSE_GAP_MS
 * is replayed as a close. When an append ends before the log says, the fold decides as if the log
 * ended there (no limit; a cancel), as a replay of the log so far does. If a later append shows it
 * otherwise (a `turn_started` after machines started without one; a close right after a cancelled
 * turn the fold replayed as cancelled), the fold's transitions are no longer the log's: it sets
 * `stale`, folds nothing more, and its owner replays the log again from the start. Both happen at
 * most once per start of the machines or per closed session, so nearly every append extends.
 * (The second rule, and the fields that serve it, are for logs written before 2026-12-07 only: no
 * log written since holds a close right after a cancelled turn, see CLOSE_GAP_MS. Kept for them.)
 */
export class ReplayFold {
  /** Set when a later event contradicts what the fold decided without it: replay from the start. */
  stale = false;
  /** Seq of the last event folded (0 before the first). */
  lastSeq = 0;
  private actor: ReplayActor | undefined;
  private cause: AgentEvent | undefined;
  private out: ReplayedTransition[] = [];
  /** Machines running with no `turn_started` seen after their start (so started without a step limit). */
  private startedWithoutLimit = false;
  /** Turns whose cancel came from CLOSE: session_closed follows their turn_completed at once. */
  private readonly closedWhileRunning = new Set<string>();
  /** Turns cancelled (not closed) before the log said whether a close followed their end. */
  private readonly cancelledBeforeKnown = new Set<string>();
  /** Turns whose end and the event after it are in the log up to the current append (so known). */
  private readonly endKnown = new Set<string>();
  /** The last event folded: its pair with the next append's first event is still to be seen. */
  private last: AgentEvent | undefined;
  private readonly runs = new WeakMap<AnyActorRef, EffectRun>();
  private readonly record = transitionRecorder((t) => this.cause && this.out.push({ ...t, at: this.cause.ts, seq: this.cause.seq, cause: this.cause }));

  /** Folds `events` (the ones after `lastSeq`, in order); returns the transitions they caused. */
  append(events: readonly AgentEvent[]): ReplayedTransition[] {
    if (!this.begin(events)) return [];
    for (let i = 0; i < events.length; i++) this.step(events, i);
    return this.take();
  }

  /** `append`, awaiting `pause()` after every `slice` events. */
  async appendInSlices(events: readonly AgentEvent[], pause: () => Promise<void>, slice = 4096): Promise<ReplayedTransition[]> {
    if (!this.begin(events)) return [];
    for (let i = 0; i < events.length; i++) {
      if (i > 0 && i % slice === 0) await pause();
      this.step(events, i);
    }
    return this.take();
  }

  /** Stops the machines (a fold no longer needed). */
  stop(): void {
    this.actor?.stop();
    this.actor = undefined;
  }

  private take(): ReplayedTransition[] {
    const out = this.out;
    this.out = [];
    this.endKnown.clear();
    return out;
  }

  /** Reads what `events` say about the decisions already taken; false if one was wrong (`stale`). */
  private begin(events: readonly AgentEvent[]): boolean {
    if (this.stale) return false;
    if (this.startedWithoutLimit && events.some((e) => e.type === 'turn_started')) this.stale = true;
    for (let i = 0; i < events.length; i++) {
      const e = i === 0 ? this.last : events[i - 1]!;
      const next = events[i]!;
      if (e?.type !== 'turn_completed') continue;
      this.endKnown.add(e.turnId);
      if (e.stopReason === 'cancelled' && next.type === 'session_closed' && next.ts - e.ts <= CLOSE_GAP_MS) {
        this.closedWhileRunning.add(e.turnId);
        if (this.cancelledBeforeKnown.has(e.turnId)) this.stale = true;
      }
      this.cancelledBeforeKnown.delete(e.turnId);
    }
    if (this.stale) this.stop();
    if (events.length > 0) this.last = events.at(-1);
    return !this.stale;
  }

  private start(events: readonly AgentEvent[], from: number): void {
    this.actor?.stop();
    // The machines stop a turn at its step limit: use the one the log's next turn ran with.
    let maxSteps = Number.MAX_SAFE_INTEGER;
    this.startedWithoutLimit = true;
    for (let i = from; i < events.length; i++) {
      const e = events[i]!;
      if (e.type === 'turn_started') {
        maxSteps = e.maxSteps;
        this.startedWithoutLimit = false;
        break;
      }
    }
    this.actor = createActor(replayMachine, { input: { maxSteps }, inspect: this.record });
    this.actor.start();
  }

  private turnRef(): AnyActorRef | undefined {
    const ref = this.actor?.getSnapshot().children.turn as AnyActorRef | undefined;
    return ref && ref.getSnapshot().status === 'active' ? ref : undefined;
  }

  private pending(): { ref: AnyActorRef; run: EffectRun } | undefined {
    const turn = this.turnRef();
    if (!turn) return undefined;
    for (const ref of Object.values(turn.getSnapshot().children as Record<string, AnyActorRef>)) {
      const snap = ref.getSnapshot() as StandInSnapshot;
      if (snap.status === 'active' && snap.effect) return { ref, run: this.runs.get(ref) ?? this.fresh(ref, snap) };
    }
    return undefined;
  }

  private fresh(ref: AnyActorRef, snap: StandInSnapshot): EffectRun {
    const run: EffectRun = { effect: snap.effect, input: snap.input as EffectRun['input'], emitted: [] };
    this.runs.set(ref, run);
    return run;
  }

  private complete(p: { ref: AnyActorRef; run: EffectRun }, next: AgentEvent | undefined): void {
    const o = outputFor(p.run, next);
    p.ref.send(o.ok ? { type: 'replay.resolve', output: o.output } : { type: 'replay.reject', error: o.error });
  }

  /** Completes effects until `until()` holds or the turn has ended. */
  private advance(until: () => boolean, next: AgentEvent): void {
    for (let n = 0; !until(); n++) {
      const p = this.pending();
      if (!p) return;
      if (n > MAX_STEPS_PER_EVENT) throw new TroupeError('internal_error', `replay made no progress at seq ${next.seq}`);
      this.complete(p, next);
    }
  }

  private step(events: readonly AgentEvent[], index: number): void {
    const e = events[index]!;
    if (e.seq <= this.lastSeq) throw new TroupeError('invalid_params', `events out of order: seq ${e.seq} after ${this.lastSeq}`);
    this.lastSeq = e.seq;
    this.cause = e;
    switch (e.type) {
      case 'session_created':
        this.start(events, index);
        break;
      case 'user_message':
        // A turn still open here means its process died before the log could say so.
        if (!this.actor || this.turnRef()) this.start(events, index);
        this.actor!.send({ type: 'PROMPT', promptId: `replay-${e.seq}`, turnId: e.turnId, content: e.content });
        break;
      case 'turn_completed':
        if (isInterruptionRepair(e)) {
          // Crash repair's end of a turn whose machines had stopped (its process died, or its session
          // stopped: the log failed, a machine failed), written with the stop's code: the machines
          // restart there, as the process that wrote it, or the next to open the session, started them.
          // (Until 2026-12-07 only an `agent_crashed` end restarted them: a stop's end was replayed as
          // the dead machines' own, a running tool as done and the turn going on, no restart.)
          this.start(events, index);
          break;
        }
        if (isCancelMark(e)) this.cancel(e);
        this.advance(() => !this.turnRef(), e);
        break;
      case 'steer_received':
        this.turnRef() && this.actor!.send({ type: 'STEER', steerId: e.steerId, expectedTurnId: e.turnId, content: e.content });
        break;
      case 'steer_applied':
        this.advance(() => !(this.turnRef()?.getSnapshot().context.pendingSteers as { steerId: string }[] | undefined)?.some((s) => s.steerId === e.steerId), e);
        break;
      case 'turn_started':
      case 'session_configured':
      case 'steer_rejected':
        // Emitted by the machines' own actions, not by an effect: nothing has to finish first.
        break;
      case 'content_part':
        // A slice of the event that follows (a large prompt, steer or tool call input): that event
        // says what finished. (Taken as an effect's, a steer's parts during a tool's run ended the run.)
        break;
      case 'session_closed':
        if (this.actor?.getSnapshot().status === 'active') this.actor.send({ type: 'CLOSE' });
        break;
      default: {
        // What crash repair wrote before that end moved no machine: they had stopped where they were.
        if (isInterruptionRepair(e)) break;
        if (isCancelMark(e)) {
          this.cancel(e);
          break;
        }
        if (!this.turnRef()) break;
        this.advance(() => {
          const p = this.pending();
          return !p || owns(p.run, e);
        }, e);
        const p = this.pending();
        if (p && owns(p.run, e)) {
          // A model step's chunks say nothing about what it returned (its tool calls do): a long
          // reply's thousands of chunks are not held by a fold that is kept between appends.
          if (p.run.effect !== 'modelStep' || e.type === 'tool_call_started') p.run.emitted.push(e);
          // An effect whose last event is in the log ends now, not at the next event.
          if (finished(p.run)) this.complete(p, undefined);
        }
      }
    }
  }

  private cancel(e: AgentEvent): void {
    if (!this.turnRef()) return;
    // Effects already finished in the log ended before the cancel did.
    this.advance(() => {
      const p = this.pending();
      return !p || !finished(p.run);
    }, e);
    const turnId = 'turnId' in e ? e.turnId : undefined;
    const closed = turnId !== undefined && this.closedWhileRunning.has(turnId);
    // Not known yet whether a close follows this turn's end: `begin` checks once the log says. (A
    // cancel mark of a turn ended in an earlier append stays noted; a few are kept, then replay anew.)
    if (turnId !== undefined && !closed && !this.endKnown.has(turnId)) {
      this.cancelledBeforeKnown.add(turnId);
      if (this.cancelledBeforeKnown.size > MAX_UNKNOWN_ENDS) this.stale = true;
    }
    this.actor!.send({ type: closed ? 'CLOSE' : 'CANCEL' });
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
