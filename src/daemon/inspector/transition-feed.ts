/**
 * Every machine transition the daemon sees (session, turn and child machines of every session),
 * numbered daemon-wide (by the MachineHub) so that the inspector can resume after a reconnect
 * (`Last-Event-ID`). The last `keep` are kept; a cursor older than that, or from another daemon
 * run, is a gap the stream says out loud (`event: replay_gap`) before it goes on from the oldest
 * one it still has. A session deleted takes its transitions out of those kept, and ends the streams
 * of that session alone (`?session=ID`) as its events feed ends.
 */
import type { MachineHub, RecordedTransition } from '../machine-hub.js';
import type { RouteRequest, RouteResponse } from '../http/route.types.js';
import { feedCursor } from '../http/sse-cursor.js';
import { oneParam } from '../http/query-param.js';

export interface NumberedTransition extends RecordedTransition {
  sessionId: string;
}

/**
 * The session a transitions stream is of (`?session=ID`), if any. Given more than once it is
 * refused `invalid_params`, as the management API refuses any parameter given twice: until
 * 2026-12-07 the first was taken and the others ignored.
 */
export function onlySession(query: URLSearchParams): string | undefined {
  return oneParam(query, 'session') ?? undefined;
}

export class TransitionFeed {
  private readonly kept: NumberedTransition[] = [];
  /**
   * The number of the latest transition dropped for the `keep` bound (or numbered before this feed
   * existed): a cursor before it missed something. Kept apart from `kept[0]`, which a deleted
   * session's transitions leaving may move on without anything being missed.
   */
  private droppedThrough: number;
  private readonly listeners = new Set<(t: NumberedTransition) => void>();
  /** Streams of one session (`?session=ID`), each told when its session is deleted. */
  private readonly ends = new Set<(sessionId: string) => void>();
  private readonly stop: () => void;
  private readonly stopForget: () => void;

  constructor(
    private readonly hub: MachineHub,
    private readonly keep = 5000,
  ) {
    this.droppedThrough = hub.lastN;
    this.stop = hub.listen((sessionId, t) => {
      const numbered = { sessionId, ...t };
      this.kept.push(numbered);
      if (this.kept.length > this.keep) this.droppedThrough = this.kept.splice(0, this.kept.length - this.keep).at(-1)!.n;
      for (const l of this.listeners) l(numbered);
    });
    this.stopForget = hub.onForget((sessionId) => this.forget(sessionId));
  }

  /**
   * A session deleted: nothing of it stays to be replayed (the hub forgot its history too; until
   * 2026-12-07 a reader resuming, or starting from 0, was sent the transitions of sessions deleted
   * since), and its own streams end once they have sent what came before (until 2026-12-07 they
   * stayed open, silent, for as long as their reader kept them).
   */
  private forget(sessionId: string): void {
    if (this.kept.some((t) => t.sessionId === sessionId)) {
      const others = this.kept.filter((t) => t.sessionId !== sessionId);
      this.kept.length = 0;
      this.kept.push(...others);
    }
    for (const end of this.ends) end(sessionId);
  }

  get lastN(): number {
    return this.hub.lastN;
  }

  close(): void {
    this.stop();
    this.stopForget();
    this.listeners.clear();
    this.ends.clear();
  }

  /**
   * SSE: `id: n`, `event: transition`; replays after the cursor, then live. `?session=ID` filters,
   * and the stream then ends when that session is deleted, after the transitions that came before.
   */
  async stream(req: RouteRequest, res: RouteResponse): Promise<void> {
    const after = feedCursor(req); // a safe integer, or refused there
    const only = onlySession(req.query);
    const sse = res.sse();
    const queue: NumberedTransition[] = [];
    let wake: (() => void) | undefined;
    const listener = (t: NumberedTransition) => {
      // A reader more than `keep` behind could not resume where it is anyway (it would get a
      // replay_gap): its stream is cut off rather than queued for without bound. It reconnects.
      if (queue.length >= this.keep) return sse.abort();
      queue.push(t);
      wake?.();
    };
    this.listeners.add(listener);
    // Its session deleted: what is queued was recorded before (the hub forgets a session after its
    // child's last transition), and is sent; then the stream ends, as the session's events feed does.
    let ended = false;
    const end = (sessionId: string) => {
      if (sessionId !== only) return;
      ended = true;
      wake?.();
    };
    if (only !== undefined) this.ends.add(end);
    const done = () => {
      this.listeners.delete(listener);
      this.ends.delete(end);
      wake?.();
    };
    sse.onClose(done);
    req.signal.addEventListener('abort', done, { once: true });
    try {
      // A cursor beyond what this daemon numbered comes from an earlier run: everything is new.
      const from = after > this.lastN ? 0 : after;
      if (after > this.lastN || (after > 0 && after < this.droppedThrough)) {
        await sse.send(JSON.stringify({ code: 'replay_gap', after, resumedFrom: this.droppedThrough + 1 }), { event: 'replay_gap' });
      }
      const backlog = this.kept.filter((t) => t.n > from);
      let last = from;
      const emit = async (t: NumberedTransition) => {
        if (t.n <= last) return;
        last = t.n;
        if (!only || t.sessionId === only) await sse.send(JSON.stringify(t), { id: t.n, event: 'transition' });
      };
      for (const t of backlog) await emit(t);
      while (!sse.closed && !req.signal.aborted) {
        const t = queue.shift();
        if (t) await emit(t);
        else if (ended) break;
        else await new Promise<void>((r) => (wake = r));
        wake = undefined;
      }
    } finally {
      done();
      sse.close();
    }
  }
}
