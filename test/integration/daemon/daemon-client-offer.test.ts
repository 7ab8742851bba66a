/**
 * What a session's process is told its clients offer follows the connections attached to it
 * (spec/daemon.md §Relay): a file read goes through an editor's buffers while an editor that reads
 * files is attached, and to the disk when none is.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Daemon, tempDir, waitFor, type AcpClient } from '../../support/daemon.js';

// Unkeyed replies, one per model call: the read, then the turn's last words.
const readScript = { replies: [[{ tool_call: { name: 'read_file', input: { path: 'a.txt' } } }], [{ text: 'read it' }]] };

async function setUp(t: { after(fn: () => unknown): void }): Promise<{ d: Daemon; cwd: string; reads: string[]; editor: AcpClient; cli: AcpClient }> {
  const d = await Daemon.start({ script: readScript });
  t.after(() => d.stop());
  const cwd = tempDir();
  writeFileSync(join(cwd, 'a.txt'), 'on disk\n');
  const reads: string[] = [];
  const editor = d.connect('http', { readTextFile: (req) => (reads.push(req.path), { content: 'in the editor buffer\n' }) });
  const cli = d.connect('ws');
  t.after(() => (editor.close(), cli.close()));
  await editor.init({ fs: { readTextFile: true } });
  await cli.init({});
  return { d, cwd, reads, editor, cli };
}

async function readOutput(client: AcpClient, sessionId: string): Promise<string> {
  const r = await client.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'read a.txt' }] });
  assert.equal(r.stopReason, 'end_turn');
  const result = client.updatesFor(sessionId, 'tool_call_update').find((u) => u.rawOutput);
  return String(result?.rawOutput?.output ?? JSON.stringify(result));
}

test('the editor that made the session and read files through its buffers has gone, its process still running: the read goes to the disk, not to the client left, which reads none', async (t) => {
  const { d, cwd, reads, editor, cli } = await setUp(t);
  const sessionId = (await editor.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
  await cli.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  // Its connection ends (the editor quit): the session's process runs on for the client left.
  editor.close();
  await waitFor('the editor detached', async () => (await d.api('GET', `/v1/sessions/${sessionId}`)).json.connections === 1);
  assert.match(await readOutput(cli, sessionId), /on disk/);
  assert.deepEqual(reads, []);
});

test('an editor that reads files through its buffers loads a session another client made: the read goes to the editor', async (t) => {
  const { cwd, reads, editor, cli } = await setUp(t);
  const sessionId = (await cli.agent.request('session/new', { cwd, mcpServers: [] })).sessionId;
  await editor.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  assert.match(await readOutput(cli, sessionId), /in the editor buffer/);
  assert.deepEqual(reads, [join(cwd, 'a.txt')]);
});
