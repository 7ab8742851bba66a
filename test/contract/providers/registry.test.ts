// Model selection and configuration: default-model order, keys from env and config, base URLs,
// unknown providers, malformed config files, and `troupe models --json`.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import fc from 'fast-check';
import { isTroupeError } from '../../../src/core/errors.js';
import { modelsCommand } from '../../../src/cli/models.command.js';
import { configPath, CREDENTIAL_ENV_VARS, loadConfig, settingsFor, type TroupeConfig } from '../../../src/providers/config.js';
import { assertKnownModel, chooseDefaultModel, defaultModel, defaultModelProblem, defaultModelWarning, providerStatus, resolveModel, usableDefaultModel } from '../../../src/providers/registry.js';
import { OpenAIChatProvider } from '../../../src/providers/openai/openai-chat.provider.js';
import { fixture, startReplayServer, type ReplayServer } from '../../support/replay-server.js';
import { collect, request } from './provider-contract.js';

const seed = process.env.FC_SEED ? Number(process.env.FC_SEED) : Date.now() ^ (Math.random() * 2 ** 31);
console.log('fast-check seed', seed);

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'troupe-registry-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** An environment whose config lives in a fresh temp dir, optionally with this config file text. */
function envWithConfig(text?: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const home = mkdtempSync(join(dir, 'xdg-'));
  if (text !== undefined) {
    mkdirSync(join(home, 'troupe'), { recursive: true });
    writeFileSync(join(home, 'troupe', 'config.json'), text);
  }
  return { XDG_CONFIG_HOME: home, HOME: dir, ...extra };
}

describe('default model', () => {
  test('no credential at all → the offline scripted/demo model, announced as offline', () => {
    assert.deepEqual(chooseDefaultModel({}, {}), { modelId: 'scripted/demo', source: 'offline' });
  });

  test('TROUPE_MODEL, then the config model, then the first keyed provider', () => {
    const env = { TROUPE_MODEL: 'google/gemini-2.5-flash', ANTHROPIC_API_KEY: 'a' };
    const config: TroupeConfig = { model: 'openai/gpt-4.1' };
    assert.equal(defaultModel(env, config), 'google/gemini-2.5-flash');
    assert.equal(defaultModel({ ANTHROPIC_API_KEY: 'a' }, config), 'openai/gpt-4.1');
    assert.equal(defaultModel({ ANTHROPIC_API_KEY: 'a' }, {}), 'anthropic/claude-sonnet-5-5');
  });

  test('property: the first provider with a key, from env or config, in anthropic, openai, google order', () => {
    const ORDER = [
      { id: 'anthropic', env: 'ANTHROPIC_API_KEY', model: 'anthropic/claude-sonnet-5-5' },
      { id: 'openai', env: 'OPENAI_API_KEY', model: 'openai/gpt-5' },
      { id: 'google', env: 'GEMINI_API_KEY', model: 'google/gemini-2.5-pro' },
    ];
    const where = fc.constantFrom('none', 'env', 'config', 'empty-env');
    fc.assert(
      fc.property(fc.tuple(where, where, where), (places) => {
        const env: NodeJS.ProcessEnv = {};
        const providers: Record<string, { apiKey: string }> = {};
        places.forEach((place, i) => {
          if (place === 'env') env[ORDER[i]!.env] = `key-${i}`;
          if (place === 'empty-env') env[ORDER[i]!.env] = '  ';
          if (place === 'config') providers[ORDER[i]!.id] = { apiKey: `key-${i}` };
        });
        const first = places.findIndex((p) => p === 'env' || p === 'config');
        const expected = first < 0 ? 'scripted/demo' : ORDER[first]!.model;
        assert.equal(defaultModel(env, { providers }), expected);
      }),
      { seed, numRuns: 100 },
    );
  });
});

describe('a default model no turn could use', () => {
  test('TROUPE_MODEL or the config\'s model: refused as a switch to it is, saying where it came from and what to do', () => {
    const fromEnv = defaultModelProblem({ TROUPE_MODEL: ' scripted/nope ' }, {});
    assert.ok(isTroupeError(fromEnv, 'model_not_found'));
    assert.deepEqual(fromEnv.data, { modelId: 'scripted/nope', source: 'TROUPE_MODEL', reason: "scripted has no model 'nope': its models are scripted/demo, scripted/replay" });
    assert.match(fromEnv.message, /^the default model "scripted\/nope" \(from TROUPE_MODEL\) cannot be used: scripted has no model 'nope': its models are scripted\/demo, scripted\/replay; set TROUPE_MODEL to a model troupe serves \(troupe models lists them\), or unset it/);
    const fromConfig = defaultModelProblem({}, { model: 'anthropic/claude x', source: '/home/me/.config/troupe/config.json' });
    assert.ok(isTroupeError(fromConfig, 'invalid_params'));
    assert.match(fromConfig.message, /^the default model "anthropic\/claude x" \(from "model" in \/home\/me\/.config\/troupe\/config.json\) cannot be used: model id "anthropic\/claude x" has a space in it; .*change "model" in \/home\/me\/.config\/troupe\/config.json/);
    assert.throws(() => usableDefaultModel({ TROUPE_MODEL: 'nope/x' }, {}), (err) => isTroupeError(err, 'model_not_found') && /^the default model "nope\/x" \(from TROUPE_MODEL\)/.test(err.message));
    // Every default troupe picks itself, and a vendor model not in the catalogue, is taken.
    for (const env of [{}, { ANTHROPIC_API_KEY: 'a' }, { TROUPE_MODEL: 'scripted/demo' }, { TROUPE_MODEL: 'anthropic/claude-haiku-4-5-20251001' }, { TROUPE_MODEL: 'openai-compatible/meta/llama-3.3' }]) {
      assert.equal(defaultModelProblem(env, {}), undefined, JSON.stringify(env));
      assert.equal(usableDefaultModel(env, {}), defaultModel(env, {}));
    }
  });

  test('what troupe says as it starts: a refused default, or one whose provider has no credential here; nothing for a default it picked', () => {
    assert.match(defaultModelWarning({ TROUPE_MODEL: 'scripted/nope' }, {}) ?? '', /^the default model "scripted\/nope" \(from TROUPE_MODEL\) cannot be used: .*; new sessions are refused until then$/);
    assert.equal(
      defaultModelWarning({ TROUPE_MODEL: 'openai/gpt-5' }, {}),
      'the default model "openai/gpt-5" (from TROUPE_MODEL) cannot be used here: openai has no credential here: set OPENAI_API_KEY where the agent starts (or in the config file), then start the agent again; every turn on it fails until then',
    );
    assert.match(defaultModelWarning({}, { model: 'google/gemini-2.5-pro', source: '/c.json' }) ?? '', /^the default model "google\/gemini-2.5-pro" \(from "model" in \/c.json\) cannot be used here: google has no credential here/);
    for (const env of [{}, { ANTHROPIC_API_KEY: 'a' }, { TROUPE_MODEL: 'openai/gpt-5', OPENAI_API_KEY: 'k' }, { TROUPE_MODEL: 'scripted/demo' }]) assert.equal(defaultModelWarning(env, {}), undefined, JSON.stringify(env));
  });

  test('a model id with whitespace or a control character anywhere is invalid_params naming it', () => {
    for (const id of ['openai/ gpt-4o', 'anthropic/claude x', 'openai/gpt\u00a04o', 'openai/gpt-4o\n', 'openai/gpt\u00004o', ' scripted/demo']) {
      assert.throws(() => assertKnownModel(id, {}, {}), (err) => isTroupeError(err, 'invalid_params') && err.data.modelId === id && err.message.startsWith(`model id ${JSON.stringify(id)} has `), JSON.stringify(id));
    }
  });
});

/** Models Anthropic has retired, which the catalogue listed until 2026-12-06. */
const RETIRED = ['anthropic/claude-sonnet-4-5', 'anthropic/claude-opus-4-1', 'anthropic/claude-opus-4', 'anthropic/claude-sonnet-4'];

describe('resolveModel', () => {
  test('a catalogue model resolves to its provider and capabilities', () => {
    const r = resolveModel('anthropic/claude-haiku-4-5', { ANTHROPIC_API_KEY: 'a' }, {});
    assert.equal(r.provider.id, 'anthropic');
    assert.equal(r.model, 'claude-haiku-4-5');
    assert.equal(r.capabilities.maxOutputTokens, 64_000);
    assert.deepEqual(r.capabilities.pricing, { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 });
  });

  test('dated snapshots use their row; unknown models of a known provider get conservative defaults', () => {
    assert.equal(resolveModel('openai/gpt-4.1-2025-04-14', {}, {}).capabilities.contextWindow, 1_047_576);
    const unknown = resolveModel('openai/gpt-99-turbo', {}, {});
    assert.equal(unknown.capabilities.contextWindow, 128_000);
    assert.equal(unknown.capabilities.pricing, undefined, 'no invented price');
    assert.equal(resolveModel('openai/gpt-5-pro', {}, {}).capabilities.pricing, undefined, 'gpt-5-pro is not priced as gpt-5');
  });

  test('a model Anthropic retired is no catalogue model: it gets the unknown-model defaults (its turn ends model_not_found, model-not-found.test.ts)', () => {
    for (const id of [...RETIRED, 'anthropic/claude-sonnet-4-5-20250929']) {
      const r = resolveModel(id, { ANTHROPIC_API_KEY: 'a' }, {});
      assert.deepEqual(r.capabilities, { contextWindow: 200_000, maxOutputTokens: 8_192, tools: true, thinking: false, images: true }, id);
    }
  });

  test('unknown providers and malformed ids are model_not_found', () => {
    for (const id of ['mistral/large', 'claude-sonnet-5-5', 'anthropic/', '/gpt-5']) {
      assert.throws(() => resolveModel(id, {}, {}), (err) => isTroupeError(err, 'model_not_found') && err.data.modelId === id, id);
    }
  });

  test('openai-compatible models take their capabilities from the config', () => {
    const config: TroupeConfig = { providers: { 'openai-compatible': { baseUrl: 'http://127.0.0.1:11434/v1', models: { 'qwen3:8b': { contextWindow: 40_960, thinking: true } } } } };
    const r = resolveModel('openai-compatible/qwen3:8b', {}, config);
    assert.equal(r.provider.id, 'openai-compatible');
    assert.equal(r.capabilities.contextWindow, 40_960);
    assert.equal(r.capabilities.thinking, true);
    assert.equal(resolveModel('openai-compatible/llama3.2', {}, config).capabilities.contextWindow, 32_768);
    // A window configured without an output limit: at most a quarter of it is asked for as output (the engine's request carries it).
    const small: TroupeConfig = { providers: { 'openai-compatible': { models: { tiny: { contextWindow: 4_096 }, stated: { contextWindow: 4_096, maxOutputTokens: 3_000 } } } } };
    assert.equal(resolveModel('openai-compatible/tiny', {}, small).capabilities.maxOutputTokens, 1_024);
    assert.equal(resolveModel('openai-compatible/stated', {}, small).capabilities.maxOutputTokens, 3_000);
    assert.equal(r.capabilities.maxOutputTokens, 4_096);
  });

  test('a models key written as the full id (openai-compatible/qwen3:8b) is the model of that name, for the engine, the adapter and troupe models', () => {
    const config: TroupeConfig = {
      providers: {
        'openai-compatible': { baseUrl: 'http://127.0.0.1:11434/v1', models: { 'openai-compatible/qwen3:8b': { contextWindow: 40_960, thinking: true }, 'qwen3:8b': { thinking: false }, 'openai-compatible/meta/llama-3.3': { contextWindow: 131_072 } } },
        anthropic: { models: { 'anthropic/claude-haiku-4-5': { maxOutputTokens: 1000 } } },
      },
    };
    // Until 2026-12-07 never matched: the fallback's 32,768 window, and the catalogue default's output limit.
    const r = resolveModel('openai-compatible/qwen3:8b', {}, config);
    assert.deepEqual([r.capabilities.contextWindow, r.capabilities.thinking], [40_960, false], 'the key without the prefix wins field by field');
    assert.equal(resolveModel('openai-compatible/meta/llama-3.3', {}, config).capabilities.contextWindow, 131_072);
    const adapter = new OpenAIChatProvider(settingsFor('openai-compatible', {}, config));
    assert.equal(adapter.capabilities('qwen3:8b').contextWindow, 40_960);
    assert.equal(resolveModel('anthropic/claude-haiku-4-5', { ANTHROPIC_API_KEY: 'a' }, config).capabilities.maxOutputTokens, 1000);
    const listed = providerStatus({}, config).find((p) => p.id === 'openai-compatible')!.models.map((m) => m.id);
    assert.deepEqual(listed.sort(), ['openai-compatible/meta/llama-3.3', 'openai-compatible/qwen3:8b']);
  });

  test('config overrides reach the adapter itself, so the request uses them too', () => {
    const config: TroupeConfig = { providers: { anthropic: { models: { 'claude-haiku-4-5': { maxOutputTokens: 1000 } } } } };
    const r = resolveModel('anthropic/claude-haiku-4-5', { ANTHROPIC_API_KEY: 'a' }, config);
    assert.equal(r.capabilities.maxOutputTokens, 1000);
    assert.equal(r.provider.capabilities('claude-haiku-4-5').maxOutputTokens, 1000);
    assert.equal(r.capabilities.contextWindow, 200_000, 'fields not overridden keep the catalogue value');
  });

  test('a model whose maxOutputTokens is not below its contextWindow is refused (invalid_params naming both): no room would be left for any input', () => {
    // Until 2026-12-07 taken, and every request asked for more than the window holds.
    const config: TroupeConfig = {
      source: '/c.json',
      model: 'openai-compatible/full',
      providers: { anthropic: { models: { 'claude-haiku-4-5': { maxOutputTokens: 200_000 } } }, 'openai-compatible': { models: { full: { contextWindow: 4_096, maxOutputTokens: 4_096 }, roomy: { contextWindow: 4_096, maxOutputTokens: 4_095 } } } },
    };
    const refused = (id: string, output: number, window: number, where: string) => (err: unknown) =>
      isTroupeError(err, 'invalid_params') &&
      err.message === `${id} cannot serve a turn: its maxOutputTokens (${output}) is not below its contextWindow (${window}), which leaves no room for any input; lower maxOutputTokens (or raise contextWindow) in ${where}` &&
      err.data.modelId === id;
    // An override meeting the catalogue's window, and one entry stating both (the config as an object, not read from a file).
    assert.throws(() => resolveModel('anthropic/claude-haiku-4-5', { ANTHROPIC_API_KEY: 'a' }, config), refused('anthropic/claude-haiku-4-5', 200_000, 200_000, 'providers.anthropic.models of the troupe config'));
    assert.throws(() => assertKnownModel('openai-compatible/full', {}, config), refused('openai-compatible/full', 4_096, 4_096, 'providers.openai-compatible.models of the troupe config'));
    assert.equal(resolveModel('openai-compatible/roomy', {}, config).capabilities.maxOutputTokens, 4_095);
    // As the default: said as the agent starts, and new sessions are refused.
    assert.match(defaultModelWarning({}, config) ?? '', /^the default model "openai-compatible\/full" \(from "model" in \/c.json\) cannot be used: openai-compatible\/full cannot serve a turn: its maxOutputTokens \(4096\) is not below its contextWindow \(4096\)/);
    assert.throws(() => usableDefaultModel({}, config), (err) => isTroupeError(err, 'invalid_params'));
    const listed = providerStatus({}, config).find((p) => p.id === 'openai-compatible')!.models.find((m) => m.id === 'openai-compatible/full')!;
    assert.equal(listed.capabilities, undefined);
    assert.match(listed.problem ?? '', /maxOutputTokens \(4096\) is not below its contextWindow \(4096\)/);
    // The scripted models ask no vendor: a script's tiny window (to drive compaction) keeps their output limit.
    const script = join(dir, 'tiny-window-script.json');
    writeFileSync(script, JSON.stringify({ capabilities: { contextWindow: 200 }, replies: [] }));
    assert.equal(resolveModel('scripted/replay', { TROUPE_SCRIPT: script }, {}).capabilities.maxOutputTokens, 8_192);
  });

  test('scripted/demo resolves to the offline provider', () => {
    const r = resolveModel('scripted/demo', {}, {});
    assert.equal(r.provider.id, 'scripted');
  });

  test('the same env and config give the same provider instance (SDK clients and replay state are kept)', () => {
    const env = { OPENAI_API_KEY: 'k' };
    const config: TroupeConfig = {};
    assert.equal(resolveModel('openai/gpt-5', env, config).provider, resolveModel('openai/gpt-4.1', env, config).provider);
    assert.equal(resolveModel('scripted/replay', env, config).provider, resolveModel('scripted/demo', env, config).provider);
    assert.notEqual(resolveModel('openai/gpt-5', { ...env }, config).provider, resolveModel('openai/gpt-5', env, config).provider);
  });
});

describe('keys and base URLs reach the vendor', { timeout: 20_000 }, () => {
  let server: ReplayServer;
  before(async () => {
    server = await startReplayServer();
  });
  after(() => server.close());

  test('OPENAI_BASE_URL and a config-file key: the config key is sent', async () => {
    server.enqueue({ sse: fixture('openai-responses-text.sse') });
    const r = resolveModel('openai/gpt-5', { OPENAI_BASE_URL: `${server.url}/v1` }, { providers: { openai: { apiKey: 'from-config', maxRetries: 0 } } });
    await collect(r.provider, request(r.model));
    assert.equal(server.requests.at(-1)!.headers.authorization, 'Bearer from-config');
  });

  test('the environment key wins over the config key', async () => {
    server.enqueue({ sse: fixture('openai-responses-text.sse') });
    const r = resolveModel('openai/gpt-5', { OPENAI_API_KEY: 'from-env', OPENAI_BASE_URL: `${server.url}/v1` }, { providers: { openai: { apiKey: 'from-config' } } });
    await collect(r.provider, request(r.model));
    assert.equal(server.requests.at(-1)!.headers.authorization, 'Bearer from-env');
  });

  test('ANTHROPIC_BASE_URL and GOOGLE_GEMINI_BASE_URL are honoured', async () => {
    server.enqueue({ sse: fixture('anthropic-text.sse') }, { sse: fixture('google-text.sse') });
    const env = { ANTHROPIC_API_KEY: 'ak', ANTHROPIC_BASE_URL: server.url, GEMINI_API_KEY: 'gk', GOOGLE_GEMINI_BASE_URL: server.url };
    const a = resolveModel('anthropic/claude-haiku-4-5', env, {});
    await collect(a.provider, request(a.model));
    assert.equal(server.requests.at(-1)!.url, '/v1/messages');
    const g = resolveModel('google/gemini-2.5-flash', env, {});
    await collect(g.provider, request(g.model));
    assert.match(server.requests.at(-1)!.url, /gemini-2\.5-flash:streamGenerateContent/);
    assert.equal(server.requests.at(-1)!.headers['x-goog-api-key'], 'gk');
  });

  test('openai-compatible uses OPENAI_BASE_URL when the config names no server', async () => {
    server.enqueue({ sse: fixture('openai-chat-text.sse') });
    const r = resolveModel('openai-compatible/llama3.2', { OPENAI_BASE_URL: `${server.url}/v1` }, {});
    await collect(r.provider, request(r.model));
    assert.equal(server.requests.at(-1)!.url, '/v1/chat/completions');
    assert.equal(server.requests.at(-1)!.body.model, 'llama3.2');
  });
});

describe('loadConfig', () => {
  test('the path follows XDG_CONFIG_HOME, else ~/.config', () => {
    assert.equal(configPath({ XDG_CONFIG_HOME: '/x' }), '/x/troupe/config.json');
    assert.equal(configPath({ HOME: '/home/u' }), '/home/u/.config/troupe/config.json');
  });

  test('a missing file is an empty config', () => {
    assert.deepEqual(loadConfig(envWithConfig()), {});
  });

  test('a valid file is read, and remembers where it came from', () => {
    const env = envWithConfig(JSON.stringify({ model: 'google/gemini-2.5-pro', providers: { google: { apiKey: 'g', maxRetries: 1 } }, other: { kept: true } }));
    const config = loadConfig(env);
    assert.equal(config.model, 'google/gemini-2.5-pro');
    assert.equal(config.providers?.google?.maxRetries, 1);
    assert.equal(config.source, configPath(env));
    assert.equal(defaultModel({}, config), 'google/gemini-2.5-pro');
  });

  test('malformed JSON is a clear invalid_params error naming the file', () => {
    const env = envWithConfig('{ "model": "anthropic/x", }');
    assert.throws(() => loadConfig(env), (err) => isTroupeError(err, 'invalid_params') && err.message.includes(configPath(env)) && /not valid JSON/.test(err.message));
  });

  test('wrong provider settings are an error that says which field', () => {
    const env = envWithConfig(JSON.stringify({ providers: { openai: { maxRetries: 'three' } } }));
    assert.throws(() => loadConfig(env), (err) => isTroupeError(err, 'invalid_params') && err.message.includes('providers.openai.maxRetries'));
    const typo = envWithConfig(JSON.stringify({ providers: { antropic: { apiKey: 'k' } } }));
    assert.throws(() => loadConfig(typo), (err) => isTroupeError(err, 'invalid_params') && err.message.includes('antropic'));
  });

  test('a models entry whose maxOutputTokens is not below its contextWindow is refused as the file is read, naming both numbers', () => {
    const env = envWithConfig(JSON.stringify({ providers: { 'openai-compatible': { models: { 'qwen3:8b': { contextWindow: 8192, maxOutputTokens: 8192 } } } } }));
    assert.throws(
      () => loadConfig(env),
      (err) => isTroupeError(err, 'invalid_params') && err.message === `the troupe config ${configPath(env)} is not valid: providers.openai-compatible.models.qwen3:8b.maxOutputTokens: 8192 is not below contextWindow (8192), which leaves no room for any input`,
    );
    const below = envWithConfig(JSON.stringify({ providers: { 'openai-compatible': { models: { 'qwen3:8b': { contextWindow: 8192, maxOutputTokens: 8191 } } } } }));
    assert.equal(loadConfig(below).providers?.['openai-compatible']?.models?.['qwen3:8b']?.maxOutputTokens, 8191);
  });

  test('streamIdleTimeoutMs is read per provider (0 allowed), and a value no timer can hold is refused', () => {
    const env = envWithConfig(JSON.stringify({ providers: { anthropic: { streamIdleTimeoutMs: 0 }, 'openai-compatible': { baseUrl: 'http://127.0.0.1:11434/v1', streamIdleTimeoutMs: 900000 } } }));
    const config = loadConfig(env);
    assert.equal(settingsFor('anthropic', {}, config).streamIdleTimeoutMs, 0);
    assert.equal(settingsFor('openai-compatible', {}, config).streamIdleTimeoutMs, 900_000);
    assert.equal(settingsFor('google', {}, config).streamIdleTimeoutMs, undefined, 'unset: the adapter default applies');
    // setTimeout fires at once for a delay over 2^31-1 ms, which would turn every call into a stall.
    for (const bad of [-1, 2 ** 31, 1.5]) {
      const wrong = envWithConfig(JSON.stringify({ providers: { google: { streamIdleTimeoutMs: bad } } }));
      assert.throws(() => loadConfig(wrong), (err) => isTroupeError(err, 'invalid_params') && err.message.includes('providers.google.streamIdleTimeoutMs'), String(bad));
    }
    // The same holds for the SDKs' own timeout.
    const tooLong = envWithConfig(JSON.stringify({ providers: { anthropic: { timeoutMs: 2 ** 31 } } }));
    assert.throws(() => loadConfig(tooLong), (err) => isTroupeError(err, 'invalid_params') && err.message.includes('providers.anthropic.timeoutMs'));
    assert.equal(settingsFor('anthropic', {}, loadConfig(envWithConfig(JSON.stringify({ providers: { anthropic: { timeoutMs: 2 ** 31 - 1 } } })))).timeoutMs, 2 ** 31 - 1);
  });
});

describe('thinkingBudget', () => {
  test('is read per provider, reaches the resolved model, and is refused where it would do nothing', () => {
    const env = envWithConfig(JSON.stringify({ providers: { anthropic: { thinkingBudget: 8000 }, google: { thinkingBudget: 0 } } }));
    const config = loadConfig(env);
    assert.equal(resolveModel('anthropic/claude-sonnet-4-6', { ANTHROPIC_API_KEY: 'a' }, config).thinkingBudget, 8000);
    assert.equal(resolveModel('google/gemini-2.5-pro', { GEMINI_API_KEY: 'g' }, config).thinkingBudget, undefined, '0 asks for none');
    assert.equal(resolveModel('openai/gpt-5', { OPENAI_API_KEY: 'o' }, config).thinkingBudget, undefined, 'unset: none');
    for (const bad of [-1, 1.5, '8000']) {
      const wrong = envWithConfig(JSON.stringify({ providers: { openai: { thinkingBudget: bad } } }));
      assert.throws(() => loadConfig(wrong), (err) => isTroupeError(err, 'invalid_params') && err.message.includes('providers.openai.thinkingBudget'), String(bad));
    }
    // Chat Completions servers have no common thinking budget: the key would be silently ignored.
    const compatible = envWithConfig(JSON.stringify({ providers: { 'openai-compatible': { baseUrl: 'http://127.0.0.1:11434/v1', thinkingBudget: 8000 } } }));
    assert.throws(() => loadConfig(compatible), (err) => isTroupeError(err, 'invalid_params') && err.message.includes('openai-compatible') && err.message.includes('thinkingBudget'));
  });
});

class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    this.text += chunk.toString();
    done();
  }
}

describe('troupe models', () => {
  test('--json lists every provider, its usability and models, and never a key', async () => {
    const env = envWithConfig(JSON.stringify({ providers: { 'openai-compatible': { baseUrl: 'http://127.0.0.1:11434/v1', models: { 'qwen3:8b': { contextWindow: 40960 } } } } }), {
      ANTHROPIC_API_KEY: 'sk-ant-secret-value',
    });
    const stdout = new Capture();
    const stderr = new Capture();
    assert.equal(await modelsCommand(['--json'], { stdout, stderr, env }), 0);
    assert.equal(stderr.text, '');
    assert.ok(!stdout.text.includes('sk-ant-secret-value'));
    const doc = JSON.parse(stdout.text);
    assert.equal(doc.defaultModel, 'anthropic/claude-sonnet-5-5');
    assert.equal(doc.defaultModelSource, 'credential');
    assert.equal(doc.configFile, configPath(env));
    assert.deepEqual(doc.providers.map((p: { id: string }) => p.id), ['anthropic', 'openai', 'google', 'openai-compatible', 'scripted']);
    const byId = Object.fromEntries(doc.providers.map((p: { id: string }) => [p.id, p]));
    assert.equal(byId.anthropic.usable, true);
    assert.deepEqual(byId.anthropic.credential, { kind: 'env', name: 'ANTHROPIC_API_KEY' });
    assert.equal(byId.openai.usable, false);
    assert.equal(byId.google.usable, false);
    assert.equal(byId['openai-compatible'].usable, true);
    assert.deepEqual(byId['openai-compatible'].models.map((m: { id: string }) => m.id), ['openai-compatible/qwen3:8b']);
    assert.equal(byId['openai-compatible'].models[0].capabilities.contextWindow, 40960);
    assert.ok(byId.scripted.models.some((m: { id: string; default: boolean }) => m.id === 'scripted/demo' && m.default));
    const sonnet = byId.anthropic.models.find((m: { id: string }) => m.id === 'anthropic/claude-sonnet-5-5');
    assert.deepEqual(sonnet.capabilities.pricing, { input: 2, output: 10, cacheRead: 0.2, cacheWrite: 2.5 });
    for (const id of ['anthropic/claude-sonnet-4-6', 'anthropic/claude-opus-4-6', 'anthropic/claude-haiku-4-5', 'openai/gpt-5', 'openai/gpt-5-mini', 'openai/gpt-4.1', 'openai/o4-mini', 'google/gemini-2.5-pro', 'google/gemini-2.5-flash']) {
      assert.ok(doc.providers.some((p: { models: { id: string }[] }) => p.models.some((m) => m.id === id)), `${id} is in the catalogue`);
    }
    // Retired by Anthropic (the SDK's deprecation data: claude-sonnet-4-5 end of life 2026-11-30; the
    // others removed from its model list as retired): not offered.
    for (const id of RETIRED) {
      assert.ok(!doc.providers.some((p: { models: { id: string }[] }) => p.models.some((m) => m.id === id)), `${id} is not in the catalogue`);
    }
  });

  test('the table names the default model and how to enable a provider', async () => {
    const stdout = new Capture();
    assert.equal(await modelsCommand([], { stdout, stderr: new Capture(), env: envWithConfig() }), 0);
    assert.match(stdout.text, /^Default model: scripted\/demo \(offline demo model: no API key found\)/);
    assert.match(stdout.text, /openai .*not configured: set OPENAI_API_KEY/);
  });

  test('a default model no session can be made with is said so, in the table and in --json', async () => {
    const env = envWithConfig(undefined, { TROUPE_MODEL: 'scripted/nope' });
    const stdout = new Capture();
    assert.equal(await modelsCommand([], { stdout, stderr: new Capture(), env }), 0);
    assert.match(stdout.text, /^Default model: scripted\/nope \(from TROUPE_MODEL\): cannot be used: scripted has no model 'nope': its models are scripted\/demo, scripted\/replay\n/);
    const json = new Capture();
    assert.equal(await modelsCommand(['--json'], { stdout: json, stderr: new Capture(), env: envWithConfig(undefined, { TROUPE_MODEL: 'openai/ gpt-4o' }) }), 0);
    assert.match(JSON.parse(json.text).defaultModelProblem, /^model id "openai\/ gpt-4o" has a space in it/);
    const fine = new Capture();
    assert.equal(await modelsCommand(['--json'], { stdout: fine, stderr: new Capture(), env: envWithConfig() }), 0);
    assert.equal(JSON.parse(fine.text).defaultModelProblem, null);
  });

  test('a malformed config file exits 1 with the reason on stderr; a bad argument exits 2', async () => {
    const stdout = new Capture();
    const stderr = new Capture();
    assert.equal(await modelsCommand(['--json'], { stdout, stderr, env: envWithConfig('not json') }), 1);
    assert.equal(stdout.text, '');
    assert.match(stderr.text, /not valid JSON/);
    assert.equal(await modelsCommand(['--yaml'], { stdout, stderr: new Capture(), env: envWithConfig() }), 2);
  });

  test('CREDENTIAL_ENV_VARS (withheld from commands) names every variable a credential is read from', () => {
    // Every provider, offered every upper-case variable name that looks like a credential: each one a
    // provider takes must be in the list.
    const candidates = ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'OPENAI_API_KEY', 'GEMINI_API_KEY', 'GOOGLE_API_KEY', 'GOOGLE_GENAI_API_KEY', 'OPENAI_COMPATIBLE_API_KEY', 'AZURE_OPENAI_API_KEY'];
    const taken = new Set<string>();
    for (const provider of ['anthropic', 'openai', 'google', 'openai-compatible', 'scripted']) {
      for (const name of candidates) {
        const s = settingsFor(provider, { [name]: `value-of-${name}`, OPENAI_BASE_URL: 'http://127.0.0.1:1' }, {});
        if (s.apiKey === `value-of-${name}` || s.authToken === `value-of-${name}`) taken.add(name);
      }
    }
    assert.deepEqual([...taken].sort(), [...CREDENTIAL_ENV_VARS].sort());
  });

  test('providerStatus reports config-file credentials as such', () => {
    const status = providerStatus({}, { providers: { google: { apiKey: 'k' } } });
    const google = status.find((p) => p.id === 'google')!;
    assert.equal(google.usable, true);
    assert.deepEqual(google.credential, { kind: 'config' });
  });
});
