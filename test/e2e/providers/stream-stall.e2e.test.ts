// The stream idle watchdog through `troupe acp`: the setting read from the config file, the turn's
// error as the client sees it, and a process that still exits at stdin end with the default limit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AcpChild } from '../../support/acp-child.js';
import { fixture, startReplayServer, type ReplayServer } from '../../support/replay-server.js';

const MODEL_CALL = /^\/v1\/messages(\?|$)/;
const COUNT = { json: { input_tokens: 1_250 } };
const ANSWER = { sse: fixture('e2e-anthropic-answer.sse') };
// message_start, content_block_start (empty text), ping: nothing for the client yet.
const STALL = { sse: fixture('e2e-anthropic-answer.sse'), holdAfterEvents: 3 };

async function start(server: ReplayServer, anthropic: Record<string, unknown>): Promise<{ child: AcpChild; sessionId: string }> {
  const home = mkdtempSync(join(tmpdir(), 'troupe-stall-home-'));
  const configHome = join(home, 'config');
  mkdirSync(join(configHome, 'troupe'), { recursive: true });
  writeFileSync(join(configHome, 'troupe', 'config.json'), JSON.stringify({ providers: { anthropic } }));
  const child = AcpChild.start({
    home,
    env: { XDG_CONFIG_HOME: configHome, TROUPE_MODEL: 'anthropic/claude-sonnet-5-5', ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'sk-ant-e2e-test' },
  });
  await child.initialize();
  return { child, sessionId: await child.newSession(mkdtempSync(join(tmpdir(), 'troupe-stall-ws-'))) };
}

test('a stalled model stream ends the turn provider_network after the retries, naming the setting', { timeout: 30_000 }, async (t) => {
  const server = await startReplayServer();
  t.after(() => server.close());
  // 1 s, not less: the wait for the response counts too, and a loaded machine can be slow to answer.
  const { child, sessionId } = await start(server, { maxRetries: 1, streamIdleTimeoutMs: 1_000 });
  t.after(() => child.close());
  server.enqueue(COUNT, STALL, STALL);

  await assert.rejects(child.prompt(sessionId, 'hello there'), (e: any) => {
    assert.equal(e.data?.code, 'provider_network', JSON.stringify(e));
    assert.equal(e.code, -32045);
    assert.match(String(e.message), /stream stalled/);
    assert.ok(String(e.message).includes('providers.anthropic.streamIdleTimeoutMs'), e.message);
    return true;
  });
  // A retry that gave up while its request was still reaching the server is counted once the server has read it.
  while (server.requests.filter((r) => MODEL_CALL.test(r.url)).length < 2) await new Promise((r) => setTimeout(r, 10));
  assert.equal(server.requests.filter((r) => MODEL_CALL.test(r.url)).length, 2, 'the model call and one retry');
  assert.deepEqual(child.schemaErrors, []);
});

test('with the default limit, troupe acp exits on its own at stdin end after a turn and a cancelled stall', { timeout: 30_000 }, async (t) => {
  const server = await startReplayServer();
  t.after(() => server.close());
  const { child, sessionId } = await start(server, { maxRetries: 0 });
  t.after(() => child.close());
  server.enqueue(COUNT, ANSWER, STALL);

  assert.equal((await child.prompt(sessionId, 'hello there')).stopReason, 'end_turn');
  const stalled = child.prompt(sessionId, 'and again');
  while (server.requests.filter((r) => MODEL_CALL.test(r.url)).length < 2) await new Promise((r) => setTimeout(r, 10));
  await child.agent.notify('session/cancel', { sessionId });
  assert.equal((await stalled).stopReason, 'cancelled', 'a cancel during a stall is a cancel');

  // close() ends stdin and kills the process only if it is still alive 10 s later (exit code null):
  // a watchdog timer left running (five minutes by default) would keep it alive that long.
  assert.equal(await child.close(), 0);
});
