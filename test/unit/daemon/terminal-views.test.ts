/**
 * TerminalViews on the lines a `troupe acp` child writes (projectEventLines) and the requests it
 * sends: a client terminal's owner entry ends as its command ends, also when no final update shows
 * the terminal. Seen through `ownerFor`: while the entry lives, the process's request on that
 * terminal is routed to its owner; once it is gone, to no one in particular (undefined). The
 * connections are recording stand-ins for RelayConnection (only their identity matters here).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AgentEvent } from '../../../src/core/events.js';
import { projectEventLines } from '../../../src/acp/update.projection.js';
import { TerminalViews } from '../../../src/daemon/relay/terminal-views.js';
import { classifyUpdateLine, type UpdateLine } from '../../../src/wire/update-line.js';
import { recordingConnection } from '../../support/recording-connection.js';

let seq = 0;
/** The child's update line for a `tool_call_updated` of call `call`. */
function updateLine(call: string, fields: Record<string, unknown>): UpdateLine {
  const event = { type: 'tool_call_updated', sessionId: 'ses_1', turnId: 'turn_1', seq: ++seq, ts: '2026-12-07T00:00:00.000Z', toolCallId: call, ...fields } as unknown as AgentEvent;
  const line = classifyUpdateLine(projectEventLines(event, { notices: true, compaction: true }).trimEnd());
  assert.ok(line, 'the child writes it as an update line the relay reads unparsed');
  return line;
}

const terminal = (terminalId: string) => ({ type: 'terminal', terminalId });
/** The process's requests on a terminal, as relayed to the client. */
const request = (method: string, terminalId: string) => ({ jsonrpc: '2.0', id: 9, method, params: { sessionId: 'ses_1', terminalId } });
const outputOf = (terminalId: string) => request('terminal/output', terminalId);

test('a call whose final update no longer shows its terminal (text only, as a result too large for the log would be) ends the entry', () => {
  const views = new TerminalViews();
  const owner = recordingConnection('owner').conn;
  views.created('term_1', owner);
  assert.ok(views.line(updateLine('call_1', { content: [terminal('term_1')] })), 'the embedding update is viewed per connection');
  assert.equal(views.ownerFor(outputOf('term_1')), owner);
  views.asked(request('terminal/release', 'term_1'));
  assert.equal(views.ownerFor(outputOf('term_1')), owner, 'kept past the release: the final update that follows may still show it');
  views.line(updateLine('call_1', { status: 'completed', content: [{ type: 'text', text: '[This result is too large for the session log to show; the model read its output.]' }], output: 'x' }));
  assert.equal(views.ownerFor(outputOf('term_1')), undefined);
});

test('a call failed by the next process after a crash, which does not know the terminal, ends the entry', () => {
  const views = new TerminalViews();
  const owner = recordingConnection('owner').conn;
  views.created('term_1', owner);
  views.line(updateLine('call_1', { content: [terminal('term_1')] }));
  // An unrelated call's final update leaves it alone.
  views.line(updateLine('call_0', { status: 'failed', content: [{ type: 'text', text: 'no' }], output: 'no' }));
  assert.equal(views.ownerFor(outputOf('term_1')), owner);
  views.line(updateLine('call_1', { status: 'failed', content: [{ type: 'text', text: 'interrupted' }], output: 'interrupted', errorCode: 'interrupted', interrupted: true }));
  assert.equal(views.ownerFor(outputOf('term_1')), undefined);
});

test('a terminal no update showed (a cancel came while terminal/create was in flight) ends as the process releases it', () => {
  const views = new TerminalViews();
  const owner = recordingConnection('owner').conn;
  views.created('term_1', owner);
  views.asked(outputOf('term_1'));
  assert.equal(views.ownerFor(request('terminal/release', 'term_1')), owner, 'the release itself goes to the owner');
  views.asked(request('terminal/release', 'term_1'));
  assert.equal(views.ownerFor(outputOf('term_1')), undefined);
});

test('after the release, the final update showing the terminal is still sent as it is to its owner only, and then the entry ends', () => {
  const views = new TerminalViews();
  const owner = recordingConnection('owner').conn;
  const other = recordingConnection('other').conn;
  views.created('term_1', owner);
  views.line(updateLine('call_1', { content: [terminal('term_1')] }));
  views.asked(request('terminal/release', 'term_1'));
  const final = updateLine('call_1', { status: 'completed', content: [terminal('term_1')], output: 'hi\n' });
  const view = views.line(final)!;
  assert.equal(view(owner), final.json);
  assert.doesNotMatch(view(other), /"terminal"/);
  assert.equal(views.ownerFor(outputOf('term_1')), undefined);
});

test("the process gone: the terminals its clients still hold are given with their owners, one that left the session's not, and every entry ends", () => {
  const views = new TerminalViews();
  const owner = recordingConnection('owner').conn;
  const left = recordingConnection('left').conn;
  views.created('term_1', owner);
  views.line(updateLine('call_1', { content: [terminal('term_1')] }));
  views.created('term_2', owner);
  views.created('term_3', left);
  views.forget(left);
  assert.deepEqual(views.processGone(), [['term_1', owner], ['term_2', owner]]);
  for (const id of ['term_1', 'term_2', 'term_3']) assert.equal(views.ownerFor(outputOf(id)), undefined, id);
  assert.deepEqual(views.processGone(), [], 'given once');
});
