/**
 * The session engine: runs the session and turn machines against a model, tools and an event log.
 * Every effect the machines name is supplied here; every fact is an event in the log.
 *
 *   const engine = SessionEngine.create(deps, { sessionId, cwd, model, mode });
 *   const { turnId, result } = engine.prompt([{ type: 'text', text: 'hi' }]);
 *   await result; // { stopReason: 'end_turn', … } once its events are durable
 */
import { createActor, type Actor, type InspectionEvent } from 'xstate';
import type { AgentEvent, AgentEventInput, ContentBlock } from '../core/events.js';
import { TroupeError } from '../core/errors.js';
import { newLocalId, newTurnId } from '../core/ids.js';
import { HISTORY_PAGE_BYTES, type EventWatcher } from '../core/ports.js';
import type { sessionMachine, QueuedPrompt } from '../machines/session.machine.js';
import type { TurnResult } from '../machines/turn.machine.js';
import { EngineCore, type EngineDeps } from './engine-core.js';
import { compact, failOpenCompaction } from './compaction.effect.js';
import { bindEngine, engineMachine } from './engine-machines.js';
import { CRASHED, endInterruptedTurn, type Interruption } from './crash-repair.js';

/** The stand-in message id of a prompt's size check (never stored): made once. */
let checkedMessageId: string | undefined;

export interface PromptResult extends TurnResult {
  turnId: string;
}

export interface PromptHandle {
  promptId: string;
  turnId: string;
  /** Resolves with the turn's result once its last event is durable. Never rejects. */
  result: Promise<PromptResult>;
}

export interface NewSession {
  sessionId: string;
  cwd: string;
  additionalDirectories?: string[];
  model: string;
  mode: string;
  forkedFrom?: { sessionId: string; throughSeq: number };
}

/** What is wired to an engine before its machines start. */
export interface EngineOptions {
  /**
   * An inspector of the session and turn machines from their very first state: one added with
   * `inspect()` once the engine exists is not told the session machine's initial state, and a
   * supervised child's daemon went on showing the states its crashed process last reported.
   */
  inspect?: (event: InspectionEvent) => void;
}

export interface EngineState {
  session: string;
  turn?: unknown;
  turnId?: string;
  queue: { promptId: string; turnId: string }[];
  lastSeq: number;
  closed: boolean;
}


/** The seq in a fork of the last event it copied through the source's `seq` (none: its own session_created's, 1). */
function copiedThrough(renumbered: ReadonlyMap<number, number>, seq: number): number {
  for (let s = seq; s > 0; s--) {
    const copied = renumbered.get(s);
    if (copied !== undefined) return copied;
  }
  return 1;
}

/** A machine's failure (an action threw: a bug) as the session's error, logged with its stack. */
function machineFailure(err: unknown, deps: EngineDeps): TroupeError {
  deps.logger.error('a session machine failed; the session stops, the process goes on', { error: String(err), stack: (err as Error)?.stack });
  return new TroupeError('internal_error', `the session stopped on an internal error: ${err instanceof Error ? err.message : String(err)}`);
}

export class SessionEngine {
  private readonly core: EngineCore;
  private readonly actor: Actor<typeof sessionMachine>;
  /** Prompts not yet settled: their turn, their result promise and its resolver. */
  private readonly waiting = new Map<string, { turnId: string; promise: Promise<PromptResult>; resolve: (r: PromptResult) => void }>();
  /** Why the session stopped by itself, once it has (see stopWith): it then refuses every request with it. */
  private failure: TroupeError | undefined;
  private readonly stopListeners = new Set<(err: TroupeError) => void>();
  private readonly steerOutcomes = new Map<string, TroupeError>();
  private readonly inspectors = new Set<(event: InspectionEvent) => void>();
  /** The compaction `/compact` runs (outside any turn): what stops it, and its end. */
  private manualCompaction?: { stop: AbortController; done: Promise<void> };

  private constructor(sessionId: string, deps: EngineDeps, options: EngineOptions) {
    this.core = new EngineCore(sessionId, deps);
    if (options.inspect) this.inspectors.add(options.inspect);
    this.actor = createActor(engineMachine, {
      input: { maxSteps: deps.limits.maxSteps },
      inspect: (ev) => this.inspectors.forEach((f) => this.tell(f, ev)),
    });
    bindEngine(this.actor.system, this.core, {
      resolvePrompt: (id, r) => this.resolvePrompt(id, r),
      steerRefused: (id, e) => void this.steerOutcomes.set(id, e),
    });
    deps.log.onFailure((err) => this.stopWith(err));
    // With an error listener, an action that throws (a bug) stops this session's machines and is
    // reported here, instead of being thrown on its own and ending the process with every session.
    this.actor.subscribe({ error: (err) => this.stopWith(machineFailure(err, deps)) });
  }

  /**
   * Starts a new session: its first event is session_created. `history` (a fork's source events,
   * complete turns only) is copied after it under the new session id, renumbered.
   */
  static create(deps: EngineDeps, init: NewSession, history: readonly AgentEvent[] = [], options: EngineOptions = {}): SessionEngine {
    const engine = new SessionEngine(init.sessionId, deps, options);
    engine.core.emit({
      type: 'session_created',
      sessionId: init.sessionId,
      cwd: init.cwd,
      additionalDirectories: init.additionalDirectories ?? [],
      model: init.model,
      mode: init.mode,
      ...(init.forkedFrom ? { forkedFrom: init.forkedFrom } : {}),
    });
    // Each copied event's seq here, by its seq in the source: the copy leaves events out (below), so
    // a seq an event names (a summary's throughSeq) is renumbered too. Until 2026-12-07 it was not,
    // and after a change of directories the fork's summary also covered the first turn it keeps.
    const renumbered = new Map<number, number>();
    const copy = (seq: number, input: AgentEventInput) => {
      renumbered.set(seq, engine.core.emit(input).seq);
      // A part in the file at once, as the engine logs one (engine-core.ts emitParted): a history of
      // 80 MiB of parts copied was otherwise held by the writer and encoded all at once, 100 MB more
      // of the fork's process at its peak (400 MB, 300 now).
      if (input.type === 'content_part') deps.log.writePending();
    };
    for (const event of history) {
      if (event.type === 'session_created' || event.type === 'session_closed') continue;
      const { seq, ts: _ts, ...rest } = event;
      if (rest.type === 'session_configured' && rest.additionalDirectories !== undefined) {
        // A fork's directories are the ones it was made with: the source's are not inherited (ACP).
        const { additionalDirectories: _dirs, ...kept } = rest;
        if (kept.mode !== undefined || kept.model !== undefined || kept.title !== undefined) copy(seq, { ...kept, sessionId: init.sessionId });
        continue;
      }
      if (rest.type === 'compaction_completed' && rest.throughSeq !== undefined) rest.throughSeq = copiedThrough(renumbered, rest.throughSeq);
      copy(seq, { ...rest, sessionId: init.sessionId } as AgentEventInput);
    }
    engine.actor.start();
    return engine;
  }

  /**
   * Reopens a session from its log. A turn the log shows as started and never completed (the
   * process died) is ended as `error` / `agent_crashed`, so it is never silently missing; with
   * `interrupted`, with that error instead (the session stopped on it in this process: its log failed).
   */
  static async open(deps: EngineDeps, sessionId: string, interrupted: Interruption = CRASHED, options: EngineOptions = {}): Promise<SessionEngine> {
    const engine = new SessionEngine(sessionId, deps, options);
    let cursor = 0;
    for (;;) {
      const page = await deps.log.readAfter(cursor, { limit: 4096, maxBytes: HISTORY_PAGE_BYTES });
      for (const event of page.events) engine.core.conversation.apply(event);
      cursor = page.cursor;
      if (!page.hasMore) break;
    }
    if (engine.core.conversation.lastSeq === 0) throw new TroupeError('session_not_found', `session ${sessionId} has no events`, { sessionId });
    if (endInterruptedTurn(engine.core, interrupted)) await deps.log.whenDurable(deps.log.lastSeq());
    engine.actor.start();
    return engine;
  }

  get sessionId(): string {
    return this.core.sessionId;
  }

  get conversation() {
    return this.core.conversation;
  }

  /** Nothing runs or waits: no turn, no queued prompt, no prompt waiting for its result. */
  get idle(): boolean {
    const snap = this.actor.getSnapshot();
    return snap.status === 'active' && snap.value === 'idle' && snap.context.queue.length === 0 && this.waiting.size === 0 && !this.manualCompaction;
  }

  /**
   * Queues a prompt; it runs when every earlier prompt has finished. `turnId` names its turn when the
   * caller must know it first: a prompt to an idle session starts its turn (and emits its
   * `user_message`) within this call.
   */
  prompt(content: ContentBlock[], turnId = newTurnId(this.core.deps.clock.now())): PromptHandle {
    this.assertOpen();
    const item: QueuedPrompt = { promptId: newLocalId('prompt'), turnId, content };
    // A prompt its log cannot hold is refused here: appended by the turn's start action, it would
    // throw inside the session machine and take the process down. (The message id is made by that
    // action; a stand-in of its length sizes the event the same.) Content of any size is held, in parts.
    this.core.checkMessage({ type: 'user_message', sessionId: this.sessionId, turnId: item.turnId, messageId: (checkedMessageId ??= newLocalId('msg')), content });
    let resolve!: (r: PromptResult) => void;
    const result = new Promise<PromptResult>((r) => (resolve = r));
    this.waiting.set(item.promptId, { turnId: item.turnId, promise: result, resolve });
    this.actor.send({ type: 'PROMPT', ...item });
    return { promptId: item.promptId, turnId: item.turnId, result };
  }

  /**
   * Cancels the running turn (or `/compact`'s compaction) and every queued prompt. A no-op when idle.
   * `cause`, when the client did not ask (the process is stopping): what the cancelled turn's tool
   * call and end say instead of "by the user".
   */
  cancel(cause?: string): void {
    // A cause given first stays: the client's own cancel that follows does not make it the user's.
    if (cause && this.core.conversation.openTurn) this.core.cancelCause ??= cause;
    this.manualCompaction?.stop.abort();
    if (this.actor.getSnapshot().status === 'active') this.actor.send({ type: 'CANCEL' });
  }

  /**
   * Cancels one prompt (its client withdrew the request): its turn if it runs, else its place in
   * the queue; its result is `cancelled` either way. The other prompts go on. A no-op once it is done.
   */
  withdraw(promptId: string): void {
    if (this.actor.getSnapshot().status === 'active') this.actor.send({ type: 'WITHDRAW', promptId });
  }

  /**
   * Guidance for the running turn, fenced by its id. Throws `turn_mismatch` or `no_active_turn`;
   * accepted guidance reaches the model at the next step boundary (steer_applied) or is rejected
   * with `turn_ended` if the turn ends first.
   */
  steer(expectedTurnId: string, content: ContentBlock[]): { steerId: string; turnId: string } {
    this.assertOpen();
    const steerId = newLocalId('steer');
    this.core.checkMessage({ type: 'steer_received', sessionId: this.sessionId, turnId: expectedTurnId, steerId, content });
    this.actor.send({ type: 'STEER', steerId, expectedTurnId, content });
    const outcome = this.steerOutcomes.get(steerId);
    this.steerOutcomes.delete(steerId);
    if (outcome) throw outcome;
    return { steerId, turnId: expectedTurnId };
  }

  /** Changes the mode, model or additional directories for the next model step. */
  configure(change: { mode?: string; model?: string; title?: string; additionalDirectories?: string[] }): void {
    this.assertOpen();
    if (change.model !== undefined) this.core.deps.resolveModel(change.model); // throws model_not_found
    this.core.emit({ type: 'session_configured', sessionId: this.sessionId, ...change });
  }

  /**
   * Compacts the conversation now (the `/compact` command). Refused while a turn or another
   * compaction runs. Prompts sent meanwhile wait for it; `cancel` stops it, and so does `signal`
   * (its request withdrawn), which leaves those prompts to run (then: `cancelled`).
   */
  async compactNow(signal?: AbortSignal): Promise<'completed' | 'cancelled'> {
    this.assertOpen();
    if (this.core.conversation.openTurn || this.actor.getSnapshot().value !== 'idle' || this.manualCompaction) {
      throw new TroupeError('session_busy', 'cannot compact while a turn runs; cancel it or wait');
    }
    if (signal?.aborted) return 'cancelled';
    const stop = new AbortController();
    // Until 2026-12-06 only `cancel` stopped it: a `/compact` whose request the client withdrew
    // ($/cancel_request) ran to its end, or never answered while the summary call hung.
    const withdraw = () => stop.abort();
    signal?.addEventListener('abort', withdraw, { once: true });
    let ended!: () => void;
    this.manualCompaction = { stop, done: new Promise<void>((resolve) => (ended = resolve)) };
    const outcome = await this.compactAlone(stop.signal).finally(() => {
      signal?.removeEventListener('abort', withdraw);
      ended();
    });
    await this.core.deps.log.whenDurable(this.core.deps.log.lastSeq());
    return outcome;
  }

  /** Unloads the session without ending it (it can be reopened): cancels work, stops the machines. */
  async dispose(cause?: string): Promise<void> {
    this.cancel(cause);
    if (this.manualCompaction) await this.stopManualCompaction();
    await Promise.all([...this.waiting.values()].map((w) => w.promise));
    this.actor.stop();
    // A failed log has nothing more to make durable.
    if (!this.core.deps.log.failure()) await this.core.deps.log.whenDurable(this.core.deps.log.lastSeq());
  }

  subscribe(afterSeq: number, options?: { queueLimit?: number }): EventWatcher {
    return this.core.deps.log.subscribe(afterSeq, options);
  }

  /** Every emitted event, synchronously, in order (for projections living in the same process). */
  observe(listener: (event: AgentEvent) => void): () => void {
    this.core.observers.add(listener);
    return () => this.core.observers.delete(listener);
  }

  /**
   * One inspector is told one event. What watches the machines must not stop them: an exception
   * thrown into XState's event loop leaves it taking no more events (the session would hang).
   */
  private tell(listener: (event: InspectionEvent) => void, event: InspectionEvent): void {
    try {
      listener(event);
    } catch (err) {
      this.core.deps.logger.error('a watcher of the session machines failed; the session goes on', { error: String(err) });
    }
  }

  /**
   * XState inspection events of the session and turn machines (for the inspector), from now on: the
   * machines' states before are not told (EngineOptions.inspect is, from their start).
   */
  inspect(listener: (event: InspectionEvent) => void): () => void {
    this.inspectors.add(listener);
    return () => this.inspectors.delete(listener);
  }

  state(): EngineState {
    const snap = this.actor.getSnapshot();
    const turn = snap.children.turn?.getSnapshot();
    return {
      session: typeof snap.value === 'string' ? snap.value : JSON.stringify(snap.value),
      ...(turn ? { turn: turn.value } : {}),
      ...(snap.context.current ? { turnId: snap.context.current.turnId } : {}),
      queue: snap.context.queue.map((q) => ({ promptId: q.promptId, turnId: q.turnId })),
      lastSeq: this.core.deps.log.lastSeq(),
      // Never true of an engine: only a CLOSE ends its machine, and no engine is sent one since
      // SessionEngine.close() was removed (session/close unloads). Kept in the answer's documented shape.
      closed: false,
    };
  }

  /** `/compact`'s compaction, the session machine told, so that prompts wait for it. */
  private async compactAlone(signal: AbortSignal): Promise<'completed' | 'cancelled'> {
    this.actor.send({ type: 'COMPACTION', running: true });
    try {
      await compact(this.core, undefined, 'manual', signal);
      return 'completed';
    } catch (err) {
      if (!signal.aborted) throw err;
      // A cancelled compaction is left open by compact() (a turn's end closes a turn's): close it here.
      if (!this.failure) failOpenCompaction(this.core, 'request_cancelled');
      return 'cancelled';
    } finally {
      this.manualCompaction = undefined;
      // The prompts that waited for it start now.
      if (this.actor.getSnapshot().status === 'active') this.actor.send({ type: 'COMPACTION', running: false });
    }
  }

  private async stopManualCompaction(): Promise<void> {
    const running = this.manualCompaction;
    running?.stop.abort();
    await running?.done;
  }

  private assertOpen(): void {
    if (this.failure) throw this.failure;
    if (this.actor.getSnapshot().status !== 'active' || this.core.conversation.closed) {
      throw new TroupeError('session_closed', `session ${this.sessionId} is closed`, { sessionId: this.sessionId });
    }
  }

  /** Called once if the session stops by itself (its log failed, or one of its machines did); its host then unloads it. */
  onStop(listener: (err: TroupeError) => void): void {
    this.stopListeners.add(listener);
  }

  /**
   * The session cannot go on: its log failed (a full or failing disk: nothing more it does can be
   * recorded), or one of its machines failed (an action threw). It stops where it is, as if its
   * process had died there, and only it: its machines stop at once (a running model stream or tool
   * call is aborted, and no action of theirs runs again); a turn or a compaction left open is ended
   * in the log with the error when the log still takes it (else it is when the session is next
   * opened, as after a crash); every prompt waiting is answered with the error; later requests are
   * refused with it.
   */
  private stopWith(err: TroupeError): void {
    if (this.failure) return;
    this.failure = err;
    this.actor.stop();
    // What the machines had started stops too (a failed machine's actors were left running).
    this.core.halt.abort();
    this.manualCompaction?.stop.abort();
    const open = this.core.conversation.openTurn;
    const steps = open?.steps ?? 0;
    let ended = false;
    if ((open || this.core.conversation.openCompaction) && !this.core.deps.log.failure()) {
      try {
        ended = endInterruptedTurn(this.core, { code: err.code, message: err.message });
      } catch (e) {
        this.core.deps.logger.error('could not end the interrupted turn; it is ended when the session is next opened', { error: String(e) });
      }
    }
    const answer = () => {
      for (const [promptId, w] of this.waiting) {
        this.resolvePrompt(promptId, { turnId: w.turnId, stopReason: 'error', errorCode: err.code, message: err.message, steps: open?.turnId === w.turnId ? steps : 0 });
      }
    };
    // As for any turn, its result goes out once its end is durable.
    if (ended) void this.core.deps.log.whenDurable(this.core.deps.log.lastSeq()).then(answer, answer);
    else answer();
    for (const listener of this.stopListeners) listener(err);
  }

  private resolvePrompt(promptId: string, result: PromptResult): void {
    const waiting = this.waiting.get(promptId);
    this.waiting.delete(promptId);
    waiting?.resolve(result);
  }
}
