// A pasted screenshot is larger than one log event (1 MiB): troupe acp logs its prompt in parts
// (spec/event-log.md §5.1). Through the real Anthropic SDK against the replay server: the model
// gets the image whole, a session/load in a new process replays it whole, and the next turn sends
// it to the model again from the log.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AcpChild } from '../../support/acp-child.js';
import { fixture, startReplayServer } from '../../support/replay-server.js';
import { providerHome } from '../../support/provider-home.js';

const images = (body: any): any[] => (body.messages ?? []).flatMap((m: any) => (Array.isArray(m.content) ? m.content.filter((b: any) => b.type === 'image') : []));

test('a 2 MiB screenshot: sent to the model whole, replayed whole by a new process, and sent again from the log', async (t) => {
  const server = await startReplayServer();
  t.after(() => server.close());
  const { home, configHome } = providerHome({ anthropic: { maxRetries: 0 } });
  const env = { XDG_CONFIG_HOME: configHome, TROUPE_MODEL: 'anthropic/claude-sonnet-5-5', ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'sk-ant-e2e-test' };
  const cwd = mkdtempSync(join(tmpdir(), 'troupe-e2e-ws-'));
  const data = randomBytes(1_600_000).toString('base64');
  const answer = { sse: fixture('e2e-anthropic-answer.sse') };

  const first = AcpChild.start({ home, env });
  t.after(() => first.close());
  const init = await first.initialize();
  assert.equal(init.agentCapabilities?.promptCapabilities?.image, true);
  const sessionId = await first.newSession(cwd);
  // The session's first prompt is counted (count_tokens), then answered.
  server.enqueue({ json: { input_tokens: 2_100 } }, answer);
  const prompt = [
    { type: 'text', text: 'What is wrong in this screenshot?' },
    { type: 'image', mimeType: 'image/png', data },
  ];
  const res: any = await first.agent.request('session/prompt', { sessionId, prompt });
  assert.equal(res.stopReason, 'end_turn', first.stderr.slice(-2000));
  const [count, call] = server.requests;
  for (const r of [count!, call!]) assert.deepEqual(images(r.body).map((b) => [b.source?.media_type, b.source?.data === data]), [['image/png', true]], 'the image went whole');
  assert.equal(await first.close(), 0);

  // A new process replays the history from the log: the prompt with its image, whole.
  const second = AcpChild.start({ home, env });
  t.after(() => second.close());
  await second.initialize();
  await second.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  const user = second.updatesFor(sessionId).filter((u) => u.sessionUpdate === 'user_message_chunk');
  assert.deepEqual(
    user.map((u) => (u.content.type === 'image' ? [u.content.type, u.content.mimeType, u.content.data === data] : [u.content.type, u.content.text])),
    [
      ['text', 'What is wrong in this screenshot?'],
      ['image', 'image/png', true],
    ],
  );

  // The next turn sends the conversation folded from the log: the image again, whole. (The model's
  // last usage is in the log, so this prompt is not counted first.)
  server.enqueue(answer);
  assert.equal((await second.prompt(sessionId, 'and now?')).stopReason, 'end_turn', second.stderr.slice(-2000));
  const again = server.requests.at(-1)!;
  assert.match(again.url, /^\/v1\/messages(\?|$)/);
  assert.deepEqual(images(again.body).map((b) => b.source?.data === data), [true]);
  assert.deepEqual([...first.schemaErrors, ...second.schemaErrors], []);
});
