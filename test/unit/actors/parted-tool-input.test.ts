// A tool call whose input's JSON is longer than V8's longest string (2^29 - 24 characters) is logged
// in parts and read back whole (spec/event-log.md §5.1), its JSON text never made whole. Real sizes,
// not a lowered limit, made cheap by sharing: the input written holds one string of 1 Mi characters
// 520 times (545 million characters of JSON, 1 MiB in memory), and the log read holds one slice of an
// input of 91 million control characters 65 times (546 million characters of JSON, `\u0001` each).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EngineCore, type EngineDeps } from '../../../src/actors/engine-core.js';
import { ContentJoiner } from '../../../src/core/content-parts.js';
import type { AgentEvent, EventOf } from '../../../src/core/events.js';
import { MemoryEventLog } from '../../../src/store/index.js';

const MAX_STRING_LENGTH = 2 ** 29 - 24;
const sessionId = 'ses_big';
const turnId = 'turn_1';

test('a tool input whose JSON is over the longest string V8 makes is logged in parts, each within the event limit, as its JSON text', () => {
  const chunk = 'x'.repeat(2 ** 20);
  const input = { path: 'big.bin', chunks: Array<string>(520).fill(chunk) };
  const length = '{"path":"big.bin","chunks":[]}'.length + 520 * (2 ** 20 + 2) + 519;
  assert.ok(length > MAX_STRING_LENGTH, 'the premise: V8 cannot make this JSON');
  // The largest event the log allows (8 MiB): fewer parts. Events are checked as they are appended
  // and let go (a log that kept them would hold the whole text).
  const log = new MemoryEventLog({ sessionId, maxEventBytes: 8 * 1024 * 1024, retention: { maxEvents: 2 } });
  const parts: { index: number; length: number }[] = [];
  let head = '';
  let tail = '';
  let last: AgentEvent | undefined;
  // A copy, not a slice: V8 keeps the whole string a slice was cut from.
  const copy = (s: string) => Buffer.from(s).toString();
  const append = log.append.bind(log);
  log.append = (e) => {
    const logged = append(e);
    if (logged.type === 'content_part') {
      parts.push({ index: logged.index, length: logged.data.length });
      if (logged.index === 0) head = copy(logged.data.slice(0, 40));
      tail = copy(logged.data.slice(-10));
    } else last = logged;
    return logged;
  };
  const core = new EngineCore(sessionId, { log } as unknown as EngineDeps);
  const call = { type: 'tool_call_started' as const, sessionId, turnId, toolCallId: 'call_1', name: 'write_file', kind: 'edit' as const, title: 'w', status: 'pending' as const, input, locations: [] };
  const emitted = core.emitToolCall(call) as AgentEvent & { input: unknown };
  assert.equal(emitted.input, input, 'the live side gets the input itself');

  const logged = last as AgentEvent & { parts?: number; input: object };
  assert.equal(logged.type, 'tool_call_started');
  assert.deepEqual(logged.input, {});
  assert.equal(logged.parts, parts.length);
  assert.ok(parts.length > 60, `${parts.length} parts`);
  assert.deepEqual(parts.map((p) => p.index), parts.map((_, i) => i));
  assert.equal(parts.reduce((n, p) => n + p.length, 0), length, 'the parts hold the JSON text, no more, no less');
  assert.equal(head, `{"path":"big.bin","chunks":["${'x'.repeat(11)}`);
  assert.equal(tail, 'xxxxxxx"]}');
});

test('parts whose JSON text is over the longest string V8 makes are read back without joining them', () => {
  // As the log holds an input of 91M control characters: its JSON cut into 67 parts, 65 of them alike.
  const slice = '\\u0001'.repeat(1_400_000);
  const data = ['{"path":"big.bin","content":"', ...Array<string>(65).fill(slice), '"}'];
  assert.ok(data.reduce((n, d) => n + d.length, 0) > MAX_STRING_LENGTH, 'the premise: V8 cannot make this text');
  const joiner = new ContentJoiner();
  data.forEach((d, index) => assert.equal(joiner.take({ type: 'content_part', sessionId, turnId, partOf: 'call_1', index, data: d, seq: index + 1, ts: 0 }), undefined));
  const call: EventOf<'tool_call_started'> = { type: 'tool_call_started', sessionId, turnId, toolCallId: 'call_1', name: 'write_file', kind: 'edit', title: 'w', status: 'pending', input: {}, locations: [], parts: data.length, seq: data.length + 1, ts: 0 };
  const read = joiner.take(call) as AgentEvent & { input: { path: string; content: string } };
  assert.deepEqual(Object.keys(read.input), ['path', 'content']);
  assert.equal(read.input.path, 'big.bin');
  assert.equal(read.input.content.length, 65 * 1_400_000);
  assert.ok(/^\x01*$/.test(read.input.content), 'every character read back is the one logged');
});
