/**
 * The troupe config file and provider settings. Each vendor SDK's own variables work unchanged
 * (ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL, OPENAI_API_KEY / OPENAI_BASE_URL, GEMINI_API_KEY /
 * GOOGLE_GEMINI_BASE_URL); the environment wins over `$XDG_CONFIG_HOME/troupe/config.json`.
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import * as z from 'zod';
import { TroupeError } from '../core/errors.js';
import { MAX_TIMER_MS } from '../core/option-values.js';
import type { KeyOrigin } from './refused-key.js';

const Capabilities = z
  .object({
    contextWindow: z.number().int().positive(),
    maxOutputTokens: z.number().int().positive(),
    tools: z.boolean(),
    thinking: z.boolean(),
    images: z.boolean(),
    pricing: z.object({ input: z.number().nonnegative(), output: z.number().nonnegative(), cacheRead: z.number().nonnegative().optional(), cacheWrite: z.number().nonnegative().optional() }),
  })
  .partial()
  .strict()
  // An output limit that fills the window leaves no room for input: no request could succeed
  // (registry.ts roomyCapabilities refuses it too where an override meets a catalogue row).
  .superRefine((c, ctx) => {
    if (c.contextWindow !== undefined && c.maxOutputTokens !== undefined && c.maxOutputTokens >= c.contextWindow) {
      ctx.addIssue({ code: 'custom', path: ['maxOutputTokens'], message: `${c.maxOutputTokens} is not below contextWindow (${c.contextWindow}), which leaves no room for any input` });
    }
  });

const ProviderSettings = z
  .object({
    apiKey: z.string().optional(),
    baseUrl: z.string().url().optional(),
    /** Retries of the one retrying layer (see each adapter). */
    maxRetries: z.number().int().min(0).max(10).optional(),
    /** Handed to the SDKs, whose timers (setTimeout) fire at once past 2^31-1 ms. */
    timeoutMs: z.number().int().positive().max(MAX_TIMER_MS).optional(),
    /** How long a model stream may send nothing before it counts as stalled (default 300000); 0 disables. */
    streamIdleTimeoutMs: z.number().int().min(0).max(MAX_TIMER_MS).optional(),
    /** Per-model capabilities: for OpenAI-compatible servers, or to correct the catalogue. */
    models: z.record(z.string(), Capabilities).optional(),
    /**
     * Tokens of thinking asked of the provider's thinking models on every turn (docs/providers.md,
     * "Thinking"); 0 or absent asks for none.
     */
    thinkingBudget: z.number().int().min(0).optional(),
  })
  .strict();

// Chat Completions has no thinking budget that the servers agree on; a key that would do nothing is refused.
const CompatibleSettings = ProviderSettings.omit({ thinkingBudget: true }).strict();

export const TroupeConfigSchema = z
  .object({
    /** The default model id, `provider/model`. */
    model: z.string().optional(),
    providers: z
      .object({ anthropic: ProviderSettings, openai: ProviderSettings, 'openai-compatible': CompatibleSettings, google: ProviderSettings })
      .partial()
      .strict()
      .optional(),
  })
  // Unknown top-level keys belong to other parts of troupe; the provider section is strict.
  .loose();

export type ProviderSettings = z.infer<typeof ProviderSettings>;
export type TroupeConfig = z.infer<typeof TroupeConfigSchema> & { /** Where it was read from, when a file existed. */ source?: string };

/** `$XDG_CONFIG_HOME/troupe/config.json`, default `~/.config/troupe/config.json`. */
export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  const base = nonEmpty(env.XDG_CONFIG_HOME) ?? join(nonEmpty(env.HOME) ?? homedir(), '.config');
  return join(base, 'troupe', 'config.json');
}

/**
 * Reads the config file. A missing file is an empty config; a file that is not JSON, or whose
 * provider settings are wrong, is a TroupeError('invalid_params') naming the file and the problem.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): TroupeConfig {
  const path = configPath(env);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new TroupeError('invalid_params', `cannot read the troupe config ${path}: ${(err as Error).message}`, { path });
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new TroupeError('invalid_params', `the troupe config ${path} is not valid JSON: ${(err as Error).message}`, { path });
  }
  const parsed = TroupeConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(top level)'}: ${i.message}`).join('; ');
    throw new TroupeError('invalid_params', `the troupe config ${path} is not valid: ${problems}`, { path });
  }
  return { ...parsed.data, source: path };
}

/** Where a provider's credential came from, for `troupe models` (never the credential itself). */
export type CredentialSource = { kind: 'env'; name: string } | { kind: 'config' } | { kind: 'none' };

export interface ResolvedSettings {
  apiKey?: string;
  /** Anthropic only: ANTHROPIC_AUTH_TOKEN, a bearer token for gateways. */
  authToken?: string;
  baseURL?: string;
  maxRetries?: number;
  timeoutMs?: number;
  streamIdleTimeoutMs?: number;
  models?: ProviderSettings['models'];
  thinkingBudget?: number;
  credential: CredentialSource;
  /** Where `apiKey` (or `authToken`) came from, named when the vendor refuses it (refused-key.ts). */
  keyFrom: KeyOrigin;
}

/**
 * Every environment variable settingsFor reads a credential from. The agent's own commands
 * (run_command on this machine) do not inherit them: spec/tools.md §run_command.
 */
export const CREDENTIAL_ENV_VARS: readonly string[] = ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'OPENAI_API_KEY', 'GEMINI_API_KEY', 'GOOGLE_API_KEY'];

/**
 * A provider's `models` overrides by the name its adapter is asked for: a key written as the model's
 * full id (`openai-compatible/qwen3:8b`, as TROUPE_MODEL names it) is taken for its name (`qwen3:8b`),
 * the key without the prefix winning field by field where both are given. Until 2026-12-07 such a key
 * was never matched, in silence: the model kept the fallback (a local model its 32,768-token window,
 * sized and compacted by it), and `troupe models` listed it as `openai-compatible/openai-compatible/…`.
 */
function modelsByName(provider: string, models: ProviderSettings['models']): ProviderSettings['models'] {
  if (!models) return models;
  const prefix = `${provider}/`;
  const byName: NonNullable<ProviderSettings['models']> = {};
  for (const [key, caps] of Object.entries(models)) if (key.startsWith(prefix) && key.length > prefix.length) byName[key.slice(prefix.length)] = caps;
  for (const [key, caps] of Object.entries(models)) if (!key.startsWith(prefix)) byName[key] = { ...byName[key], ...caps };
  return byName;
}

/** Settings for one provider id, environment first, then the config file. */
export function settingsFor(provider: string, env: NodeJS.ProcessEnv, config: TroupeConfig): ResolvedSettings {
  const file: ProviderSettings = (config.providers as Record<string, ProviderSettings | undefined> | undefined)?.[provider] ?? {};
  const common = { maxRetries: file.maxRetries, timeoutMs: file.timeoutMs, streamIdleTimeoutMs: file.streamIdleTimeoutMs, models: modelsByName(provider, file.models), thinkingBudget: file.thinkingBudget };
  const fromEnv = (...names: string[]) => {
    for (const name of names) {
      const value = nonEmpty(env[name]);
      if (value) return { value, name };
    }
    return undefined;
  };
  const inFile: KeyOrigin = { kind: 'config', ...(config.source ? { file: config.source } : {}) };
  const credential = (envKey: { value: string; name: string } | undefined, fileKey: string | undefined): Pick<ResolvedSettings, 'apiKey' | 'credential' | 'keyFrom'> =>
    envKey
      ? { apiKey: envKey.value, credential: { kind: 'env', name: envKey.name }, keyFrom: { kind: 'env', name: envKey.name } }
      : fileKey
        ? { apiKey: fileKey, credential: { kind: 'config' }, keyFrom: inFile }
        : { credential: { kind: 'none' }, keyFrom: { kind: 'none' } };
  switch (provider) {
    case 'anthropic': {
      const key = credential(fromEnv('ANTHROPIC_API_KEY'), nonEmpty(file.apiKey));
      const token = key.apiKey ? undefined : fromEnv('ANTHROPIC_AUTH_TOKEN');
      return {
        ...common,
        ...(token ? { authToken: token.value, credential: { kind: 'env', name: token.name }, keyFrom: { kind: 'env', name: token.name } } : key),
        baseURL: nonEmpty(env.ANTHROPIC_BASE_URL) ?? file.baseUrl,
      };
    }
    case 'openai':
      return { ...common, ...credential(fromEnv('OPENAI_API_KEY'), nonEmpty(file.apiKey)), baseURL: nonEmpty(env.OPENAI_BASE_URL) ?? file.baseUrl };
    case 'openai-compatible': {
      // A local server usually needs no key; its base URL is what makes it usable.
      const baseURL = file.baseUrl ?? nonEmpty(env.OPENAI_BASE_URL);
      const fileKey = nonEmpty(file.apiKey);
      const key = fileKey ?? nonEmpty(env.OPENAI_API_KEY);
      const keyFrom: KeyOrigin = fileKey ? inFile : key ? { kind: 'env', name: 'OPENAI_API_KEY' } : { kind: 'none' };
      return { ...common, apiKey: key, baseURL, credential: baseURL ? (file.baseUrl ? { kind: 'config' } : { kind: 'env', name: 'OPENAI_BASE_URL' }) : { kind: 'none' }, keyFrom };
    }
    case 'google':
      return { ...common, ...credential(fromEnv('GEMINI_API_KEY', 'GOOGLE_API_KEY'), nonEmpty(file.apiKey)), baseURL: nonEmpty(env.GOOGLE_GEMINI_BASE_URL) ?? file.baseUrl };
    default:
      return { ...common, credential: { kind: 'none' }, keyFrom: { kind: 'none' } };
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return value && value.trim() !== '' ? value.trim() : undefined;
}
