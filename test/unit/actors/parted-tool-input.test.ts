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
import { HISTORY_PAGE_BYTES } from '../../../src/core/ports.js';
import { SessionEngine } from '../../../src/actors/session-engine.js';
import { FileEventLog, MemoryEventLog } from '../../../src/store/index.js';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { tempDir } from '../../support/store/store-fixtures.js';
import { makeHarness, text } from '../../support/engine-harness.js';
import { ControlledAsker } from '../../support/controlled-asker.js';

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

test('a tool input logged in parts is let go a part at a time: the conversation keeps none, and the file has each part before the next is made', async () => {
  // Held until the call's event (the conversation) or the next turn of the loop (the log's writer),
  // the parts were a second copy of the input, and the writer's encoding of them all at once a third
  // and a fourth: a 64 MiB input needed a heap of 120-140 MiB where 80 does now.
  const { dir, cleanup } = tempDir();
  try {
    const log = await FileEventLog.create(join(dir, `${sessionId}.log`), { sessionId, maxEventBytes: 64 * 1024 });
    const core = new EngineCore(sessionId, { log } as unknown as EngineDeps);
    const seen: { seq: number; held: number; written: number }[] = [];
    core.observers.add((e) => {
      if (e.type === 'content_part') seen.push({ seq: e.seq, held: core.conversation.heldParts, written: log.stats().writtenSeq });
    });
    const input = { path: 'big.txt', content: 'x'.repeat(2 ** 20) };
    const call = { type: 'tool_call_started' as const, sessionId, turnId, toolCallId: 'call_1', name: 'write_file', kind: 'edit' as const, title: 'w', status: 'pending' as const, input, locations: [] };
    core.emitToolCall(call);
    assert.ok(seen.length > 15, `${seen.length} parts`);
    // Each part is seen as it is appended (the conversation has just taken it): the one before it is gone, and in the file.
    assert.deepEqual(seen.filter((s) => s.held > 1 || s.written < s.seq - 1), [], 'no part held past the next, none left unwritten');
    assert.equal(core.conversation.heldParts, 0);
    const [asked] = core.conversation.messages();
    assert.ok(asked?.role === 'assistant' && asked.toolCalls[0]?.input === input, 'the conversation has the input itself');
    await log.close();
    // What the file holds reads back whole.
    const read = await FileEventLog.open(join(dir, `${sessionId}.log`), { readOnly: true });
    const joiner = new ContentJoiner();
    const events = (await read.readAfter(0)).events.map((e) => joiner.take(e)).filter((e) => e !== undefined);
    assert.deepEqual(events.map((e) => e.type), ['tool_call_started']);
    assert.ok(isDeepStrictEqual((events[0] as EventOf<'tool_call_started'>).input, input), 'the input read back is the one logged');
  } finally {
    cleanup();
  }
});

test('parts a crash left with no message after them are let go at the next event, by the conversation and by a replay', async () => {
  const h = makeHarness([[{ tool_call: { name: 'write_file', input: { path: 'a.txt', content: 'a' } } }]], { mode: 'default' });
  h.engine.prompt(text('go'));
  await h.asker.whenAsked();
  // The process "dies" while logging a large input: two of its parts are in the log, not its call.
  for (const index of [0, 1]) h.log.append({ type: 'content_part', sessionId: h.engine.sessionId, turnId: h.ofType('turn_started')[0]!.turnId, partOf: 'call_big', index, data: '{"path":"big.txt","content":"xx' });
  const reopened = await SessionEngine.open({ ...(h.engine as any).core.deps, asker: new ControlledAsker() }, h.engine.sessionId);
  assert.equal(h.events.at(-1)?.type, 'turn_completed', 'crash repair ended the turn after the parts');
  assert.equal(reopened.conversation.heldParts, 0, 'the conversation let the parts go');

  const joiner = new ContentJoiner();
  for (const e of (await h.log.readAfter(0)).events) joiner.take(e);
  assert.equal(joiner.heldParts, 0, 'a replay let them go');
  await h.engine.dispose();
  await reopened.dispose();
});

test('a session opened from its log reads it in pages of at most HISTORY_PAGE_BYTES: the parts of a large prompt are not all held at once', async () => {
  const h = makeHarness([[{ text: 'seen' }]]);
  // 12 MiB of text: some twelve parts of a MiB each.
  await h.engine.prompt(text('y'.repeat(12 * 2 ** 20))).result;
  assert.ok(h.ofType('content_part').length >= 12);
  const read = h.log.readAfter.bind(h.log);
  const partsPerPage: number[] = [];
  h.log.readAfter = async (cursor, options) => {
    const page = await read(cursor, options);
    partsPerPage.push(page.events.filter((e) => e.type === 'content_part').length);
    return page;
  };
  const reopened = await SessionEngine.open({ ...(h.engine as any).core.deps }, h.engine.sessionId);
  assert.ok(Math.max(...partsPerPage) <= HISTORY_PAGE_BYTES / 2 ** 20, `parts per page: ${partsPerPage.join(' ')}`);
  const [prompt] = reopened.conversation.messages();
  assert.ok(prompt?.role === 'user' && prompt.content[0]?.type === 'text' && prompt.content[0].text.length === 12 * 2 ** 20, 'the prompt joined whole');
  await reopened.dispose();
  await h.engine.dispose();
});
