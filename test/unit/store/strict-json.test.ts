import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isTroupeError } from '../../../src/core/errors.js';
import { MemoryEventLog } from '../../../src/store/memory-event-log.store.js';
import { projectStrictJson, resolveMaxEventBytes, DEFAULT_MAX_EVENT_BYTES } from '../../../src/store/strict-json.codec.js';
import type { AgentEventInput } from '../../../src/core/events.js';

const SID = 'ses_strict';

function toolInput(input: unknown): AgentEventInput {
  return { type: 'tool_call_started', sessionId: SID, turnId: 't', toolCallId: 'c', name: 'x', kind: 'other', title: 'x', status: 'pending', input: input as Record<string, unknown>, locations: [] };
}

test('rejected payloads throw invalid_event_payload and consume no seq', () => {
  class Thing {
    a = 1;
  }
  const cyclic: Record<string, unknown> = { a: 1 };
  cyclic.self = cyclic;
  const bad: [string, unknown][] = [
    ['NaN', { n: NaN }],
    ['Infinity', { n: Infinity }],
    ['-Infinity', { n: [-Infinity] }],
    ['cycle', cyclic],
    ['cycle through array', (() => { const a: unknown[] = []; a.push({ a }); return { a }; })()],
    ['Map', { m: new Map([[1, 2]]) }],
    ['Set', { s: new Set([1]) }],
    ['Date', { d: new Date(0) }],
    ['class instance', { t: new Thing() }],
    ['symbol key', { [Symbol('k')]: 1 }],
    ['function', { f: () => 1 }],
    ['bigint', { b: 10n }],
    ['undefined in array', { a: [1, undefined] }],
    ['sparse array', { a: [1, , 3] }],
    ['Int16Array', { a: new Int16Array(2) }],
    ['__proto__ key', JSON.parse('{"__proto__": {"x": 1}}')],
  ];
  const log = new MemoryEventLog({ sessionId: SID });
  for (const [name, input] of bad) {
    assert.throws(() => log.append(toolInput(input)), (err: unknown) => isTroupeError(err, 'invalid_event_payload'), name);
  }
  assert.equal(log.lastSeq(), 0, 'no seq consumed by a rejected event');
  const ok = log.append(toolInput({ fine: true }));
  assert.equal(ok.seq, 1, 'the next accepted event gets seq 1: no hole');
});

test('bytes become {"$base64": …}, undefined fields are dropped, -0 becomes 0, shared (acyclic) references are fine', () => {
  const shared = { k: 'v' };
  const { value } = projectStrictJson({ buf: Buffer.from('hi'), u8: new Uint8Array([1, 2, 255]), gone: undefined, z: -0, s1: shared, s2: [shared] });
  assert.deepEqual(value, { buf: { $base64: 'aGk=' }, u8: { $base64: 'AQL/' }, z: 0, s1: { k: 'v' }, s2: [{ k: 'v' }] });
  assert.ok(Object.is((value as { z: number }).z, 0));
});

test('the projection is a deep copy: mutating the input after append does not change the stored event', async () => {
  const log = new MemoryEventLog({ sessionId: SID });
  const input = { nested: { list: [1, 2] } };
  log.append(toolInput(input));
  input.nested.list.push(3);
  const page = await log.readAfter(0);
  assert.deepEqual((page.events[0] as { input: unknown }).input, { nested: { list: [1, 2] } });
});

test('the computed size equals the length of the compact JSON text of what the log keeps', () => {
  const samples: unknown[] = [
    { a: 'plain', b: 12.5, c: [true, false, null], d: {} , e: [] },
    { quote: 'he said "hi"\n\ttab \\ back', unicode: 'héllo 🎭 日本', ctl: '\u0001' },
    { n: [0, -1, 1e21, 1.5e-7, 123456789012345] },
  ];
  for (const s of samples) assert.equal(projectStrictJson(s).bytes, Buffer.byteLength(JSON.stringify(s)), JSON.stringify(s));
  // A lone surrogate is kept as U+FFFD (UTF-8 cannot hold it), and sized as such.
  const lone = projectStrictJson({ lone: '\ud800x' });
  assert.deepEqual(lone.value, { lone: '\ufffdx' });
  assert.equal(lone.bytes, Buffer.byteLength(JSON.stringify({ lone: '\ufffdx' })));
});

test('event_too_large at the default 1 MiB limit, with no seq consumed', () => {
  const log = new MemoryEventLog({ sessionId: SID });
  const big = 'x'.repeat(DEFAULT_MAX_EVENT_BYTES);
  assert.throws(() => log.append({ type: 'agent_message_chunk', sessionId: SID, turnId: 't', messageId: 'm', text: big }), (e: unknown) => isTroupeError(e, 'event_too_large'));
  assert.equal(log.lastSeq(), 0);
  const justUnder = 'x'.repeat(DEFAULT_MAX_EVENT_BYTES - 1024);
  assert.equal(log.append({ type: 'agent_message_chunk', sessionId: SID, turnId: 't', messageId: 'm', text: justUnder }).seq, 1);
});

test('the limit is configurable from 1 KiB to 8 MiB and enforced at the configured value', () => {
  assert.equal(resolveMaxEventBytes(undefined), 1024 * 1024);
  assert.equal(resolveMaxEventBytes(1024), 1024);
  assert.equal(resolveMaxEventBytes(8 * 1024 * 1024), 8 * 1024 * 1024);
  for (const bad of [1023, 8 * 1024 * 1024 + 1, 0, -1, 1.5, NaN]) {
    assert.throws(() => resolveMaxEventBytes(bad), (e: unknown) => isTroupeError(e, 'invalid_params'), String(bad));
    assert.throws(() => new MemoryEventLog({ sessionId: SID, maxEventBytes: bad }), (e: unknown) => isTroupeError(e, 'invalid_params'));
  }
  const small = new MemoryEventLog({ sessionId: SID, maxEventBytes: 1024 });
  assert.throws(() => small.append(chunkOf(1100)), (e: unknown) => isTroupeError(e, 'event_too_large'));
  assert.equal(small.append(chunkOf(800)).seq, 1);
  const large = new MemoryEventLog({ sessionId: SID, maxEventBytes: 8 * 1024 * 1024 });
  assert.equal(large.append(chunkOf(4 * 1024 * 1024)).seq, 1);
  assert.throws(() => large.append(chunkOf(8 * 1024 * 1024)), (e: unknown) => isTroupeError(e, 'event_too_large'));
});

function chunkOf(n: number): AgentEventInput {
  return { type: 'agent_message_chunk', sessionId: SID, turnId: 't', messageId: 'm', text: 'y'.repeat(n) };
}

test('an event for another session or without a type is refused', () => {
  const log = new MemoryEventLog({ sessionId: SID });
  assert.throws(() => log.append({ ...chunkOf(1), sessionId: 'ses_other' }), (e: unknown) => isTroupeError(e, 'invalid_event_payload'));
  assert.throws(() => log.append({ sessionId: SID } as unknown as AgentEventInput), (e: unknown) => isTroupeError(e, 'invalid_event_payload'));
  assert.equal(log.lastSeq(), 0);
});

test('a string whose JSON is over the longest string V8 makes is event_too_large, not a RangeError', () => {
  // 90 million control characters: 540 million bytes as JSON, which JSON.stringify cannot make.
  const text = '\x01'.repeat(90_000_000);
  const log = new MemoryEventLog({ sessionId: SID });
  assert.throws(() => log.append({ type: 'agent_message_chunk', sessionId: SID, turnId: 't', messageId: 'm', text }), (e: unknown) => isTroupeError(e, 'event_too_large'));
  assert.throws(() => log.append(toolInput({ content: text })), (e: unknown) => isTroupeError(e, 'event_too_large'));
  assert.equal(log.lastSeq(), 0);
});
