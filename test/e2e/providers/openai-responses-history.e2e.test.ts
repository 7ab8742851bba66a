// What troupe acp sends the Responses API must pass its checks on the history (and on images), or
// the session is stuck: the offending items stay in the log and every later request carries them
// again. Through the real openai SDK against the replay server; `refusal` below states the API's
// 400 "Item 'rs_…' of type 'reasoning' was provided without its required following item", which the
// replay server does not enforce itself.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AcpChild } from '../../support/acp-child.js';
import { fixture, startReplayServer } from '../../support/replay-server.js';
import { TWO_PHOTOS_PROMPT } from './provider-e2e.js';
import { providerHome } from '../../support/provider-home.js';

/** A replay server and a `troupe acp` on openai/gpt-5 against it (no retries), with a new session. */
async function start(t: TestContext) {
  const server = await startReplayServer();
  t.after(() => server.close());
  const { home, configHome } = providerHome({ openai: { maxRetries: 0 } });
  const child = AcpChild.start({ home, env: { XDG_CONFIG_HOME: configHome, TROUPE_MODEL: 'openai/gpt-5', OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: 'sk-e2e-test' } });
  t.after(() => child.close());
  await child.initialize();
  const sessionId = await child.newSession(mkdtempSync(join(tmpdir(), 'troupe-e2e-ws-')));
  return { server, child, sessionId };
}

/** The 400 OpenAI answers `body` with for a reasoning item that nothing the model said follows; undefined if none. */
function refusal(body: any): string | undefined {
  const input: any[] = body.input ?? [];
  for (const [i, item] of input.entries()) {
    if (item.type !== 'reasoning') continue;
    const next = input[i + 1];
    const follows = next && (next.type === 'reasoning' || next.type === 'function_call' || (next.role === 'assistant' && next.type !== 'function_call_output'));
    if (!follows) return `Item '${item.id}' of type 'reasoning' was provided without its required following item.`;
  }
  return undefined;
}

test('openai: a reply cut by its output limit while it reasoned (reasoning, no answer) leaves no reasoning item without its following item', async (t) => {
  const { server, child, sessionId } = await start(t);
  // The first prompt is counted, then spends its whole output on reasoning; the second goes by that call's usage.
  server.enqueue(
    { json: { object: 'response.input_tokens', input_tokens: 1_250 } },
    { sse: fixture('e2e-openai-responses-reasoning-only.sse') },
    { sse: fixture('e2e-openai-responses-answer.sse') },
  );

  assert.equal((await child.prompt(sessionId, 'hello there')).stopReason, 'max_tokens', child.stderr.slice(-2000));
  assert.equal((await child.prompt(sessionId, 'are you there?')).stopReason, 'end_turn', child.stderr.slice(-2000));

  const calls = server.requests.filter((r) => /^\/v1\/responses(\?|$)/.test(r.url));
  const second = calls[1]!.body;
  assert.equal(refusal(second), undefined, JSON.stringify(second.input));
  assert.deepEqual(
    second.input.map((i: any) => i.type ?? i.role),
    ['user', 'user'],
    'both prompts, and nothing of the reply that had nothing to follow its reasoning',
  );
  assert.deepEqual(child.schemaErrors, []);
});

test('openai: an image labelled image/jpg goes as image/jpeg, and a HEIC photo as a line saying it was left out', async (t) => {
  const { server, child, sessionId } = await start(t);
  server.enqueue({ json: { object: 'response.input_tokens', input_tokens: 3_400 } }, { sse: fixture('e2e-openai-responses-answer.sse') });
  const res: any = await child.agent.request('session/prompt', { sessionId, prompt: TWO_PHOTOS_PROMPT });
  assert.equal(res.stopReason, 'end_turn', child.stderr.slice(-2000));

  // OpenAI takes PNG, JPEG, GIF and WebP ("You uploaded an unsupported image"), in the count as in the call.
  for (const r of server.requests) {
    assert.deepEqual(
      r.body.input[0].content.map((c: any) => (c.type === 'input_image' ? [c.type, c.image_url] : [c.type, c.text])),
      [
        ['input_text', 'Compare these two photos.'],
        ['input_image', 'data:image/jpeg;base64,/9j/4AAQSkZJRgABAQ=='],
        ['input_text', '[image file:///photos/IMG_0001.HEIC (image/heic) omitted: the model takes PNG, JPEG, GIF and WebP images and PDF documents only]'],
      ],
    );
  }
  assert.equal(server.requests.length, 2);
  assert.deepEqual(child.schemaErrors, []);
});

test('openai: after a switch from gpt-5 to gpt-4.1, which does not reason, the reasoning of earlier replies is not sent to it', async (t) => {
  const { server, child, sessionId } = await start(t);
  const count = { json: { object: 'response.input_tokens', input_tokens: 1_250 } };
  // gpt-5 reasons (encrypted reasoning kept for later requests) and answers; gpt-4.1 is counted anew, then answers.
  server.enqueue(count, { sse: fixture('openai-responses-thinking.sse') }, count, { sse: fixture('e2e-openai-responses-answer.sse') });

  assert.equal((await child.prompt(sessionId, 'hello there')).stopReason, 'end_turn', child.stderr.slice(-2000));
  await child.prompt(sessionId, '/model openai/gpt-4.1');
  assert.equal((await child.prompt(sessionId, 'are you there?')).stopReason, 'end_turn', child.stderr.slice(-2000));

  const calls = server.requests.filter((r) => /^\/v1\/responses(\?|$)/.test(r.url)).map((r) => r.body);
  assert.deepEqual(calls.map((b) => b.model), ['gpt-5', 'gpt-4.1']);
  const last = server.requests.at(-1)!.body;
  assert.deepEqual(
    last.input.map((i: any) => i.type ?? i.role),
    ['user', 'assistant', 'user'],
    `no reasoning item goes to a model that does not reason: ${JSON.stringify(last.input)}`,
  );
  assert.equal(last.include, undefined);
  assert.deepEqual(child.schemaErrors, []);
});
