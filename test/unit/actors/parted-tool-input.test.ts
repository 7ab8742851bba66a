// A tool call whose input's JSON is longer than V8's longest string (2^29 - 24 characters) is logged
// in parts and read back whole (spec/event-log.md §5.1). Real size, not a lowered limit: 90 million
// control characters are 90 MB as a string and 540 million characters of JSON (`\u0001` each).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EngineCore, type EngineDeps } from '../../../src/actors/engine-core.js';
import { ContentJoiner } from '../../../src/core/content-parts.js';
import type { AgentEvent } from '../../../src/core/events.js';
import { MemoryEventLog } from '../../../src/store/index.js';

test('a tool input whose JSON is over the longest string V8 makes is logged in parts and read back exactly', async () => {
  const content = '\x01'.repeat(90_000_000);
  const input = { path: 'big.bin', content };
  assert.throws(() => JSON.stringify(input), RangeError, 'the premise: V8 cannot make this JSON');
  const sessionId = 'ses_big';
  // The largest event the log allows (8 MiB): fewer parts, the same bytes.
  const log = new MemoryEventLog({ sessionId, maxEventBytes: 8 * 1024 * 1024 });
  const core = new EngineCore(sessionId, { log } as unknown as EngineDeps);
  const call = { type: 'tool_call_started' as const, sessionId, turnId: 'turn_1', toolCallId: 'call_1', name: 'write_file', kind: 'edit' as const, title: 'w', status: 'pending' as const, input, locations: [] };
  const emitted = core.emitToolCall(call) as AgentEvent & { input: unknown };
  assert.equal(emitted.input, input, 'the live side gets the input itself');

  const events = (await log.readAfter(0, { limit: 100_000 })).events;
  const logged = events.at(-1) as AgentEvent & { parts?: number; input: object };
  assert.equal(logged.type, 'tool_call_started');
  assert.deepEqual(logged.input, {});
  assert.equal(logged.parts, events.length - 1);
  assert.ok(logged.parts! > 60, `${logged.parts} parts`);
  const joiner = new ContentJoiner();
  for (const e of events.slice(0, -1)) assert.equal(joiner.take(e), undefined);
  const read = joiner.take(logged) as AgentEvent & { input: { path: string; content: string } };
  assert.equal(read.input.path, 'big.bin');
  assert.ok(read.input.content === content, 'the input read back is the one logged');
  assert.deepEqual(Object.keys(read.input), ['path', 'content']);
});
