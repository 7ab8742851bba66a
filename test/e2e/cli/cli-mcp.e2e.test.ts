// `troupe run --mcp-config FILE`: the MCP servers of a {"mcpServers": {...}} file reach the session
// through the daemon (their tools, and in a chat their prompts as commands), and a file that cannot
// be used is a usage error before anything starts.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { jsonLines, makeHome, until, type Home, SUITE_TIMEOUT_MS } from '../../support/cli/cli-harness.js';

const SERVER = resolve('dist/test/support/mcp-test-server.js');

describe('troupe run --mcp-config', { timeout: SUITE_TIMEOUT_MS }, () => {
  let h: Home;
  before(() => {
    h = makeHome({ replies: [[{ tool_call: { name: 'mcp__test__echo', input: { text: 'from the cli' } } }], [{ text: 'done' }], { when: 'Please greet Ada.', items: [{ text: 'hello Ada' }] }] });
  });
  after(() => h.close());

  test("the file's servers serve the session's tool calls", async () => {
    const config = join(h.dir, 'mcp.json');
    writeFileSync(config, JSON.stringify({ mcpServers: { test: { command: process.execPath, args: [SERVER], env: { MCP_TEST_VAR: 'cli' } } } }));
    const r = await h.run(['run', '--json', '--mcp-config', config, 'use the tool']);
    assert.equal(r.code, 0, r.stderr);
    const done = jsonLines(r.stdout).filter((l: any) => l.update?.sessionUpdate === 'tool_call_update').at(-1) as any;
    assert.deepEqual([done.update.status, done.update.rawOutput.output], ['completed', 'echo: from the cli']);
  });

  test("in a chat, the servers' prompts are commands: /help lists them, and one runs as the prompt", async () => {
    const config = join(h.dir, 'mcp-chat.json');
    writeFileSync(config, JSON.stringify({ mcpServers: { test: { command: process.execPath, args: [SERVER] } } }));
    // The turn first: the commands are announced right after the session is made, surely in by then.
    const r = await h.run(['chat', '--mcp-config', config], { input: '/mcp__test__greet Ada\n/help\n' });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /hello Ada/);
    assert.match(r.stdout, /The agent's commands \(sent as the prompt\):\n\/compact .*\n\/mcp__test__greet name \[style\] Asks for a greeting/);
  });

  test("/help spells out the control characters of a server's prompt description", async () => {
    const config = join(h.dir, 'mcp-help.json');
    writeFileSync(config, JSON.stringify({ mcpServers: { test: { command: process.execPath, args: [SERVER], env: { MCP_TEST_GREET_DESCRIPTION: 'Greets\x1b]0;owned\x07 you.' } } } }));
    // A turn first, so that the commands announced after the session was made are in.
    const r = await h.run(['chat', '--mcp-config', config], { input: '/mcp__test__greet Ada\n/help\n' });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /\/mcp__test__greet name \[style\] Greets\\x1b\]0;owned\\x07 you\./);
    assert.ok(!r.stdout.includes('\x1b'), `no raw ESC in /help: ${JSON.stringify(r.stdout)}`);
  });

  test('a file that cannot be used is a usage error', async () => {
    const missing = await h.run(['run', '--mcp-config', join(h.dir, 'nope.json'), 'go']);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /cannot read the MCP config .*nope\.json/);
    const bad = join(h.dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ mcpServers: { broken: { args: ['x'] } } }));
    const r = await h.run(['run', '--mcp-config', bad, 'go']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /the MCP server "broken" needs a "command" \(stdio\) or a "url" \(http, or sse with "type": "sse"\)/);
  });

  test('Ctrl-C while run or chat opens the session (its MCP servers starting) exits 130 and leaves no session behind', async () => {
    // A daemon of its own, whose sessions give a server 2 s to start: this one never answers.
    const d = makeHome({ env: { TROUPE_MCP_START_TIMEOUT_MS: '2000' } });
    try {
      for (const args of [['run', 'hello'], ['chat']]) {
        const started = join(d.dir, `started-${args[0]}`);
        const config = join(d.dir, `slow-${args[0]}.json`);
        writeFileSync(config, JSON.stringify({ mcpServers: { slow: { command: process.execPath, args: ['-e', "require('fs').writeFileSync(process.argv[1], ''); setInterval(() => {}, 1e6)", started] } } }));
        const b = d.start([args[0]!, '--mcp-config', config, ...args.slice(1)]);
        // session/new waits for the server, which has started: the command is opening the session.
        await until(() => existsSync(started), 'the MCP server to start');
        b.child.kill('SIGINT');
        const done = await b.done;
        assert.equal(done.code, 130, `${args[0]}: ${done.stderr}`);
        assert.match(done.stderr, new RegExp(`troupe ${args[0]}: interrupted\\n$`));
        // Until 2026-12-07 run left at once and chat died of the signal, and the session they had
        // asked for was made all the same.
        const left = await d.run(['sessions', '--json']);
        assert.equal(left.code, 0, left.stderr);
        assert.deepEqual(JSON.parse(left.stdout), [], args[0]);
      }
    } finally {
      await d.close();
    }
  });
});
