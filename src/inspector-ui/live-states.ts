/**
 * The machines' current states from the live feed, by the rules the daemon's MachineHub keeps them
 * with (src/daemon/machine-hub.ts; the page cannot import it): a session machine that starts has no
 * turn yet, and when no process runs the session any more, its session and turn machines are gone
 * with the last one. Taken as the last transition of each machine, a child killed mid-turn left the
 * page showing `running` / `tools.running` after its restart.
 */
import type { LiveTransition, MachineName, States } from './types.js';

/** Child states in which no process runs the session (as the hub's NO_PROCESS_STATES). */
const NO_PROCESS = new Set(['spawning', 'restarting', 'backoff', 'failed', 'idleStopped', 'exited']);

/**
 * Each machine's state after the live transitions seen: a state, `null` when the feed showed that the
 * machine is gone (or has not started: a turn), absent when the feed said nothing of it.
 */
export type LiveFold = Partial<Record<MachineName, string | null>>;

/** Whether a process runs the session while its child machine is in `childState`. */
export const runsProcess = (childState: string): boolean => !NO_PROCESS.has(childState);

/** Applies one live transition to `fold`, in place. */
export function applyLive(fold: LiveFold, t: Pick<LiveTransition, 'machine' | 'state' | 'event'>): LiveFold {
  fold[t.machine] = t.state;
  if (t.machine === 'session' && t.event === 'init') fold.turn = null;
  if (t.machine === 'child' && NO_PROCESS.has(t.state)) {
    fold.session = null;
    fold.turn = null;
  }
  return fold;
}

/** The states `fold` holds (those gone or unknown left out). */
export function foldedStates(fold: LiveFold): States {
  const out: States = {};
  for (const [m, v] of Object.entries(fold) as [MachineName, string | null | undefined][]) if (typeof v === 'string') out[m] = v;
  return out;
}

/**
 * The transitions of one session in `a` and in `b`, each once, in the daemon's order: known by their
 * number, never by their fields (two can be alike to the millisecond).
 */
export function mergeLive(a: LiveTransition[], b: LiveTransition[]): LiveTransition[] {
  const byN = new Map<number, LiveTransition>();
  for (const t of [...a, ...b]) byN.set(t.n, t);
  return [...byN.values()].sort((x, y) => x.n - y.n);
}

/** Each machine's last event among `live` (for the charts' captions). */
export function lastEvents(live: LiveTransition[]): Partial<Record<MachineName, string>> {
  const out: Partial<Record<MachineName, string>> = {};
  for (const t of live) out[t.machine] = t.event;
  return out;
}

/**
 * The fold of the session shown's live transitions (`app.live`), kept as the feed adds to them: the
 * page works its states out again at every transition (main.ts liveStates), and until 2026-12-07
 * folded the whole list each time, O(n) per transition over up to the daemon's last 500 and all the
 * feed brought since. The list is only pushed to, or replaced by another array (a session chosen,
 * a gap read again): a call with the same array folds only what was pushed since the last call; with
 * another, or one grown shorter, all of it.
 */
export class LiveFolder {
  private list: readonly LiveTransition[] | undefined;
  private folded = 0;
  private fold: LiveFold = {};

  /** The fold of `live` (applyLive over each, in order); not to be changed by the caller. */
  foldOf(live: readonly LiveTransition[]): Readonly<LiveFold> {
    if (live !== this.list || live.length < this.folded) {
      this.list = live;
      this.folded = 0;
      this.fold = {};
    }
    for (; this.folded < live.length; this.folded++) applyLive(this.fold, live[this.folded]!);
    return this.fold;
  }
}
