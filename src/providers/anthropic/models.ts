/**
 * Anthropic model catalogue. Prices are USD per million tokens from Anthropic's model pages
 * (platform.claude.com/docs/en/models/*): input, output, 5-minute cache write (1.25× input) and cache
 * read (0.1× input), checked November 2026. Models Anthropic has retired are left out: an id that is
 * not here gets the fallback below, and Anthropic's 404 ("model: <id>") ends its turn model_not_found.
 * Until 2026-12-06 the catalogue still listed claude-sonnet-4-5 (end of life 2026-11-30 in the SDK's
 * deprecation data), claude-opus-4-1, claude-opus-4 and claude-sonnet-4 (removed from the SDK's
 * model list as retired), so `troupe models` offered models no request could use.
 */
import type { ModelCapabilities } from '../../core/provider.js';

/** One catalogue row: a model id (without the `anthropic/` prefix) and what it can do. */
export interface AnthropicModel extends ModelCapabilities {
  id: string;
  /** The model troupe picks when only an Anthropic key is present. */
  default?: boolean;
  /**
   * How thinking is requested: `budget` sends `{type:"enabled", budget_tokens}`; `adaptive` models
   * (the 5.x generation) decide their own budget and take `{type:"adaptive"}`.
   */
  thinkingStyle?: 'budget' | 'adaptive';
}

const claude = (
  id: string,
  maxOutputTokens: number,
  input: number,
  output: number,
  extra: Partial<AnthropicModel> = {},
): AnthropicModel => ({
  id,
  contextWindow: 200_000,
  maxOutputTokens,
  tools: true,
  thinking: true,
  images: true,
  // Anthropic prices cache reads at 0.1× and 5-minute cache writes at 1.25× the input price.
  pricing: { input, output, cacheRead: round(input * 0.1), cacheWrite: round(input * 1.25) },
  ...extra,
});

/** The suffix of a dated snapshot or alias of a catalogue id. */
const SNAPSHOT = /^-(\d{8}|latest)$/;

function round(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}

const ADAPTIVE_1M: Partial<AnthropicModel> = { contextWindow: 1_000_000, thinkingStyle: 'adaptive' };

export const ANTHROPIC_MODELS: readonly AnthropicModel[] = [
  claude('claude-sonnet-5-5', 128_000, 2, 10, { ...ADAPTIVE_1M, default: true }),
  claude('claude-opus-5-5', 128_000, 4, 20, ADAPTIVE_1M),
  claude('claude-sonnet-5', 128_000, 2, 10, ADAPTIVE_1M),
  claude('claude-opus-5', 128_000, 5, 25, ADAPTIVE_1M),
  // Until 2026-12-06 the 4.6 models were asked for `budget_tokens`, which Anthropic deprecated on
  // them ("Use thinking.type: adaptive"; the SDK warns on stderr at every such request to Opus 4.6).
  claude('claude-opus-4-6', 128_000, 5, 25, ADAPTIVE_1M),
  claude('claude-sonnet-4-6', 128_000, 3, 15, ADAPTIVE_1M),
  // Deprecated: end of life 2027-01-22 (the SDK warns on stderr at each request).
  claude('claude-opus-4-5', 64_000, 5, 25),
  claude('claude-haiku-4-5', 64_000, 1, 5),
];

/** Capabilities assumed for an Anthropic model the catalogue does not know: every current Claude has 200k context. */
export const ANTHROPIC_FALLBACK: ModelCapabilities = {
  contextWindow: 200_000,
  maxOutputTokens: 8_192,
  tools: true,
  thinking: false,
  images: true,
};

/**
 * Capabilities of `model`. Dated snapshots (`claude-haiku-4-5-20251001`) and `-latest` aliases
 * resolve to their row; any other id gets the conservative fallback.
 */
export function anthropicCapabilities(model: string): ModelCapabilities {
  const row = findAnthropicModel(model);
  if (!row) return { ...ANTHROPIC_FALLBACK };
  const { id: _id, default: _d, thinkingStyle: _s, ...caps } = row;
  return caps;
}

/** The catalogue row for `model` (see anthropicCapabilities for the matching rule). */
export function findAnthropicModel(model: string): AnthropicModel | undefined {
  return ANTHROPIC_MODELS.find((row) => model === row.id || (model.startsWith(row.id) && SNAPSHOT.test(model.slice(row.id.length))));
}
