// One byte budget over the live queues of many watchers, of several sessions' brokers (the daemon's
// /v1 event streams: src/daemon/session-feeds.ts): at it, the queue holding most overflows.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isTroupeError } from '../../../src/core/errors.js';
import { MemoryEventLog } from '../../../src/store/memory-event-log.store.js';
import { QueueBudget } from '../../../src/store/queue-budget.js';
import { chunk } from '../../support/store/store-fixtures.js';

test('watchers of two sessions share one budget: the queue holding most overflows, the others keep their place', async () => {
  const budget = new QueueBudget(3000);
  const a = new MemoryEventLog({ sessionId: 'ses_a' });
  const b = new MemoryEventLog({ sessionId: 'ses_b' });
  // Each queue's own bound (1 MB) is far away: only the shared budget can act here.
  const wa = a.broker.subscribe(0, { queueMaxBytes: 1_000_000, queueBudget: budget })[Symbol.asyncIterator]();
  const wb = b.broker.subscribe(0, { queueMaxBytes: 1_000_000, queueBudget: budget })[Symbol.asyncIterator]();
  for (let i = 0; i < 3; i++) a.append(chunk('ses_a', 'a'.repeat(500)));
  b.append(chunk('ses_b', 'b'.repeat(500)));
  const held = budget.queuedBytes;
  assert.ok(held > 0 && held <= 3000, `the queues hold ${held} bytes`);
  // One more for b does not fit: a, holding most, goes, though the event is b's.
  b.append(chunk('ses_b', 'b'.repeat(500)));
  assert.ok(budget.queuedBytes <= 3000, `the queues hold ${budget.queuedBytes} bytes`);
  assert.equal(a.broker.queuedBytes(), 0, 'the largest queue was let go');
  await assert.rejects(wa.next(), (e: unknown) => isTroupeError(e, 'event_overflow') && (e.data as { budgetBytes?: number }).budgetBytes === 3000);
  // b keeps its place: both its events, in order.
  assert.deepEqual([(await wb.next()).value?.seq, (await wb.next()).value?.seq], [1, 2]);
  assert.equal(budget.queuedBytes, 0);
});

test('one event larger than the whole budget still reaches a watcher that holds nothing else', async () => {
  const budget = new QueueBudget(1000);
  const log = new MemoryEventLog({ sessionId: 'ses_big' });
  const w = log.broker.subscribe(0, { queueMaxBytes: 1_000_000, queueBudget: budget })[Symbol.asyncIterator]();
  log.append(chunk('ses_big', 'x'.repeat(5000)));
  assert.equal((await w.next()).value?.seq, 1);
});
