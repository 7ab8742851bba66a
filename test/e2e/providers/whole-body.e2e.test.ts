// LM Studio's answer to a base URL without its /v1, through troupe acp, the OpenAI SDK and the replay
// server: HTTP 200 and a JSON error where an event stream was asked for. The prompt's error is a
// refused request that names the URL and gives LM Studio's words, sent once (retries on, as by
// default); the session stays usable.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AcpChild } from '../../support/acp-child.js';
import { fixture, startReplayServer } from '../../support/replay-server.js';
import { providerHome } from '../../support/provider-home.js';

test('openai-compatible: LM Studio\'s 200 {"error": "Unexpected endpoint or method. …"} ends the turn provider_invalid_request naming the URL, after one request', async (t) => {
  const server = await startReplayServer();
  t.after(() => server.close());
  const { home, configHome } = providerHome({ 'openai-compatible': { maxRetries: 2 } });
  // The base URL as a person types it from LM Studio's window, without /v1.
  const child = AcpChild.start({ home, env: { XDG_CONFIG_HOME: configHome, TROUPE_MODEL: 'openai-compatible/qwen3-coder', OPENAI_BASE_URL: server.url } });
  t.after(() => child.close());
  await child.initialize();
  const sessionId = await child.newSession(mkdtempSync(join(tmpdir(), 'troupe-e2e-ws-')));
  const lmStudio = { status: 200, contentType: 'application/json; charset=utf-8', text: '{"error":"Unexpected endpoint or method. (POST /chat/completions)"}' };
  // A retry would take the answer queued behind it and succeed.
  server.enqueue(lmStudio, { sse: fixture('e2e-openai-chat-answer.sse') });

  await assert.rejects(child.prompt(sessionId, 'hello'), (err: any) => {
    assert.equal(err.code, -32044, JSON.stringify(err));
    assert.equal(err.data?.code, 'provider_invalid_request');
    assert.equal(err.message, `${server.url}/chat/completions answered with HTTP 200 and an error where an event stream was asked for: Unexpected endpoint or method. (POST /chat/completions)`);
    assert.equal(err.data?.vendorMessage, 'Unexpected endpoint or method. (POST /chat/completions)');
    return true;
  });
  assert.equal(server.requests.length, 1, 'not sent again');

  assert.equal((await child.prompt(sessionId, 'hello again')).stopReason, 'end_turn', child.stderr.slice(-2000));
  assert.deepEqual(child.schemaErrors, []);
});
