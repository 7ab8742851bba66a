// Property test of the session index's list (spec/event-log.md §6 "Listing"): whatever this process
// and another one sharing the index did, every page is what a plain filter and sort of all its
// entries gives. The index keeps its ids in list order between lists and puts new ones in place (or
// sorts them all when many come at once, as a merge of another process's hundreds does), and an
// entry's createdAt can change (a session_created folded after the daemon adopted the session): this
// is what would show a stale order. Replay with FC_SEED=<seed>.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import fc from 'fast-check';
import type { AgentEvent } from '../../../src/core/events.js';
import { isTroupeError } from '../../../src/core/errors.js';
import { encodeCursor } from '../../../src/store/session-index.codec.js';
import { SessionIndex } from '../../../src/store/session-index.store.js';
import type { SessionListOptions, SessionListPage } from '../../../src/store/session-index.list.js';
import type { SessionEntry } from '../../../src/store/session-summary.js';
import { fcRuns, fcSeed } from '../../support/fc-seed.js';
import { steppingClock, tempDir } from '../../support/store/store-fixtures.js';

const seed = fcSeed('session-list');

type By = 'us' | 'them';
interface Query {
  limit: number;
  cwd?: string;
  includeDeleted: boolean;
  /** A cursor of no page: a place between entries, or on one, or past them all. */
  pivot?: { offset: number; pick: number; ownId: boolean };
  pages: number;
}
type Op =
  | { kind: 'create'; by: By; how: 'create' | 'adopt'; sessions: { offset: number; cwd: string }[] }
  | { kind: 'status'; by: By; picks: number[]; status: 'active' | 'closed' | 'failed' }
  | { kind: 'delete'; by: By; picks: number[] }
  | { kind: 'recreate'; by: By; picks: number[]; shift: number }
  | { kind: 'merge'; into: By; how: 'refresh' | 'refreshIfChanged' };

const by = fc.constantFrom<By>('us', 'them');
const cwds = ['/a', '/b', '/a/sub'];
// Offsets from the clock's time: few values, so many sessions share a createdAt, and they come in
// any order, older ones after newer.
const session = fc.record({ offset: fc.integer({ min: -40, max: 40 }), cwd: fc.constantFrom(...cwds) });
const picks = fc.array(fc.nat(), { minLength: 1, maxLength: 6 });
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('create' as const), by, how: fc.constantFrom('create' as const, 'adopt' as const), sessions: fc.array(session, { minLength: 1, maxLength: 8 }) }) },
  // More than 256 sessions at once: the other process's merged in are sorted with the rest.
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('create' as const), by, how: fc.constant('adopt' as const), sessions: fc.array(session, { minLength: 257, maxLength: 320 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('status' as const), by, picks, status: fc.constantFrom('active' as const, 'closed' as const, 'failed' as const) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('delete' as const), by, picks: fc.array(fc.nat(), { minLength: 1, maxLength: 2 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('recreate' as const), by, picks, shift: fc.integer({ min: -60, max: 30 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('merge' as const), into: by, how: fc.constantFrom('refresh' as const, 'refreshIfChanged' as const) }) },
);
const query: fc.Arbitrary<Query> = fc.record(
  {
    limit: fc.oneof(fc.integer({ min: 1, max: 7 }), fc.integer({ min: 1, max: 400 }), fc.constant(10_000)),
    cwd: fc.constantFrom('/a', '/b/', '/a/sub/../sub', '/none'),
    includeDeleted: fc.boolean(),
    pivot: fc.record({ offset: fc.integer({ min: -45, max: 45 }), pick: fc.nat(), ownId: fc.boolean() }),
    pages: fc.integer({ min: 1, max: 4 }),
  },
  { requiredKeys: ['limit', 'includeDeleted', 'pages'] },
);

/** Newest first, then by id descending (spec/event-log.md §6), written out here rather than imported. */
function listOrder(a: SessionEntry, b: SessionEntry): number {
  if (a.createdAt !== b.createdAt) return b.createdAt - a.createdAt;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

/** The page a plain filter and sort of every entry the index holds gives. */
function expectedPage(index: SessionIndex, ids: readonly string[], o: SessionListOptions, pivot?: { createdAt: number; id: string }): SessionListPage {
  const cwd = o.cwd === undefined ? undefined : resolve(o.cwd);
  const all = ids
    .map((id) => index.get(id))
    .filter((e): e is SessionEntry => e !== undefined)
    .filter((e) => (o.includeDeleted || e.status !== 'deleted') && (cwd === undefined || e.cwd === cwd))
    .filter((e) => !pivot || listOrder(pivot as SessionEntry, e) < 0)
    .sort(listOrder);
  const page = all.slice(0, o.limit);
  return all.length > o.limit! ? { sessions: page, nextCursor: encodeCursor(page[page.length - 1]!) } : { sessions: page };
}

test('every page of the session list is what a plain filter and sort of all entries gives', async () => {
  let runs = 0;
  let most = 0;
  let moved = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(fc.tuple(op, query, query), { minLength: 4, maxLength: 14 }), async (steps) => {
      runs++;
      const { dir, cleanup } = tempDir('troupe-list-prop-');
      try {
        const clock = steppingClock();
        const indexes = { us: await SessionIndex.open(dir, { clock }), them: await SessionIndex.open(dir, { clock }) };
        const ids: string[] = [];
        let serial = 0;
        let seq = 1;
        for (const [o, ...queries] of steps) {
          clock.advance(10);
          if (o.kind === 'create') {
            const index = indexes[o.by];
            // Ids in no particular order against createdAt: a serial mixed up by a multiplier.
            const made = o.sessions.map((s) => ({ id: `ses_${String((serial++ * 7_919) % 1_000_003).padStart(7, '0')}`, cwd: s.cwd, model: 'm', mode: 'default', createdAt: clock.now() + s.offset }));
            ids.push(...made.map((s) => s.id));
            // Adopted at once (in their order: adopt adds before it waits); created one by one, as
            // each re-reads the file first, in an order a replay keeps.
            if (o.how === 'adopt') await Promise.all(made.map((s) => index.adopt(s)));
            else for (const s of made) await index.create(s);
          } else if (o.kind === 'merge') {
            await indexes[o.into][o.how]();
          } else if (ids.length > 0) {
            const index = indexes[o.by];
            const chosen = [...new Set(o.picks.map((k) => ids[k % ids.length]!))];
            for (const id of chosen) {
              try {
                if (o.kind === 'status') await index.setStatus(id, o.status);
                else if (o.kind === 'delete') await index.tombstone(id);
                else {
                  // A session_created folded into an entry it holds: its createdAt is the event's.
                  const cur = index.get(id);
                  if (!cur) continue;
                  if (cur.createdAt !== clock.now() + o.shift) moved++;
                  await index.applyEvents([{ type: 'session_created', sessionId: id, cwd: cur.cwd, additionalDirectories: [], model: 'm', mode: 'default', seq: cur.lastSeq + seq++, ts: clock.now() + o.shift } as AgentEvent]);
                }
              } catch (err) {
                // A deleted session's status stays; one this index never heard of is not found.
                if (!isTroupeError(err, 'session_not_found')) throw err;
              }
            }
          }
          for (const [name, index] of Object.entries(indexes)) {
            // The whole list, where an entry out of place shows whatever the page.
            const everything = { limit: 10_000, includeDeleted: true };
            assert.deepEqual(index.list(everything), expectedPage(index, ids, everything), `${name}'s whole list`);
            const q = name === 'us' ? queries[0]! : queries[1]!;
            const options: SessionListOptions = { limit: q.limit, includeDeleted: q.includeDeleted, ...(q.cwd !== undefined ? { cwd: q.cwd } : {}) };
            // Pages in turn from the start, each following the last one's cursor.
            let cursor: string | undefined;
            let pivot: { createdAt: number; id: string } | undefined;
            for (let p = 0; p < q.pages; p++) {
              const got = index.list({ ...options, ...(cursor !== undefined ? { cursor } : {}) });
              assert.deepEqual(got, expectedPage(index, ids, options, pivot), `${name}'s page ${p} of ${JSON.stringify(options)}`);
              if (!got.nextCursor) break;
              cursor = got.nextCursor;
              pivot = got.sessions[got.sessions.length - 1]!;
            }
            if (q.pivot && ids.length > 0) {
              // A cursor at any place: a session's id with a createdAt near the others' (its own or not).
              const id = ids[q.pivot.pick % ids.length]!;
              const at = { createdAt: q.pivot.ownId ? (index.get(id)?.createdAt ?? clock.now()) : clock.now() + q.pivot.offset, id };
              const got = index.list({ ...options, cursor: encodeCursor(at as SessionEntry) });
              assert.deepEqual(got, expectedPage(index, ids, options, at), `${name}'s page after ${JSON.stringify(at)} of ${JSON.stringify(options)}`);
            }
            // Pages are copies: changing one changes nothing in the index.
            const first = index.list({ limit: 1, includeDeleted: true }).sessions[0];
            if (first) {
              first.createdAt = -1;
              assert.notEqual(index.get(first.id)!.createdAt, -1);
            }
          }
          most = Math.max(most, ids.length);
        }
      } finally {
        cleanup();
      }
    }),
    { seed, numRuns: fcRuns(40) },
  );
  assert.ok(runs >= 40);
  // Some run must have had more than 256 sessions come in at once, and some entry's createdAt changed.
  assert.ok(most > 256, `the largest index had ${most} sessions`);
  assert.ok(moved > 0, 'no createdAt changed');
  console.log('largest index', most, '; createdAt changed', moved, 'times');
});
