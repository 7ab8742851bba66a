// A project's AGENTS.md files reach the model: `troupe acp` on the real Anthropic SDK against a
// local recorded-stream server, whose recorded requests show the system prompt each turn carried.
// A client that gives the session other additional directories changes which files are given.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AcpChild } from '../../support/acp-child.js';
import { fixture, startReplayServer } from '../../support/replay-server.js';

const MODEL_CALL = /^\/v1\/messages(\?|$)/;
const ANSWER = { sse: fixture('e2e-anthropic-answer.sse') };
const dir = (prefix: string) => realpathSync(mkdtempSync(join(tmpdir(), prefix)));

test('the AGENTS.md files of the repository and of the additional directories are in the system prompt', { timeout: 30_000 }, async (t) => {
  const repo = dir('troupe-agents-e2e-');
  mkdirSync(join(repo, '.git'));
  const cwd = join(repo, 'app');
  mkdirSync(cwd);
  writeFileSync(join(repo, 'AGENTS.md'), 'Repository rule: tabs, not spaces.\n');
  writeFileSync(join(cwd, 'AGENTS.md'), 'App rule: run npm test before you finish.\n');
  const extra = dir('troupe-agents-e2e-extra-');
  writeFileSync(join(extra, 'AGENTS.md'), 'Library rule: never change the public API.\n');

  const server = await startReplayServer();
  t.after(() => server.close());
  // The session's first prompt is counted (preflight) before its model call; the second goes by the
  // usage of the first call. (A count's JSON given to a model call is refused as not a stream.)
  const count = { json: { input_tokens: 1_250 } };
  server.enqueue(count, ANSWER, ANSWER);
  const home = mkdtempSync(join(tmpdir(), 'troupe-agents-e2e-home-'));
  const child = AcpChild.start({ home, env: { TROUPE_MODEL: 'anthropic/claude-sonnet-5-5', ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'sk-ant-e2e-test' } });
  t.after(() => child.close());
  await child.initialize();
  const { sessionId } = await child.agent.request('session/new', { cwd, additionalDirectories: [extra], mcpServers: [] });

  const systemOfNextTurn = async (text: string) => {
    const before = server.requests.filter((r) => MODEL_CALL.test(r.url)).length;
    assert.equal((await child.prompt(sessionId, text)).stopReason, 'end_turn');
    const call = server.requests.filter((r) => MODEL_CALL.test(r.url))[before]!;
    return (call.body.system as { text: string }[]).map((b) => b.text).join('\n');
  };
  const first = await systemOfNextTurn('hello');
  const at = (s: string) => first.indexOf(s);
  assert.ok(at('Repository rule') > 0, first);
  assert.ok(at('Repository rule') < at('App rule') && at('App rule') < at('Library rule'), 'the repository root first, the cwd next, then the other roots');

  // The session resumed without its other directory: that directory's instructions go with it.
  await child.agent.request('session/resume', { sessionId, cwd });
  const second = await systemOfNextTurn('again');
  assert.ok(second.includes('App rule') && second.includes('Repository rule'), second);
  assert.ok(!second.includes('Library rule'), second);
  assert.deepEqual(child.schemaErrors, []);
});
