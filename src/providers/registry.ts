/**
 * Model selection: `provider/model` ids → a ModelProvider, the default model, and which providers
 * are usable with the credentials present. The only file that knows every vendor.
 */
import { TroupeError } from '../core/errors.js';
import type { ModelCapabilities, ModelProvider } from '../core/provider.js';
import { anthropicCapabilities, ANTHROPIC_MODELS } from './anthropic/models.js';
import { googleCapabilities, GOOGLE_MODELS } from './google/models.js';
import { compatibleCapabilities, openaiCapabilities, OPENAI_MODELS } from './openai/models.js';
import { createScriptedProvider, SCRIPTED_MODELS } from './scripted/scripted.provider.js';
import { settingsFor, type CredentialSource, type ProviderSettings, type TroupeConfig } from './config.js';
import { lazyProvider } from './lazy-provider.js';
import { KEY_NAMES, refusedKeyExplainer } from './refused-key.js';

/** Provider ids in the order troupe prefers them when several have credentials. */
export const PROVIDER_IDS = ['anthropic', 'openai', 'google', 'openai-compatible', 'scripted'] as const;
export type ProviderId = (typeof PROVIDER_IDS)[number];

/** Providers whose key picks the default model, in this order (DESIGN §5). */
const KEYED_DEFAULT_ORDER: ProviderId[] = ['anthropic', 'openai', 'google'];
const OFFLINE_MODEL = 'scripted/demo';

interface Entry {
  label: string;
  create(env: NodeJS.ProcessEnv, config: TroupeConfig): ModelProvider;
  /** Catalogue model names; `default` marks the one used when this provider picks the default. */
  catalogue(env: NodeJS.ProcessEnv, config: TroupeConfig): readonly { id: string; default?: boolean }[];
  /** Usable without any credential (the scripted models). */
  keyless?: boolean;
  /** Its catalogue is every model it has (no vendor behind it to ask for another): scripted. */
  closed?: boolean;
  /** Why one of its models cannot work in this environment although the provider can, or undefined. */
  unusable?(model: string, env: NodeJS.ProcessEnv): string | undefined;
}

/** The catalogue's capabilities with the config's overrides, as each adapter computes them. */
const withOverrides = (base: (model: string) => ModelCapabilities, settings: ProviderSettings) => (model: string) => ({
  ...base(model),
  ...(settings.models?.[model] ?? {}),
});

// Vendor SDKs cost 0.1–0.2 s each to load: an adapter (and its SDK) is imported on its first call,
// so a `troupe acp` process loads only the SDK of the model it actually uses.
const ENTRIES: Record<ProviderId, Entry> = {
  anthropic: {
    label: 'Anthropic (Messages API)',
    create: (env, config) => {
      const settings = settingsFor('anthropic', env, config);
      const explain = refusedKeyExplainer(KEY_NAMES.anthropic, settings.keyFrom);
      return lazyProvider('anthropic', withOverrides(anthropicCapabilities, settings), true, async () => new (await import('./anthropic/anthropic.provider.js')).AnthropicProvider(settings), explain);
    },
    catalogue: () => ANTHROPIC_MODELS,
  },
  openai: {
    label: 'OpenAI (Responses API)',
    create: (env, config) => {
      const settings = settingsFor('openai', env, config);
      const explain = refusedKeyExplainer(KEY_NAMES.openai, settings.keyFrom);
      return lazyProvider('openai', withOverrides(openaiCapabilities, settings), true, async () => new (await import('./openai/openai-responses.provider.js')).OpenAIResponsesProvider(settings), explain);
    },
    catalogue: () => OPENAI_MODELS,
  },
  google: {
    label: 'Google Gemini',
    create: (env, config) => {
      const settings = settingsFor('google', env, config);
      const explain = refusedKeyExplainer(KEY_NAMES.google, settings.keyFrom);
      return lazyProvider('google', withOverrides(googleCapabilities, settings), true, async () => new (await import('./google/google.provider.js')).GoogleProvider(settings), explain);
    },
    catalogue: () => GOOGLE_MODELS,
  },
  'openai-compatible': {
    label: 'OpenAI-compatible server (Chat Completions)',
    create: (env, config) => {
      const settings = settingsFor('openai-compatible', env, config);
      const explain = refusedKeyExplainer(KEY_NAMES['openai-compatible'], settings.keyFrom);
      return lazyProvider('openai-compatible', (model) => compatibleCapabilities(settings.models?.[model]), false, async () => new (await import('./openai/openai-chat.provider.js')).OpenAIChatProvider(settings), explain);
    },
    catalogue: (env, config) => Object.keys(settingsFor('openai-compatible', env, config).models ?? {}).map((id) => ({ id })),
  },
  // The offline provider lives in src/providers/scripted/ (another engineer's); it is reached only through here.
  scripted: {
    label: 'Scripted (offline, no AI)',
    create: (env) => createScriptedProvider({ env }),
    catalogue: () => SCRIPTED_MODELS.map((id) => ({ id, default: id === 'demo' })),
    keyless: true,
    closed: true,
    // Without a script every turn would fail: not offered, and refused when asked for.
    unusable: (model, env) => (model === 'replay' && !env.TROUPE_SCRIPT ? 'scripted/replay needs a script: set TROUPE_SCRIPT to a JSON script file' : undefined),
  },
};

/**
 * Providers already built for an (env, config) pair. Adapters hold SDK clients (connection pools)
 * and the scripted provider holds its replay position, so resolving the same model again with the
 * same env and config objects must return the same instance.
 */
const built = new WeakMap<NodeJS.ProcessEnv, WeakMap<TroupeConfig, Map<ProviderId, ModelProvider>>>();

function providerFor(id: ProviderId, env: NodeJS.ProcessEnv, config: TroupeConfig): ModelProvider {
  let byConfig = built.get(env);
  if (!byConfig) built.set(env, (byConfig = new WeakMap()));
  let byId = byConfig.get(config);
  if (!byId) byConfig.set(config, (byId = new Map()));
  let provider = byId.get(id);
  if (!provider) byId.set(id, (provider = ENTRIES[id].create(env, config)));
  return provider;
}

export interface ResolvedModel {
  /** The full id, `provider/model`. */
  id: string;
  provider: ModelProvider;
  /** The model name the provider is asked for (no prefix). */
  model: string;
  capabilities: ModelCapabilities;
  /** `providers.<id>.thinkingBudget` from the config, when set above 0: what a turn asks a thinking model for. */
  thinkingBudget?: number;
}

/** Splits `provider/model`; the model part may itself contain slashes (`openai-compatible/org/model`). */
export function parseModelId(modelId: string): { provider: string; model: string } | undefined {
  const slash = modelId.indexOf('/');
  if (slash <= 0 || slash === modelId.length - 1) return undefined;
  return { provider: modelId.slice(0, slash), model: modelId.slice(slash + 1) };
}

function isProviderId(id: string): id is ProviderId {
  return (PROVIDER_IDS as readonly string[]).includes(id);
}

/**
 * The provider and capabilities for a model id. Unknown models of a known provider work with that
 * provider's conservative defaults; an unknown provider is TroupeError('model_not_found'). The same
 * env and config objects give the same provider instance (see `built`).
 */
export function resolveModel(modelId: string, env: NodeJS.ProcessEnv, config: TroupeConfig): ResolvedModel {
  const parsed = parseModelId(modelId.trim());
  if (!parsed || !isProviderId(parsed.provider)) {
    const known = PROVIDER_IDS.map((p) => `${p}/…`).join(', ');
    throw new TroupeError('model_not_found', `no provider serves '${modelId}': model ids look like provider/model (${known})`, { modelId });
  }
  const provider = providerFor(parsed.provider, env, config);
  // Config overrides (providers.<id>.models) are applied by the provider itself, so the engine and
  // the adapter always agree on a model's limits.
  const { thinkingBudget } = settingsFor(parsed.provider, env, config);
  return {
    id: `${parsed.provider}/${parsed.model}`,
    provider,
    model: parsed.model,
    capabilities: roomyCapabilities(parsed.provider, provider, parsed.model),
    ...(thinkingBudget ? { thinkingBudget } : {}),
  };
}

/**
 * A model's capabilities, refused (invalid_params, naming both numbers) when its output limit leaves
 * no room in its window for any input: where that window is the server's own, every request asks for
 * more than it holds, refused whatever the prompt (a context_overflow no compaction cures); where it
 * is set below the vendor's, troupe's sizing of requests has no room for the output asked. The config's
 * `models` can say so (`maxOutputTokens` 8192 for a `contextWindow` of 8192), in one entry (refused
 * as the config is read, too) or across a catalogue row and an override; until 2026-12-07 it was
 * taken, and every turn failed. Said as a session is made with the model or switched to it, as the
 * agent starts with it as the default, and by `troupe models`. Not the scripted models: they ask no
 * vendor and ignore the limit, and a script's tiny window (200 tokens, to drive compaction) keeps
 * their 8,192-token output limit (spec/scripted-model.md).
 */
function roomyCapabilities(providerId: ProviderId, provider: ModelProvider, model: string): ModelCapabilities {
  const capabilities = provider.capabilities(model);
  const { contextWindow, maxOutputTokens } = capabilities;
  if (maxOutputTokens < contextWindow || providerId === 'scripted') return capabilities;
  const modelId = `${providerId}/${model}`;
  throw new TroupeError('invalid_params', `${modelId} cannot serve a turn: its maxOutputTokens (${maxOutputTokens}) is not below its contextWindow (${contextWindow}), which leaves no room for any input; lower maxOutputTokens (or raise contextWindow) in providers.${providerId}.models of the troupe config`, { modelId, maxOutputTokens, contextWindow });
}

/** Why the default model is what it is, for messages such as "using scripted/demo (no API key found)". */
export type DefaultModelSource = 'TROUPE_MODEL' | 'config' | 'credential' | 'offline';

/**
 * The model a session gets when none is named: TROUPE_MODEL, then the config's `model`, then the
 * catalogue default of the first provider with a credential (anthropic, openai, google), then the
 * offline `scripted/demo`.
 */
export function defaultModel(env: NodeJS.ProcessEnv, config: TroupeConfig): string {
  return chooseDefaultModel(env, config).modelId;
}

export function chooseDefaultModel(env: NodeJS.ProcessEnv, config: TroupeConfig): { modelId: string; source: DefaultModelSource } {
  const fromEnv = env.TROUPE_MODEL?.trim();
  if (fromEnv) return { modelId: fromEnv, source: 'TROUPE_MODEL' };
  if (config.model?.trim()) return { modelId: config.model.trim(), source: 'config' };
  for (const id of KEYED_DEFAULT_ORDER) {
    if (settingsFor(id, env, config).credential.kind === 'none') continue;
    const row = ENTRIES[id].catalogue(env, config).find((m) => m.default);
    if (row) return { modelId: `${id}/${row.id}`, source: 'credential' };
  }
  return { modelId: OFFLINE_MODEL, source: 'offline' };
}

export interface ProviderStatus {
  id: ProviderId;
  label: string;
  /** Whether a model call can be made: a credential (or, for openai-compatible, a base URL) is present. */
  usable: boolean;
  /** Where the credential came from; never the credential itself. */
  credential: CredentialSource;
  /** Base URL in use when one is configured (the vendor default otherwise). */
  baseURL?: string;
  models: { id: string; model: string; default: boolean; capabilities?: ModelCapabilities; /** Why capabilities are missing (e.g. an unreadable TROUPE_SCRIPT). */ problem?: string }[];
}

/** Every provider, whether it is usable with the credentials present, and its catalogue. */
export function providerStatus(env: NodeJS.ProcessEnv, config: TroupeConfig): ProviderStatus[] {
  return PROVIDER_IDS.map((id) => {
    const entry = ENTRIES[id];
    const settings = settingsFor(id, env, config);
    const provider = providerFor(id, env, config);
    const models = entry.catalogue(env, config).map((row) => {
      const listing = { id: `${id}/${row.id}`, model: row.id, default: row.default === true };
      try {
        return { ...listing, capabilities: roomyCapabilities(id, provider, row.id) };
      } catch (err) {
        return { ...listing, problem: err instanceof Error ? err.message : String(err) };
      }
    });
    return {
      id,
      label: entry.label,
      usable: entry.keyless === true || settings.credential.kind !== 'none',
      credential: settings.credential,
      ...(settings.baseURL ? { baseURL: settings.baseURL } : {}),
      models,
    };
  });
}

/** How to give a provider its credential, for people. */
export const CREDENTIAL_HINTS: Readonly<Record<string, string>> = {
  anthropic: 'set ANTHROPIC_API_KEY',
  openai: 'set OPENAI_API_KEY',
  google: 'set GEMINI_API_KEY',
  'openai-compatible': 'set OPENAI_BASE_URL or providers["openai-compatible"].baseUrl',
};

/**
 * Why a model cannot be used at all in this process (its provider has no credential: the env and
 * the config file are read once), or undefined. Unknown models are resolveModel's to refuse.
 */
export function missingCredential(modelId: string, env: NodeJS.ProcessEnv, config: TroupeConfig): string | undefined {
  const parsed = parseModelId(modelId);
  const provider = parsed?.provider;
  if (!provider || !isProviderId(provider)) return undefined;
  const unusable = ENTRIES[provider].unusable?.(parsed!.model, env);
  if (unusable) return `${unusable}, then start the agent again`;
  if (ENTRIES[provider].keyless === true) return undefined;
  if (settingsFor(provider, env, config).credential.kind !== 'none') return undefined;
  return `${provider} has no credential here: ${CREDENTIAL_HINTS[provider] ?? 'configure it'} where the agent starts (or in the config file), then start the agent again`;
}

/**
 * Why `modelId` is no model id at all, whatever its provider: whitespace around it or in it, or a
 * control character; undefined when it is none of these. No vendor names a model with a space, and
 * an id pasted from a web page may carry a no-break space that looks like one: until 2026-12-07 an
 * id with one inside (`openai/ gpt-4o`, `anthropic/claude x`) was taken, and went to the vendor.
 */
function malformedModelId(modelId: string): string | undefined {
  if (modelId !== modelId.trim()) return `model id ${JSON.stringify(modelId)} has spaces around it; model ids look like provider/model`;
  const odd = /[\s\p{Cc}]/u.exec(modelId)?.[0];
  if (odd === undefined) return undefined;
  const what = odd === ' ' ? 'a space' : `the character U+${odd.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
  return `model id ${JSON.stringify(modelId)} has ${what} in it; model ids look like provider/model, with no spaces`;
}

/**
 * Refuses a model id a session is switched to (`session/set_config_option`, `/model`, `troupe run
 * --model`) or made with (the default model, usableDefaultModel) that no turn could ever use,
 * before it becomes the session's model: an id with spaces around it or in it, or a control character
 * (invalid_params: kept as given, `scripted/demo ` showed as a choice of its own), one of no known
 * provider (resolveModel's model_not_found), or one a provider whose catalogue is all it has (scripted)
 * does not have (model_not_found, naming its models: until 2026-12-07 `scripted/nope` was taken, and
 * every later turn failed). Any other id of a known provider goes to its vendor as it is, as
 * docs/providers.md promises (dated snapshots, models newer than the catalogue).
 */
export function assertKnownModel(modelId: string, env: NodeJS.ProcessEnv, config: TroupeConfig): void {
  const malformed = malformedModelId(modelId);
  if (malformed) throw new TroupeError('invalid_params', malformed, { modelId });
  const { id, model } = resolveModel(modelId, env, config);
  const provider = id.slice(0, id.length - model.length - 1) as ProviderId;
  const entry = ENTRIES[provider];
  if (!entry.closed) return;
  const models = entry.catalogue(env, config).map((row) => `${provider}/${row.id}`);
  if (!models.includes(id)) throw new TroupeError('model_not_found', `${provider} has no model '${model}': its models are ${models.join(', ')}`, { modelId });
}

/**
 * The default model (chooseDefaultModel) for a new session, refused as a switch to it would be
 * (assertKnownModel), with where it came from and what to do: until 2026-12-07 `TROUPE_MODEL=scripted/nope`
 * made sessions whose every turn failed model_not_found. A session that names its own model (a fork,
 * one opened from its log) keeps it, whatever it is, and is never checked here.
 */
export function usableDefaultModel(env: NodeJS.ProcessEnv, config: TroupeConfig): string {
  const chosen = chooseDefaultModel(env, config);
  const problem = problemOf(chosen, env, config);
  if (problem) throw problem;
  return chosen.modelId;
}

/**
 * Why the default model cannot serve a turn, as the error a new session is refused with (the code of
 * assertKnownModel's), or undefined; throws what else resolving it throws (a TROUPE_SCRIPT that
 * cannot be read). Said at the start of `troupe acp` and `troupe serve`, and by
 * `troupe acp --check`. Only TROUPE_MODEL and the config's `model` can name such a model: a default
 * from a key or the offline one is a catalogue model.
 */
export function defaultModelProblem(env: NodeJS.ProcessEnv, config: TroupeConfig): TroupeError | undefined {
  return problemOf(chooseDefaultModel(env, config), env, config);
}

/** defaultModelProblem of a default already chosen (each caller chooses it once). */
function problemOf({ modelId, source }: { modelId: string; source: DefaultModelSource }, env: NodeJS.ProcessEnv, config: TroupeConfig): TroupeError | undefined {
  try {
    assertKnownModel(modelId, env, config);
    return undefined;
  } catch (err) {
    // Only the id's own refusals (they name it): a TROUPE_SCRIPT that cannot be read is the script's problem, told as it is.
    if (!(err instanceof TroupeError) || err.data.modelId !== modelId) throw err;
    const from = defaultSourceWords(source, config);
    const fix =
      source === 'TROUPE_MODEL'
        ? 'set TROUPE_MODEL to a model troupe serves (troupe models lists them), or unset it, where troupe starts, then start it again'
        : `change "model" in ${config.source ?? 'the config file'} to a model troupe serves (troupe models lists them), then start the agent again`;
    return new TroupeError(err.code, `the default model ${JSON.stringify(modelId)} (${from}) cannot be used: ${err.message}; ${fix}`, { modelId, source, reason: err.message });
  }
}

/**
 * What `troupe acp` and `troupe serve` say as they start about the default model, or undefined: that
 * new sessions are refused (defaultModelProblem), or that its provider has no credential here
 * (missingCredential: TROUPE_MODEL=openai/gpt-5 without OPENAI_API_KEY), whose turns all fail until
 * then. A session can still be made then, and switched to a usable model (`troupe run --model`,
 * an editor's model picker). Until 2026-12-07 neither was said: the first sign was a turn's failure.
 * Throws what resolving the default throws otherwise (a TROUPE_SCRIPT that cannot be read).
 */
export function defaultModelWarning(env: NodeJS.ProcessEnv, config: TroupeConfig): string | undefined {
  const chosen = chooseDefaultModel(env, config);
  const problem = problemOf(chosen, env, config);
  if (problem) return `${problem.message}; new sessions are refused until then`;
  const { modelId, source } = chosen;
  // A default troupe picks itself has a credential, or needs none.
  const missing = source === 'TROUPE_MODEL' || source === 'config' ? missingCredential(modelId, env, config) : undefined;
  return missing ? `the default model ${JSON.stringify(modelId)} (${defaultSourceWords(source, config)}) cannot be used here: ${missing}; every turn on it fails until then` : undefined;
}

/** Where a default model named by the user came from, for messages. */
function defaultSourceWords(source: DefaultModelSource, config: TroupeConfig): string {
  return source === 'TROUPE_MODEL' ? 'from TROUPE_MODEL' : `from "model" in ${config.source ?? 'the config file'}`;
}

/**
 * Model ids a client may pick: every usable provider's catalogue. The ids of providerStatus(), without
 * making each provider and asking it every model's capabilities (a `session/new` answer lists these).
 */
export function usableModels(env: NodeJS.ProcessEnv, config: TroupeConfig): { id: string }[] {
  return PROVIDER_IDS.flatMap((id) => {
    const entry = ENTRIES[id];
    const usable = entry.keyless === true || settingsFor(id, env, config).credential.kind !== 'none';
    return usable ? entry.catalogue(env, config).flatMap((row) => (entry.unusable?.(row.id, env) ? [] : [{ id: `${id}/${row.id}` }])) : [];
  });
}
