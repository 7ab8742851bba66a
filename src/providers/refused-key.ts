/**
 * A vendor's refusal of the credential (401/403, Gemini's API_KEY_INVALID), told with which key was
 * refused and where it came from. The vendors' own words do not say it ("invalid x-api-key", "API
 * key not valid. Please pass a valid API key.") and cannot: the key may come from the agent's
 * environment or from the config file, and the environment wins, so a stale `ANTHROPIC_API_KEY`
 * exported in a shell profile silently shadows the new key a person put in the config. Until
 * 2026-12-07 a turn ended `provider_auth` with the vendor's words alone.
 */
import { isProviderError, ProviderError } from '../core/provider.js';

/** Where the key sent came from (settingsFor's `keyFrom`); never the key itself. */
export type KeyOrigin = { kind: 'env'; name: string } | { kind: 'config'; file?: string } | { kind: 'none' };

/** How one provider names its key, for people. */
export interface KeyNames {
  /** Who refused it: `Anthropic`, `OpenAI`, `Gemini`, `The OpenAI-compatible server`. */
  vendor: string;
  /** The environment variable troupe reads the key from, e.g. `ANTHROPIC_API_KEY`. */
  envName: string;
  /** The config key, e.g. `providers.anthropic.apiKey`. */
  configKey: string;
  /** Whether a key in the environment wins over the config file's (all but openai-compatible). */
  envWins: boolean;
}

/**
 * `err` with troupe's account of an auth failure (ProviderError.explanation) when `err` is one and
 * the key's origin is known; any other error as it is. The vendor's words stay `vendorMessage`.
 */
export function explainRefusedKey(err: ProviderError, names: KeyNames, origin: KeyOrigin | undefined): ProviderError {
  // Only a refusal the vendor answered (it has a status): troupe's own "no Anthropic credential: set …"
  // was never sent, and says what to do already.
  if (err.kind !== 'auth' || err.status === undefined || err.explanation !== undefined || origin === undefined) return err;
  // "API key not valid. Please pass a valid API key." is followed by a sentence of troupe's.
  const said = err.vendorMessage.trim().replace(/[.\s]+$/, '');
  let explanation: string;
  if (origin.kind === 'env') {
    const otherwise = names.envWins
      ? `(or unset it: the environment wins over ${names.configKey} in the config file)`
      : `(or put one at ${names.configKey} in the config file, which wins over it)`;
    explanation =
      `${names.vendor} refused the key in ${origin.name}, from the agent's environment: ${said}. ` +
      `Set ${origin.name} to a valid key where the agent starts ${otherwise}, then start the agent again.`;
  } else if (origin.kind === 'config') {
    const file = origin.file ? ` (${origin.file})` : '';
    explanation =
      `${names.vendor} refused the key at ${names.configKey} in the troupe config file${file}: ${said}. ` +
      `Put a valid key there (or set ${names.envName} where the agent starts), then start the agent again.`;
  } else {
    explanation = `${names.vendor} refused the request, which carried no key: ${said}. Set ${names.envName} or ${names.configKey} to its key, then start the agent again.`;
  }
  return new ProviderError(err.kind, err.vendorMessage, { status: err.status, explanation });
}

/** The names of each keyed provider's key. */
export const KEY_NAMES = {
  anthropic: { vendor: 'Anthropic', envName: 'ANTHROPIC_API_KEY', configKey: 'providers.anthropic.apiKey', envWins: true },
  openai: { vendor: 'OpenAI', envName: 'OPENAI_API_KEY', configKey: 'providers.openai.apiKey', envWins: true },
  google: { vendor: 'Gemini', envName: 'GEMINI_API_KEY', configKey: 'providers.google.apiKey', envWins: true },
  'openai-compatible': { vendor: 'The OpenAI-compatible server', envName: 'OPENAI_API_KEY', configKey: 'providers["openai-compatible"].apiKey', envWins: false },
} satisfies Record<string, KeyNames>;

/**
 * What a provider's model call fails with, a refused key said with which key and where it came from
 * (lazyProvider's `explain`). Applied by the registry, which knows the settings; the adapters only
 * classify the vendor's answer.
 */
export function refusedKeyExplainer(names: KeyNames, origin: KeyOrigin): (err: unknown) => unknown {
  return (err) => (isProviderError(err) ? explainRefusedKey(err, names, origin) : err);
}
