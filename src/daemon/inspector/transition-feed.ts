/**
 * Every machine transition the daemon sees (session, turn and child machines of every session),
 * numbered daemon-wide (by the MachineHub) so that the inspector can resume after a reconnect
 * (`Last-Event-ID`). The last `keep` are kept; a cursor older than that, or from another daemon
 * run, is a gap the stream says out loud (`event: replay_gap`) before it goes on from the oldest
 * one it still has.
 */
import type { MachineHub, RecordedTransition } from '../machine-hub.js';
import type { RouteRequest, RouteResponse } from '../http/route.types.js';
import { feedCursor } from '../http/sse-cursor.js';

export interface NumberedTransition extends RecordedTransition {
  sessionId: string;
}

export class TransitionFeed {
  private readonly kept: NumberedTransition[] = [];
  private readonly listeners = new Set<(t: NumberedTransition) => void>();
  private readonly stop: () => void;

  constructor(
    private readonly hub: MachineHub,
    private readonly keep = 5000,
  ) {
    this.stop = hub.listen((sessionId, t) => {
      const numbered = { sessionId, ...t };
      this.kept.push(numbered);
      if (this.kept.length > this.keep) this.kept.splice(0, this.kept.length - this.keep);
      for (const l of this.listeners) l(numbered);
    });
  }

  get lastN(): number {
    return this.hub.lastN;
  }

  close(): void {
    this.stop();
    this.listeners.clear();
  }

  /** SSE: `id: n`, `event: transition`; replays after the cursor, then live. `?session=ID` filters. */
  async stream(req: RouteRequest, res: RouteResponse): Promise<void> {
    const after = feedCursor(req); // a safe integer, or refused there
    const only = req.query.get('session') ?? undefined;
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
    const done = () => {
      this.listeners.delete(listener);
      wake?.();
    };
    sse.onClose(done);
    req.signal.addEventListener('abort', done, { once: true });
    try {
      const oldest = this.kept[0]?.n ?? this.lastN + 1;
      // A cursor beyond what this daemon numbered comes from an earlier run: everything is new.
      const from = after > this.lastN ? 0 : after;
      if (after > this.lastN || (after > 0 && after < oldest - 1)) {
        await sse.send(JSON.stringify({ code: 'replay_gap', after, resumedFrom: oldest }), { event: 'replay_gap' });
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
        else await new Promise<void>((r) => (wake = r));
        wake = undefined;
      }
    } finally {
      done();
      sse.close();
    }
  }
}
