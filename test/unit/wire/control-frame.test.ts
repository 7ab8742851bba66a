// The control channel's frames (spec/daemon.md §Control channel) decode to exactly what was encoded,
// whatever the message: heartbeats and transitions as plain maps, event bursts as msgpack records,
// including events of several shapes and text outside ASCII, however the pipe splits the bytes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AgentEvent } from '../../../src/core/events.js';
import { ControlFrameDecoder, encodeControlFrame } from '../../../src/wire/control-frame.codec.js';
import type { ControlMessage, ControlWireMessage } from '../../../src/wire/control-messages.js';

const sid = 'ses_0mx2lryz76071877262bf22e0e688';
const chunk = (seq: number, text: string) =>
  ({ type: 'agent_message_chunk', sessionId: sid, turnId: 'turn_1', messageId: 'msg_1', text, seq, ts: 1796002936545 + seq }) as AgentEvent;

const messages: ControlWireMessage[] = [
  { t: 'hello', pid: 42, version: '0.1.0' },
  { t: 'hb', at: 1796002936505, rss: 64696320, heapUsed: 12919968, events: 3 },
  { t: 'transition', sessionId: sid, machine: 'turn', state: 'tools.awaitingPermission', event: 'done: modelStep', at: 1 },
  { t: 'events', sessionId: sid, events: [chunk(1, 'lone')] },
  {
    t: 'events',
    sessionId: sid,
    events: [
      { type: 'turn_started', sessionId: sid, turnId: 'turn_1', maxSteps: 25, seq: 2, ts: 5 } as AgentEvent,
      ...Array.from({ length: 500 }, (_, i) => chunk(3 + i, i % 7 ? `w${i} ` : `ünïcødé "${i}" \n ✓`)),
      { type: 'usage', sessionId: sid, turnId: 'turn_1', used: 10, size: 200000, inputTokens: 4, outputTokens: 6, seq: 503, ts: 6 } as AgentEvent,
      { type: 'turn_completed', sessionId: sid, turnId: 'turn_1', stopReason: 'end_turn', steps: 1, seq: 504, ts: 7 } as AgentEvent,
    ],
  },
];

/** A message as decoded: an events message also says how many events, the last seq and the indexed ones. */
const decodedForm = (m: ControlWireMessage): ControlMessage =>
  m.t === 'events' ? { ...m, count: m.events.length, lastSeq: m.events.at(-1)!.seq, indexed: m.events.filter((e) => e.type === 'turn_started' || e.type === 'turn_completed') } : (m as ControlMessage);

test('every control message round-trips through its frame, in one chunk or byte by byte', () => {
  const bytes = Buffer.concat(messages.map(encodeControlFrame));
  const expected = messages.map(decodedForm);
  assert.equal((expected[4] as { indexed: AgentEvent[] }).indexed.length, 2);
  assert.deepEqual(new ControlFrameDecoder().push(bytes), expected);
  const decoder = new ControlFrameDecoder();
  const out: ControlMessage[] = [];
  for (let i = 0; i < bytes.length; i += 7) out.push(...decoder.push(bytes.subarray(i, i + 7)));
  assert.deepEqual(out, expected);
});

test('decoded events keep the key order of the events sent', () => {
  const [decoded] = new ControlFrameDecoder().push(encodeControlFrame(messages[4]!));
  assert.ok(decoded?.t === 'events');
  for (const [i, e] of decoded.events.entries()) assert.deepEqual(Object.keys(e), Object.keys((messages[4] as { events: AgentEvent[] }).events[i]!));
});

test('a malformed frame ends the channel with an error', () => {
  assert.throws(() => new ControlFrameDecoder().push(Buffer.from([0, 0, 0, 0, 1])), /control frame of 0 bytes/);
});

test('a records message (event-log records, as written to the file) arrives as an events message, with what the child said of it', async () => {
  const { encodeEventRecord } = await import('../../../src/store/log-record.codec.js');
  const events = (messages[4] as { events: AgentEvent[] }).events;
  const indexed = [events[0]!, events.at(-1)!];
  // Several records of different sizes back to back, as one written batch holds them.
  const records = Buffer.concat([encodeEventRecord(events.slice(0, 1)), encodeEventRecord(events.slice(1, 300)), encodeEventRecord(events.slice(300))]);
  const [decoded] = new ControlFrameDecoder().push(encodeControlFrame({ t: 'records', sessionId: sid, records, n: events.length, last: 504, ix: indexed }));
  assert.ok(decoded?.t === 'events');
  assert.deepEqual({ ...decoded, events: decoded.events }, { t: 'events', sessionId: sid, count: events.length, lastSeq: 504, indexed, events });
});

test('the records of a records message are decoded when its events are read, not before: a daemon reads them only for an open feed', () => {
  // Not records at all: decoding them fails, so only a lazy decoder gets past `push`.
  const records = Buffer.from([9, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]);
  const [decoded] = new ControlFrameDecoder().push(encodeControlFrame({ t: 'records', sessionId: sid, records, n: 0 }));
  assert.ok(decoded?.t === 'events');
  assert.equal(decoded.count, 0);
  assert.equal(decoded.lastSeq, undefined, 'a part of a split run says no last seq');
  assert.deepEqual(decoded.indexed, []);
  assert.throws(() => decoded.events);
});
