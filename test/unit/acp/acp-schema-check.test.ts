// The check every ACP wire test relies on (test/support/acp-schema.ts) must itself catch what breaks the
// protocol: if it passed everything, every schemaErrors assertion would pass with it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { acpOutgoingError } from '../../support/acp-schema.js';

const update = (u: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ jsonrpc: '2.0', method: 'session/update', params: { sessionId: 's', update: u }, ...extra });
const text = { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'hi' } };
const link = (size: number) => update({ sessionUpdate: 'agent_message_chunk', content: { type: 'resource_link', uri: 'file:///a', name: 'a', size } });

test('what conforms passes: results, updates, requests, errors (id null too), extension methods', () => {
  assert.equal(acpOutgoingError({ jsonrpc: '2.0', id: 1, result: { sessionId: 's', _meta: { troupe: { n: 2 ** 60 } } } }, 'session/new'), undefined);
  assert.equal(acpOutgoingError(update(text)), undefined);
  assert.equal(acpOutgoingError(link(-1)), undefined); // (size is an int64)
  assert.equal(acpOutgoingError({ jsonrpc: '2.0', id: 'r1', method: 'fs/read_text_file', params: { sessionId: 's', path: '/a', line: 3 } }), undefined);
  assert.equal(acpOutgoingError({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } }), undefined);
  assert.equal(acpOutgoingError({ jsonrpc: '2.0', method: '_troupe/anything', params: { free: true } }), undefined);
  assert.equal(acpOutgoingError({ jsonrpc: '2.0', id: 7, result: { anything: 1 } }, '_troupe/session_state'), undefined);
});

test('a field the schema does not know is caught, at the root of a result, an update, an error', () => {
  assert.match(acpOutgoingError({ jsonrpc: '2.0', id: 1, result: { sessionId: 's', extra: 1 } }, 'session/new')!, /result\.extra: not in the schema/);
  assert.match(acpOutgoingError(update({ ...text, extra: 1 }))!, /params\.update\.extra: not in the schema/);
  assert.match(acpOutgoingError({ jsonrpc: '2.0', id: 1, error: { code: -32603, message: 'x', extra: 1 } })!, /error\.extra/);
});

test('an invalid value the lenient parse would replace or skip is caught', () => {
  assert.match(acpOutgoingError(link(1.5))!, /size: 1\.5 is invalid/);
  assert.match(acpOutgoingError(update({ ...text, content: { type: 'text', text: 'x', annotations: { priority: 'high' } } }))!, /priority/);
  assert.match(acpOutgoingError(update({ sessionUpdate: 'tool_call', toolCallId: 't', title: 'x', locations: [{ path: '/a', line: 2 ** 32 }] }))!, /line: 4294967296 is invalid/);
  assert.match(acpOutgoingError({ jsonrpc: '2.0', id: 1, result: { protocolVersion: 70000 } }, 'initialize')!, /protocolVersion/);
  assert.match(acpOutgoingError({ jsonrpc: '2.0', id: 1, error: { code: 2 ** 40, message: 'x' } })!, /int32/);
});

test('int64 and uint64 fields hold safe integers (the zod schemas take any integer there)', () => {
  assert.match(acpOutgoingError(link(2 ** 60))!, /size: \d+ is past 2\^53/);
  assert.match(acpOutgoingError(update({ sessionUpdate: 'usage_update', used: 2 ** 60, size: 10 }))!, /used/);
  assert.match(acpOutgoingError({ jsonrpc: '2.0', id: 2 ** 60, method: 'terminal/release', params: { sessionId: 's', terminalId: 't' } })!, /id: \d+ is not a string or a safe integer/);
});

test('the JSON-RPC envelope: version, members, ids, one of result and error, requests and notifications', () => {
  assert.match(acpOutgoingError({ id: 1, result: { sessionId: 's' } }, 'session/new')!, /jsonrpc/);
  assert.match(acpOutgoingError({ jsonrpc: '2.0', id: 1, result: { sessionId: 's' }, extra: 1 }, 'session/new')!, /extra: not a JSON-RPC member/);
  assert.match(acpOutgoingError({ jsonrpc: '2.0', id: 1, result: {}, error: { code: -32603, message: 'x' } })!, /exactly one of result and error/);
  assert.match(acpOutgoingError({ jsonrpc: '2.0', id: null, result: {} })!, /id: null/);
  assert.match(acpOutgoingError(update(text, { id: 5 }))!, /session\/update is a notification/);
  assert.match(acpOutgoingError({ jsonrpc: '2.0', method: 'fs/read_text_file', params: { sessionId: 's', path: '/a' } })!, /needs an id/);
  assert.match(acpOutgoingError({ jsonrpc: '2.0', method: 'foo/bar', params: {} })!, /ACP does not have/);
});
