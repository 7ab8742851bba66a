// A model call's retries and a spent quota through `troupe acp`: a real child, the vendor's SDK
// against the replay server on 127.0.0.1. Each retry is in the session's log (`model_retry`), so the
// client sees it as it happens and a `session/load` in another process shows it again; a spent quota
// ends the turn at once with its own code. A retry of any failure waits the delay the vendor asked
// for (retry-after-ms, retry-after), as a rate limit's does: model_retry's delayMs, in the log and
// in what the client is told.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readLogFile, sessionLogPath, sessionsDir } from '../../../src/store/index.js';
import { AcpChild } from '../../support/acp-child.js';
import { providerHome } from '../../support/provider-home.js';
import { fixture, startReplayServer, type ReplayStep } from '../../support/replay-server.js';
import { OPENAI_INSUFFICIENT_QUOTA, OPENAI_QUOTA_WORDS } from '../../support/vendor-answers.js';

const rateLimited = (ms: number) => ({
  status: 429,
  headers: { 'retry-after-ms': String(ms) },
  json: { type: 'error', error: { type: 'rate_limit_error', message: 'Number of request tokens has exceeded your per-minute rate limit.' } },
});
const ANTHROPIC_CALL = /^\/v1\/messages(\?|$)/;

test('anthropic: each retry of a rate-limited call is told as it happens (a thought, or a notice), and again by session/load', { timeout: 60_000 }, async (t) => {
  const server = await startReplayServer();
  t.after(() => server.close());
  const { home, configHome } = providerHome({ anthropic: { maxRetries: 2 } });
  const env = { XDG_CONFIG_HOME: configHome, TROUPE_MODEL: 'anthropic/claude-sonnet-5-5', ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'sk-ant-e2e-test' };
  const cwd = mkdtempSync(join(tmpdir(), 'troupe-e2e-ws-'));

  const first = AcpChild.start({ home, env });
  t.after(() => first.close());
  await first.initialize();
  const sessionId = await first.newSession(cwd);
  // The count, then the model call: refused twice, answered the third time.
  server.enqueue({ json: { input_tokens: 1_250 } }, rateLimited(20), rateLimited(1500), { sse: fixture('e2e-anthropic-answer.sse') });
  assert.equal((await first.prompt(sessionId, 'hello there')).stopReason, 'end_turn', first.stderr.slice(-2000));
  assert.equal(server.requests.filter((r) => ANTHROPIC_CALL.test(r.url)).length, 3);

  const said = [
    'Rate limited by anthropic (429), retrying in 20 ms (attempt 2 of 3)',
    'Rate limited by anthropic (429), retrying in 1.5 s (attempt 3 of 3)',
  ];
  const updates = first.updatesFor(sessionId);
  const thoughts = updates.filter((u) => u.sessionUpdate === 'agent_thought_chunk').map((u) => u.content.text);
  assert.deepEqual(thoughts, said.map((s) => `[${s}]`));
  const lastThought = updates.findLastIndex((u) => u.sessionUpdate === 'agent_thought_chunk');
  const firstText = updates.findIndex((u) => u.sessionUpdate === 'agent_message_chunk');
  assert.ok(lastThought < firstText, 'told before the reply');
  assert.equal(await first.close(), 0);

  // A client that takes notices, in another process: the log replayed, each retry a warning notice.
  const second = AcpChild.start({ home, env });
  t.after(() => second.close());
  await second.initialize({ session: { notices: {} } } as any);
  await second.agent.request('session/load', { sessionId, cwd, mcpServers: [] });
  const notices = second.updatesFor(sessionId, 'notice');
  assert.deepEqual(notices.map((n) => [n.severity, n.title]), said.map((s) => ['warning', s]));
  assert.deepEqual([...first.schemaErrors, ...second.schemaErrors], []);
});

test('openai: a 429 insufficient_quota ends the turn at once, provider_quota_exceeded, requested once', { timeout: 60_000 }, async (t) => {
  const server = await startReplayServer();
  t.after(() => server.close());
  // Retries allowed (the default is 2): none may happen.
  const { home, configHome } = providerHome({ openai: { maxRetries: 2 } });
  const child = AcpChild.start({ home, env: { XDG_CONFIG_HOME: configHome, TROUPE_MODEL: 'openai/gpt-5', OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: 'sk-e2e-test' } });
  t.after(() => child.close());
  await child.initialize();
  const sessionId = await child.newSession(mkdtempSync(join(tmpdir(), 'troupe-e2e-ws-')));
  // The count is refused too (the engine goes on with its estimate), then the model call.
  server.enqueue(OPENAI_INSUFFICIENT_QUOTA, OPENAI_INSUFFICIENT_QUOTA);

  await assert.rejects(child.prompt(sessionId, 'hello'), (err: any) => {
    assert.equal(err.code, -32047, JSON.stringify(err));
    assert.equal(err.data?.code, 'provider_quota_exceeded');
    assert.equal(err.data?.vendorMessage, OPENAI_QUOTA_WORDS);
    assert.match(err.message, /quota is used up \(insufficient_quota/);
    assert.match(err.message, /Retrying does not help/);
    return true;
  });
  assert.deepEqual(
    server.requests.map((r) => r.url),
    ['/v1/responses/input_tokens', '/v1/responses'],
    'each requested once',
  );
  assert.deepEqual(child.updatesFor(sessionId, 'agent_thought_chunk').filter((u) => /retrying/.test(u.content.text)), [], 'no retry announced');
  assert.deepEqual(child.schemaErrors, []);
});

/** Each model_retry of the session's log as [errorCode, status, attempt, attempts, delayMs]. */
async function loggedRetries(home: string, sessionId: string): Promise<unknown[][]> {
  const { events } = await readLogFile(sessionLogPath(sessionsDir(home), sessionId));
  return events.flatMap((e: any) => (e.type === 'model_retry' ? [[e.errorCode, e.status, e.attempt, e.attempts, e.delayMs]] : []));
}

const vendorAsked: { name: string; section: string; env: (url: string) => Record<string, string>; steps: ReplayStep[]; logged: unknown[][]; said: string[] }[] = [
  {
    name: 'openai: a 503 and a 400 with x-should-retry: true',
    section: 'openai',
    env: (url: string) => ({ TROUPE_MODEL: 'openai/gpt-5', OPENAI_BASE_URL: `${url}/v1`, OPENAI_API_KEY: 'sk-e2e-test' }),
    steps: [
      { json: { object: 'response.input_tokens', input_tokens: 1_250 } },
      { status: 503, headers: { 'retry-after-ms': '30' }, json: { error: { message: 'The server is overloaded, please try again later.', type: 'server_error', param: null, code: null } } },
      { status: 400, headers: { 'x-should-retry': 'true', 'retry-after': '0.02' }, json: { error: { message: 'Invalid value for the request.', type: 'invalid_request_error', param: null, code: null } } },
      { sse: fixture('e2e-openai-responses-answer.sse') },
    ],
    logged: [
      ['provider_overloaded', 503, 2, 3, 30],
      ['provider_invalid_request', 400, 3, 3, 20],
    ],
    said: ['openai is overloaded or failing (503), retrying in 30 ms (attempt 2 of 3)', 'openai answered an error (400) it says to send again, retrying in 20 ms (attempt 3 of 3)'],
  },
  {
    name: 'anthropic: a 529 overloaded_error',
    section: 'anthropic',
    env: (url: string) => ({ TROUPE_MODEL: 'anthropic/claude-sonnet-5-5', ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: 'sk-ant-e2e-test' }),
    steps: [
      { json: { input_tokens: 1_250 } },
      { status: 529, headers: { 'retry-after-ms': '25' }, json: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } },
      { sse: fixture('e2e-anthropic-answer.sse') },
    ],
    logged: [['provider_overloaded', 529, 2, 3, 25]],
    said: ['anthropic is overloaded or failing (529), retrying in 25 ms (attempt 2 of 3)'],
  },
];

for (const v of vendorAsked) {
  test(`${v.name}: each retry waits the delay its answer asked for, which model_retry reports`, { timeout: 60_000 }, async (t) => {
    const server = await startReplayServer();
    t.after(() => server.close());
    const { home, configHome } = providerHome({ [v.section]: { maxRetries: 2 } });
    const child = AcpChild.start({ home, env: { XDG_CONFIG_HOME: configHome, ...v.env(server.url) } });
    t.after(() => child.close());
    await child.initialize();
    const sessionId = await child.newSession(mkdtempSync(join(tmpdir(), 'troupe-e2e-ws-')));
    server.enqueue(...v.steps);
    assert.equal((await child.prompt(sessionId, 'hello there')).stopReason, 'end_turn', child.stderr.slice(-2000));
    assert.equal(server.requests.length, v.steps.length, 'the count, then each attempt');
    // troupe's own backoff would have said 375 ms or more.
    assert.deepEqual(child.updatesFor(sessionId, 'agent_thought_chunk').map((u) => u.content.text), v.said.map((s) => `[${s}]`));
    assert.equal(await child.close(), 0);
    assert.deepEqual(await loggedRetries(home, sessionId), v.logged);
    assert.deepEqual(child.schemaErrors, []);
  });
}
