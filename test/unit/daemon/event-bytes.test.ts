// The size the daemon's event feeds count an event at, for their memory bounds (retention, a
// watcher's live queue): every string in it counts, wherever it is.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AgentEvent } from '../../../src/core/events.js';
import { eventBytes } from '../../../src/daemon/session-feeds.js';

const MB = 'x'.repeat(1_000_000);
const base = { sessionId: 'ses_1', seq: 1, ts: 1, turnId: 'turn_1' };

test('a large diff, tool input, prompt image or content part counts at its size', () => {
  const events = [
    { ...base, type: 'tool_call_updated', toolCallId: 'c1', content: [{ type: 'diff', path: 'a.txt', oldText: MB, newText: MB }] },
    { ...base, type: 'tool_call_started', toolCallId: 'c1', name: 'write_file', kind: 'edit', title: 'Write a.txt', status: 'pending', input: { path: 'a.txt', content: MB }, locations: [] },
    { ...base, type: 'user_message', messageId: 'm1', content: [{ type: 'image', data: MB, mimeType: 'image/png' }] },
    { ...base, type: 'content_part', partOf: 'm1', index: 0, data: MB },
  ] as AgentEvent[];
  // Until 2026-12-06 only `text` and `output` counted: each of these was 256 bytes.
  for (const e of events) assert.ok(eventBytes(e) >= 1_000_000, `${e.type}: ${eventBytes(e)}`);
  assert.ok(eventBytes(events[0]!) >= 2_000_000, 'both sides of the diff');
});
