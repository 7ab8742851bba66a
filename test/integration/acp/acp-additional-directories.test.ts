// ACP's additional workspace roots (`additionalDirectories`) on a real `troupe acp`: advertised, used
// by the tools' path guard, replaced as a whole by session/load and session/resume (omitted: none),
// reported by session/list, kept in the log across processes, and refused when malformed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { AcpChild } from '../../support/acp-child.js';

const SERVER = resolve('dist/test/support/mcp-test-server.js');
const dir = (prefix: string) => realpathSync(mkdtempSync(join(tmpdir(), prefix)));

/** Three directories, each with one file named after it, and a script that reads each on request. */
function setUp() {
  const cwd = dir('troupe-ws-');
  const a = dir('troupe-extra-a-');
  const b = dir('troupe-extra-b-');
  for (const [d, name] of [[cwd, 'here.txt'], [a, 'a.txt'], [b, 'b.txt']] as const) writeFileSync(join(d, name), `in ${name}\n`);
  const read = (key: string, path: string) => ({ when: key, items: [{ tool_call: { name: 'read_file', input: { path } } }] });
  const script = {
    replies: [
      read('read here', 'here.txt'),
      read('read a', join(a, 'a.txt')),
      read('read b', join(b, 'b.txt')),
      { when: 'roots?', items: [{ tool_call: { name: 'mcp__test__env', input: {} } }] },
      ...Array.from({ length: 30 }, () => [{ text: 'done' }]),
    ],
  };
  return { cwd, a, b, script };
}

/** Runs the read of `what` and says how its tool call ended: `completed`, or the error code. */
async function reads(c: AcpChild, sessionId: string, what: 'here' | 'a' | 'b'): Promise<string> {
  const before = c.updatesFor(sessionId, 'tool_call_update').length;
  assert.equal((await c.prompt(sessionId, `read ${what}`)).stopReason, 'end_turn');
  const last = c.updatesFor(sessionId, 'tool_call_update').slice(before).at(-1);
  return last.status === 'completed' ? 'completed' : String(last.rawOutput?.errorCode);
}

test('additional directories are advertised, guard the tools, and are replaced whole by session/load and session/resume', async (t) => {
  const { cwd, a, b, script } = setUp();
  const first = AcpChild.start({ script });
  t.after(() => first.close());
  const init = await first.initialize();
  assert.deepEqual(init.agentCapabilities?.sessionCapabilities?.additionalDirectories, {});

  const { sessionId } = await first.agent.request('session/new', { cwd, additionalDirectories: [a], mcpServers: [] });
  assert.equal(await reads(first, sessionId, 'here'), 'completed');
  assert.equal(await reads(first, sessionId, 'a'), 'completed');
  assert.equal(await reads(first, sessionId, 'b'), 'path_outside_workspace');

  const listed = async (c: AcpChild) => (await c.agent.request('session/list', { cwd })).sessions.find((s) => s.sessionId === sessionId);
  assert.deepEqual((await listed(first))?.additionalDirectories, [a]);

  // session/resume with another list: it is the whole list from now on.
  await first.agent.request('session/resume', { sessionId, cwd, additionalDirectories: [b] });
  assert.equal(await reads(first, sessionId, 'a'), 'path_outside_workspace');
  assert.equal(await reads(first, sessionId, 'b'), 'completed');
  assert.deepEqual((await listed(first))?.additionalDirectories, [b]);

  // Another process loads it: the list it last had is reported, but a load that names none has none.
  assert.equal(await first.close(), 0);
  const second = AcpChild.start({ script, home: first.home });
  t.after(() => second.close());
  await second.initialize();
  assert.deepEqual((await listed(second))?.additionalDirectories, [b]);
  await second.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  assert.equal(await reads(second, sessionId, 'b'), 'path_outside_workspace');
  assert.equal(await reads(second, sessionId, 'here'), 'completed');
  // Reported as none, `[]`: a field left out means "not reported" in ACP's session/list.
  assert.deepEqual((await listed(second))?.additionalDirectories, []);

  // A load that names both (a repeat and the cwd itself left out) makes both usable again.
  await second.agent.request('session/load', { sessionId, cwd, additionalDirectories: [a, b, a, cwd], mcpServers: [] });
  assert.equal(await reads(second, sessionId, 'a'), 'completed');
  assert.equal(await reads(second, sessionId, 'b'), 'completed');
  assert.deepEqual((await listed(second))?.additionalDirectories, [a, b]);
  // However they are spelled (a trailing slash, a `..`, a `.`), as a session's cwd is compared:
  // repeats and the cwd itself are left out, and the list keeps each resolved.
  const spelled = [`${a}/`, `${b}/../${basename(b)}`, a, `${cwd}/`, `${cwd}/.`];
  await second.agent.request('session/load', { sessionId, cwd, additionalDirectories: spelled, mcpServers: [] });
  assert.deepEqual((await listed(second))?.additionalDirectories, [a, b]);
  assert.equal(await reads(second, sessionId, 'b'), 'completed');

  // A fork has the directories it is made with, none of its source's.
  const fork = (dirs?: string[]) => second.agent.request('session/fork' as never, { sessionId, cwd, mcpServers: [], ...(dirs ? { additionalDirectories: dirs } : {}) } as never) as Promise<{ sessionId: string }>;
  const bare = (await fork()).sessionId;
  const listedBare = (await second.agent.request('session/list', { cwd })).sessions.find((s) => s.sessionId === bare);
  assert.deepEqual(listedBare?.additionalDirectories, [], 'a session made with none is listed with none, not without the field');
  assert.equal(await reads(second, bare, 'a'), 'path_outside_workspace');
  assert.equal(await reads(second, bare, 'b'), 'path_outside_workspace');
  const withB = (await fork([b])).sessionId;
  assert.equal(await reads(second, withB, 'a'), 'path_outside_workspace');
  assert.equal(await reads(second, withB, 'b'), 'completed');
  assert.deepEqual([...first.schemaErrors, ...second.schemaErrors], []);
});

test('malformed additional directories are refused with invalid_params, naming the entry, and change nothing', async (t) => {
  const { cwd, a, script } = setUp();
  const c = AcpChild.start({ script });
  t.after(() => c.close());
  await c.initialize();
  const { sessionId } = await c.agent.request('session/new', { cwd, additionalDirectories: [a], mcpServers: [] });
  const missing = join(a, 'no-such-dir');
  const file = join(a, 'a.txt');
  for (const [bad, says] of [
    ['relative/dir', 'absolute'],
    ['', 'not an absolute path'],
    [missing, 'does not exist'],
    [file, 'not a directory'],
  ] as const) {
    for (const method of ['session/new', 'session/load', 'session/resume'] as const) {
      await assert.rejects(
        c.agent.request(method as 'session/load', { sessionId, cwd, additionalDirectories: [bad], mcpServers: [] }),
        (e: any) => e.code === -32602 && String(e.message + JSON.stringify(e.data ?? '')).includes(says),
        `${method} with ${JSON.stringify(bad)}`,
      );
    }
  }
  // The session kept its directory through every refused request.
  assert.equal(await reads(c, sessionId, 'a'), 'completed');
  assert.deepEqual(c.schemaErrors, []);
});

test('a changed list reaches the session MCP servers: told that their roots changed, and given the new ones', async (t) => {
  const { cwd, a, b, script } = setUp();
  const c = AcpChild.start({ script });
  t.after(() => c.close());
  await c.initialize();
  const servers = [{ name: 'test', command: process.execPath, args: [SERVER], env: [] as { name: string; value: string }[] }];
  const { sessionId } = (await c.agent.request('session/new', { cwd, additionalDirectories: [a], mcpServers: servers })) as { sessionId: string };
  const env = async () => {
    assert.equal((await c.prompt(sessionId, 'roots?')).stopReason, 'end_turn');
    return JSON.parse(c.updatesFor(sessionId, 'tool_call_update').at(-1).rawOutput.output) as { roots: { uri: string }[]; rootsChanged: number; pid: number };
  };
  const before = await env();
  assert.deepEqual(before.roots.map((r) => r.uri), [pathToFileURL(cwd).href, pathToFileURL(a).href]);
  assert.equal(before.rootsChanged, 0);
  // Resumed without mcpServers: the same server goes on, with the new roots.
  await c.agent.request('session/resume', { sessionId, cwd, additionalDirectories: [b] });
  const after = await env();
  assert.equal(after.pid, before.pid);
  assert.deepEqual(after.roots.map((r) => r.uri), [pathToFileURL(cwd).href, pathToFileURL(b).href]);
  assert.equal(after.rootsChanged, 1);
  // The same list again is no change.
  await c.agent.request('session/resume', { sessionId, cwd, additionalDirectories: [b] });
  assert.equal((await env()).rootsChanged, 1);
});

test("a directory given with `..` after a symlink is the one the kernel reaches: its files are the tools', not the text's parent's", async (t) => {
  // `${hold}/link/..`, `link -> ${a}/sub`: the kernel's directory is `a`; as text it was `hold`
  // (until 2026-12-07), whose private.txt was let in and `a`'s own files kept out.
  const { cwd, a, script } = setUp();
  const hold = dir('troupe-hold-');
  mkdirSync(join(a, 'sub'));
  symlinkSync(join(a, 'sub'), join(hold, 'link'));
  writeFileSync(join(hold, 'private.txt'), 'never granted\n');
  script.replies.unshift({ when: 'read private', items: [{ tool_call: { name: 'read_file', input: { path: join(hold, 'private.txt') } } }] });
  const c = AcpChild.start({ script });
  t.after(() => c.close());
  await c.initialize();
  const { sessionId } = await c.agent.request('session/new', { cwd, additionalDirectories: [`${hold}/link/..`], mcpServers: [] });
  assert.equal(await reads(c, sessionId, 'a'), 'completed');
  const before = c.updatesFor(sessionId, 'tool_call_update').length;
  assert.equal((await c.prompt(sessionId, 'read private')).stopReason, 'end_turn');
  assert.equal(c.updatesFor(sessionId, 'tool_call_update').slice(before).at(-1).rawOutput?.errorCode, 'path_outside_workspace');
  const listed = (await c.agent.request('session/list', { cwd })).sessions.find((s) => s.sessionId === sessionId);
  assert.deepEqual(listed?.additionalDirectories, [a]);
});

test("a cwd given with `..` after a symlink is kept as the directory the kernel reaches: listed, filtered and loaded by either name", async (t) => {
  // `${hold}/link/..`, `link -> ${a}/sub`: the session works in `a` (its stat and its tools did);
  // until 2026-12-07 it was kept as given and listed as `hold`, the text's parent.
  const { a, script } = setUp();
  const hold = dir('troupe-hold-');
  mkdirSync(join(a, 'sub'));
  symlinkSync(join(a, 'sub'), join(hold, 'link'));
  const given = `${hold}/link/..`;
  const c = AcpChild.start({ script });
  t.after(() => c.close());
  await c.initialize();
  const { sessionId } = await c.agent.request('session/new', { cwd: given, mcpServers: [] });
  assert.equal(await reads(c, sessionId, 'a'), 'completed');
  for (const filter of [a, given]) {
    const listed = (await c.agent.request('session/list', { cwd: filter })).sessions.map((s) => [s.sessionId, s.cwd]);
    assert.deepEqual(listed, [[sessionId, a]], `listed by ${filter}`);
  }
  assert.equal((await c.agent.request('session/list', { cwd: hold })).sessions.length, 0);
  for (const cwd of [given, a]) await c.agent.request('session/resume', { sessionId, cwd });
  await assert.rejects(c.agent.request('session/resume', { sessionId, cwd: hold }), /works in/);
});
