// A vendor that refuses the key, through troupe acp, each vendor's SDK and the replay server: the
// prompt's error says which key was refused and where it came from (the agent's environment or the
// config file), with the vendor's words in data.vendorMessage; the session stays usable.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AcpChild } from '../../support/acp-child.js';
import { fixture, startReplayServer, type ReplayStep } from '../../support/replay-server.js';
import { providerHome } from '../../support/provider-home.js';
import { GEMINI_KEY_INVALID } from '../../support/vendor-answers.js';

interface Case {
  label: string;
  section: string;
  model: string;
  /** The base URL variable (and the key, when it comes from the environment). */
  env(url: string): Record<string, string>;
  /** The key in the config file, when it comes from there. */
  configKey?: string;
  /** Whether a token count comes before the model call (it fails too, and is given up). */
  counts: boolean;
  refusal: ReplayStep;
  vendorWords: string;
  /** What the message must say of where the key came from and what to do. */
  says: (configFile: string) => RegExp[];
  answer: string;
}

const anthropic401: ReplayStep = { status: 401, json: { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' }, request_id: 'req_011CSHoEeqs5C35K2UUqR7Fy' } };

const cases: Case[] = [
  {
    label: 'anthropic, key from ANTHROPIC_API_KEY',
    section: 'anthropic',
    model: 'anthropic/claude-sonnet-5-5',
    env: (url) => ({ ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: 'sk-ant-stale' }),
    counts: true,
    refusal: anthropic401,
    vendorWords: 'invalid x-api-key',
    says: () => [/^Anthropic refused the key in ANTHROPIC_API_KEY, from the agent's environment: invalid x-api-key\./, /unset it: the environment wins over providers\.anthropic\.apiKey/],
    answer: fixture('e2e-anthropic-answer.sse'),
  },
  {
    label: 'anthropic, key from the config file',
    section: 'anthropic',
    model: 'anthropic/claude-sonnet-5-5',
    env: (url) => ({ ANTHROPIC_BASE_URL: url }),
    configKey: 'sk-ant-in-config',
    counts: true,
    refusal: anthropic401,
    vendorWords: 'invalid x-api-key',
    says: (file) => [new RegExp(`^Anthropic refused the key at providers\\.anthropic\\.apiKey in the troupe config file \\(${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\): invalid x-api-key\\.`), /set ANTHROPIC_API_KEY/],
    answer: fixture('e2e-anthropic-answer.sse'),
  },
  {
    label: 'openai, key from OPENAI_API_KEY',
    section: 'openai',
    model: 'openai/gpt-5',
    env: (url) => ({ OPENAI_BASE_URL: `${url}/v1`, OPENAI_API_KEY: 'sk-stale' }),
    counts: true,
    refusal: {
      status: 401,
      json: { error: { message: 'Incorrect API key provided: sk-stale. You can find your API key at https://platform.openai.com/account/api-keys.', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } },
    },
    vendorWords: 'Incorrect API key provided: sk-stale. You can find your API key at https://platform.openai.com/account/api-keys.',
    says: () => [/^OpenAI refused the key in OPENAI_API_KEY, from the agent's environment: Incorrect API key provided/, /Set OPENAI_API_KEY to a valid key/],
    answer: fixture('e2e-openai-responses-answer.sse'),
  },
  {
    label: 'google, key from GEMINI_API_KEY (a 400 API_KEY_INVALID)',
    section: 'google',
    model: 'google/gemini-2.5-pro',
    env: (url) => ({ GOOGLE_GEMINI_BASE_URL: url, GEMINI_API_KEY: 'AIza-stale' }),
    counts: true,
    refusal: GEMINI_KEY_INVALID,
    vendorWords: 'API key not valid. Please pass a valid API key.',
    // The vendor's closing period is not doubled by troupe's sentence after it.
    says: () => [/^Gemini refused the key in GEMINI_API_KEY, from the agent's environment: API key not valid\. Please pass a valid API key\. Set GEMINI_API_KEY/],
    answer: fixture('e2e-google-answer.sse'),
  },
  {
    label: 'openai-compatible, no key at all',
    section: 'openai-compatible',
    model: 'openai-compatible/qwen3-coder',
    env: (url) => ({ OPENAI_BASE_URL: `${url}/v1` }),
    counts: false,
    refusal: { status: 401, json: { error: { message: 'Missing Authentication header', code: 401 } } },
    vendorWords: 'Missing Authentication header',
    says: () => [/^The OpenAI-compatible server refused the request, which carried no key: Missing Authentication header\. Set OPENAI_API_KEY or providers\["openai-compatible"\]\.apiKey/],
    answer: fixture('e2e-openai-chat-answer.sse'),
  },
];

for (const c of cases) {
  test(`${c.label}: a refused key is named, with where it came from; the vendor's words stay in data.vendorMessage`, async (t) => {
    const server = await startReplayServer();
    t.after(() => server.close());
    const { home, configHome } = providerHome({ [c.section]: { maxRetries: 0, ...(c.configKey ? { apiKey: c.configKey } : {}) } });
    const configFile = join(configHome, 'troupe', 'config.json');
    const child = AcpChild.start({ home, env: { XDG_CONFIG_HOME: configHome, TROUPE_MODEL: c.model, ...c.env(server.url) } });
    t.after(() => child.close());
    await child.initialize();
    const sessionId = await child.newSession(mkdtempSync(join(tmpdir(), 'troupe-e2e-ws-')));
    // The count is refused too (and given up for the estimate), then the model call.
    server.enqueue(...(c.counts ? [c.refusal] : []), c.refusal);

    await assert.rejects(child.prompt(sessionId, 'hello'), (err: any) => {
      assert.equal(err.code, -32041, JSON.stringify(err));
      assert.equal(err.data?.code, 'provider_auth');
      assert.equal(err.data?.vendorMessage, c.vendorWords);
      for (const said of c.says(configFile)) assert.match(err.message, said);
      assert.ok(!err.message.includes(c.configKey ?? 'sk-ant-stale') && !err.message.includes('AIza-stale'), 'the key itself is never told');
      return true;
    });

    // A refusal of the moment (a key rotated back) leaves the session as it was: the next prompt works.
    server.enqueue(...(c.counts ? [c.refusal] : []), { sse: c.answer });
    assert.equal((await child.prompt(sessionId, 'hello again')).stopReason, 'end_turn', child.stderr.slice(-2000));
    assert.deepEqual(child.schemaErrors, []);
  });
}
