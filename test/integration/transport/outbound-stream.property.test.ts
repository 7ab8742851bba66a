// Property test of one outbound stream: random pushes, receivers that attach (with or without
// Last-Event-ID), block, drain and leave. Resume must deliver exactly what follows the given id,
// the retention window must hold at least `retainEvents` delivered events, a gap must be explicit,
// and the pending byte count must match what no receiver has taken.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { OutboundStream, type StreamHost, type StreamReceiver } from '../../../src/daemon/http/acp/outbound-stream.js';

const seed = process.env.FC_SEED ? Number(process.env.FC_SEED) : Date.now() ^ (Math.random() * 2 ** 31);
console.log('fast-check seed', seed);

const RETAIN = 4;
const turn = (): Promise<void> => new Promise((r) => setImmediate(r));

type Op =
  | { kind: 'push'; count: number }
  | { kind: 'attach'; resume: 'none' | 'last-seen' | number }
  | { kind: 'detach' }
  | { kind: 'block'; after: number }
  | { kind: 'drain' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('push' as const), count: fc.integer({ min: 1, max: 6 }) }),
  fc.record({ kind: fc.constant('attach' as const), resume: fc.oneof(fc.constant('none' as const), fc.constant('last-seen' as const), fc.integer({ min: 0, max: 40 })) }),
  fc.record({ kind: fc.constant('detach' as const) }),
  fc.record({ kind: fc.constant('block' as const), after: fc.integer({ min: 0, max: 3 }) }),
  fc.record({ kind: fc.constant('drain' as const) }),
);

class FakeReceiver implements StreamReceiver {
  ids: number[] = [];
  gaps: Array<Record<string, unknown>> = [];
  budget = Infinity;
  write(id: number, json: string): boolean {
    this.ids.push(id);
    assert.equal(JSON.parse(json).n, id, 'payload matches its id');
    return --this.budget > 0;
  }
  writeUnnumbered(json: string): boolean {
    this.gaps.push(JSON.parse(json).params);
    return true;
  }
  keepAlive(): boolean {
    return true;
  }
  cork(fn: () => void): void {
    fn();
  }
  end(): void {}
}

test('outbound stream: resume, retention and pending accounting', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 30 }), async (ops) => {
      let pending = 0;
      let retained = 0;
      const host: StreamHost = { progress: () => undefined, pendingChanged: (b) => (pending += b), retainedChanged: (b) => (retained += b), now: () => 0 };
      const stream = new OutboundStream('ses', host, { events: RETAIN, bytes: 1e9 });
      const sizes: number[] = [0];
      let pushed = 0;
      let delivered = 0; // highest id any receiver got
      let clientSeen = 0; // what a resuming client would send as Last-Event-ID
      let current: FakeReceiver | undefined;
      let expectFrom: number | undefined; // first id the current receiver must get
      const settle = async (): Promise<void> => {
        await turn();
        if (current) {
          delivered = Math.max(delivered, ...current.ids, 0);
          if (current.ids.length > 0) clientSeen = current.ids.at(-1)!;
        }
      };
      for (const op of ops) {
        if (op.kind === 'push') {
          for (let i = 0; i < op.count; i++) {
            const json = JSON.stringify({ n: ++pushed, pad: 'x'.repeat(pushed % 7) });
            sizes.push(json.length);
            stream.push(json);
          }
        } else if (op.kind === 'attach' && !current) {
          const r = new FakeReceiver();
          const asked = op.resume === 'none' ? undefined : op.resume === 'last-seen' ? clientSeen : op.resume;
          stream.attach(r, asked === undefined ? undefined : String(asked));
          current = r;
          if (asked === undefined) expectFrom = delivered + 1;
          else if (r.gaps.length === 0) {
            // Anything inside the guaranteed window must resume without a gap.
            expectFrom = asked + 1;
          } else {
            const gap = r.gaps[0]!;
            assert.equal(gap['lastEventId'], asked);
            const first = gap['firstAvailableId'] as number;
            assert.ok(asked > delivered || asked < first - 1, `a gap only when ${asked} is outside the stored window`);
            assert.ok(first <= Math.max(1, delivered - RETAIN + 1), `at least ${RETAIN} delivered events are retained (first ${first}, delivered ${delivered})`);
            expectFrom = first;
          }
          if (asked !== undefined && asked <= delivered && asked >= delivered - RETAIN) assert.equal(r.gaps.length, 0, `no gap for ${asked} within the window`);
        } else if (op.kind === 'detach' && current) {
          stream.detach(current);
          current = undefined;
        } else if (op.kind === 'block' && current) {
          current.budget = op.after + 1;
        } else if (op.kind === 'drain' && current) {
          current.budget = Infinity;
          stream.resume();
        }
        await settle();
        if (current && expectFrom !== undefined && current.ids.length > 0) {
          const expected = Array.from({ length: current.ids.length }, (_, i) => expectFrom! + i);
          assert.deepEqual(current.ids, expected, 'a receiver gets contiguous ids from where it should start');
        }
        if (current && current.budget === Infinity) {
          assert.equal(current.ids.at(-1) ?? expectFrom! - 1, pushed, 'an unblocked receiver is up to date');
        }
        let undelivered = 0;
        for (let id = delivered + 1; id <= pushed; id++) undelivered += sizes[id]!;
        assert.equal(pending, undelivered, 'pending bytes = what no receiver has taken');
        assert.equal(retained, stream.retained, 'the host is told every change of the bytes kept for resume');
      }
    }),
    { seed, numRuns: 150 },
  );
});
