// A session's tool host: its built-in tools plus its MCP tools, which can come and go while it lives.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ToolCallRequest, ToolHost } from '../../../src/core/ports.js';
import { withExtraTools, type ExtraTools } from '../../../src/tools/extra-tools.js';

const host = (names: string[], tag: string): ToolHost & { has(n: string): boolean } => ({
  specs: () => names.map((name) => ({ name, description: tag, inputSchema: { type: 'object' } })),
  has: (n) => names.includes(n),
  describe: (call: ToolCallRequest) => ({ kind: 'other', title: `${tag}:${call.name}`, locations: [], access: 'read' }),
  run: async (call: ToolCallRequest) => ({ output: `${tag} ran ${call.name}`, isError: false }),
});
const call = (name: string) => ({ id: 'c', name, input: {} });
const ctx = { signal: new AbortController().signal, update: () => undefined };

test('the model is offered both sets, and each call goes to the set that has the tool', async () => {
  let extra: ExtraTools | undefined;
  const tools = withExtraTools(host(['read_file'], 'base'), () => extra);
  assert.deepEqual(tools.specs().map((s) => s.name), ['read_file']);
  assert.equal((await tools.run(call('mcp__s__x'), ctx)).output, 'base ran mcp__s__x', 'without extra tools the built-in host answers (and refuses)');
  extra = host(['mcp__s__x'], 'mcp');
  assert.deepEqual(tools.specs().map((s) => s.name), ['read_file', 'mcp__s__x']);
  assert.equal(tools.describe(call('mcp__s__x')).title, 'mcp:mcp__s__x');
  assert.equal((await tools.run(call('mcp__s__x'), ctx)).output, 'mcp ran mcp__s__x');
  assert.equal((await tools.run(call('read_file'), ctx)).output, 'base ran read_file');
  // A name neither serves: the model hears of every tool, the extra ones too.
  const unknown = await tools.run(call('mcp__s__y'), ctx);
  assert.deepEqual(unknown, { output: 'There is no tool named "mcp__s__y". Available: read_file, mcp__s__x.', isError: true, errorCode: 'unknown_tool' });
  assert.throws(() => tools.describe(call('mcp__s__y')), /Available: read_file, mcp__s__x\./);
  extra = undefined;
  assert.deepEqual(tools.specs().map((s) => s.name), ['read_file'], 'servers stopped: their tools are no longer offered');
});
