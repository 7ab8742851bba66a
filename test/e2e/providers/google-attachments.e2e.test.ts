// Attachments Gemini cannot read inline, through troupe acp, @google/genai and the replay server.
// Gemini answers a part of another type with 400 INVALID_ARGUMENT "Unsupported MIME type: …", and
// the prompt stays in the session: every later request would carry it again. `refusal` below states
// that rule (the supported types of ai.google.dev), which the replay server does not enforce itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AcpChild } from '../../support/acp-child.js';
import { fixture, startReplayServer } from '../../support/replay-server.js';
import { providerHome } from '../../support/provider-home.js';

const SUPPORTED = ['image/png', 'image/jpeg', 'image/webp', 'image/heic', 'image/heif', 'application/pdf', 'text/plain'];

function refusal(body: any): string | undefined {
  for (const content of body.contents ?? []) {
    for (const part of content.parts ?? []) {
      const type = part.inlineData?.mimeType;
      if (type !== undefined && !SUPPORTED.includes(type) && !/^(audio|video)\//.test(type)) return `Unsupported MIME type: ${type}`;
    }
  }
  return undefined;
}

test('google: a BMP image and an attached zip go as lines saying they were left out; a PNG goes inline', async (t) => {
  const server = await startReplayServer();
  t.after(() => server.close());
  const { home, configHome } = providerHome({ google: { maxRetries: 0 } });
  const child = AcpChild.start({
    home,
    env: { XDG_CONFIG_HOME: configHome, TROUPE_MODEL: 'google/gemini-2.5-pro', GOOGLE_GEMINI_BASE_URL: server.url, GEMINI_API_KEY: 'AIza-e2e-test' },
  });
  t.after(() => child.close());
  await child.initialize();
  const sessionId = await child.newSession(mkdtempSync(join(tmpdir(), 'troupe-e2e-ws-')));
  const answer = { sse: fixture('e2e-google-answer.sse') };
  server.enqueue({ json: { totalTokens: 5_000 } }, answer, answer);
  const prompt = [
    { type: 'text', text: 'What is in these?' },
    { type: 'image', mimeType: 'image/png', data: 'iVBORw0KGgo=' },
    { type: 'image', mimeType: 'image/bmp', data: 'Qk0eAAAAAAAAABoAAAA=' },
    { type: 'resource', resource: { uri: 'file:///work/build.zip', mimeType: 'application/zip', blob: 'UEsDBAoAAAAAAA==' } },
  ];
  const res: any = await child.agent.request('session/prompt', { sessionId, prompt });
  assert.equal(res.stopReason, 'end_turn', child.stderr.slice(-2000));
  // The next turn sends the same history again, from the log.
  assert.equal((await child.prompt(sessionId, 'and now?')).stopReason, 'end_turn', child.stderr.slice(-2000));

  const [count, first, second] = server.requests;
  for (const r of [count!, first!, second!]) assert.equal(refusal(r.body), undefined, JSON.stringify(r.body.contents).slice(0, 2000));
  assert.deepEqual(
    first!.body.contents[0].parts.map((p: any) => p.text ?? [p.inlineData.mimeType, p.inlineData.data]),
    [
      'What is in these?',
      ['image/png', 'iVBORw0KGgo='],
      '[image (image/bmp) omitted: Gemini does not take this type]',
      '[binary resource file:///work/build.zip (application/zip) omitted: Gemini does not take this type]',
    ],
  );
  assert.deepEqual(child.schemaErrors, []);
});

test('google: a model configured without images gets a line for an attached PDF and audio clip, never their data', async (t) => {
  // A text-only model behind GOOGLE_GEMINI_BASE_URL refuses inline data. Until 2026-12-06 PDFs and
  // audio went inline to any Gemini model, `"images": false` or not.
  const server = await startReplayServer();
  t.after(() => server.close());
  const { home, configHome } = providerHome({ google: { maxRetries: 0, models: { 'gemini-2.5-pro': { images: false } } } });
  const child = AcpChild.start({
    home,
    env: { XDG_CONFIG_HOME: configHome, TROUPE_MODEL: 'google/gemini-2.5-pro', GOOGLE_GEMINI_BASE_URL: server.url, GEMINI_API_KEY: 'AIza-e2e-test' },
  });
  t.after(() => child.close());
  await child.initialize();
  const sessionId = await child.newSession(mkdtempSync(join(tmpdir(), 'troupe-e2e-ws-')));
  server.enqueue({ json: { totalTokens: 5_000 } }, { sse: fixture('e2e-google-answer.sse') });
  const prompt = [
    { type: 'text', text: 'Summarize these.' },
    { type: 'resource', resource: { uri: 'file:///docs/spec.pdf', mimeType: 'application/pdf', blob: 'JVBERi0xLjQK' } },
    { type: 'resource', resource: { uri: 'file:///rec/standup.wav', mimeType: 'audio/wav', blob: 'UklGRiQAAABXQVZF' } },
  ];
  const res: any = await child.agent.request('session/prompt', { sessionId, prompt });
  assert.equal(res.stopReason, 'end_turn', child.stderr.slice(-2000));
  for (const r of server.requests) assert.ok(!JSON.stringify(r.body).includes('inlineData'), JSON.stringify(r.body.contents));
  assert.deepEqual(server.requests.at(-1)!.body.contents[0].parts.map((p: any) => p.text), [
    'Summarize these.',
    '[binary resource file:///docs/spec.pdf (application/pdf) omitted: the model takes text only]',
    '[binary resource file:///rec/standup.wav (audio/wav) omitted: the model takes text only]',
  ]);
  assert.deepEqual(child.schemaErrors, []);
});
