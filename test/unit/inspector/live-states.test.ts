// The states the inspector shows are worked out again at each live transition (main.ts liveStates):
// from the session shown's live transitions, folded as they come (LiveFolder), and from the rows the
// log rebuilds, once per list of rows (loggedStates). Each must give what a fold of everything gives,
// and read each transition and row once, not the whole history at every transition (until 2026-12-07
// it did: O(n) per transition). The arrays are real ones, counted through a Proxy of their reads.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyLive, LiveFolder, type LiveFold } from '../../../src/inspector-ui/live-states.js';
import { buildRows, loggedStates, statesThrough } from '../../../src/inspector-ui/timeline.js';
import type { LiveTransition, ReplayedTransition } from '../../../src/inspector-ui/types.js';

const CHILD = ['spawning', 'ready', 'busy', 'ready', 'backoff', 'restarting', 'ready'];
const SESSION = ['idle', 'running', 'idle'];

/** The `i`th transition of a made-up session: the three machines in turn, a child restart among them. */
function transition(i: number): LiveTransition {
  const machine = (['session', 'turn', 'child'] as const)[i % 3]!;
  const state = machine === 'child' ? CHILD[i % CHILD.length]! : machine === 'session' ? SESSION[i % SESSION.length]! : `tools.s${i % 4}`;
  return { n: i + 1, sessionId: 's', machine, state, event: i % 7 === 0 && machine === 'session' ? 'init' : `E${i}`, at: i };
}

const foldAll = (live: readonly LiveTransition[]): LiveFold => live.reduce<LiveFold>((f, t) => applyLive(f, t), {});

/** `items` as an array whose element reads are counted in `reads.n`. */
function counted<T>(items: T[]): { list: T[]; reads: { n: number } } {
  const reads = { n: 0 };
  const list = new Proxy(items, {
    get(target, key, receiver) {
      if (typeof key === 'string' && /^\d+$/.test(key)) reads.n++;
      return Reflect.get(target, key, receiver);
    },
  });
  return { list, reads };
}

test('LiveFolder: the fold of the live transitions as they are pushed, each read once; a replaced list is folded anew', () => {
  const folder = new LiveFolder();
  const { list: live, reads } = counted<LiveTransition>([]);
  for (let i = 0; i < 600; i++) {
    live.push(transition(i));
    const before = reads.n;
    const fold = folder.foldOf(live);
    assert.equal(reads.n - before, 1, `call ${i + 1} read only the transition pushed since the last (a fold of the whole list reads ${i + 1})`);
    assert.deepEqual(fold, foldAll(live), `after ${i + 1} transitions`);
  }

  // Replaced (a session chosen, a gap read again): another array, folded whole; then on from it.
  const merged = [transition(0), transition(4), transition(8)];
  assert.deepEqual(folder.foldOf(merged), foldAll(merged));
  merged.push(transition(9));
  assert.deepEqual(folder.foldOf(merged), foldAll(merged));
  // The same array made shorter is folded anew, not taken as grown.
  merged.length = 1;
  assert.deepEqual(folder.foldOf(merged), foldAll(merged));
  assert.deepEqual(folder.foldOf([]), {});
});

test('loggedStates: the session and turn states the log rebuilds, worked out once for a list of rows', () => {
  const replayed: ReplayedTransition[] = Array.from({ length: 300 }, (_, i) => ({
    seq: i + 1, at: i, machine: i % 2 ? ('turn' as const) : ('session' as const), state: i % 2 ? `tools.s${i % 4}` : SESSION[i % 3]!, event: i % 10 === 0 ? 'init' : `E${i}`, cause: {},
  })) as ReplayedTransition[];
  const child = Array.from({ length: 50 }, (_, i) => ({ ...transition(3 * i + 2), at: 6 * i }));
  const rows = buildRows([], replayed, child, []);
  const want = statesThrough(rows.filter((r) => r.lane !== 'child'), rows.length);
  assert.ok(want.session !== undefined && want.turn !== undefined && !('child' in want), JSON.stringify(want));
  const { list, reads } = counted(rows);
  assert.deepEqual(loggedStates(list), want);
  const once = reads.n;
  for (let i = 0; i < 500; i++) assert.deepEqual(loggedStates(list), want);
  assert.equal(reads.n, once, 'no row read again for the same list');
  // A list built anew (the next redraw) is worked out anew.
  const next = buildRows([], replayed.slice(0, 3), [], []);
  assert.deepEqual(loggedStates(next), statesThrough(next, next.length));
  assert.deepEqual(loggedStates([]), {});
});
