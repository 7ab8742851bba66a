/**
 * Gemini model catalogue. Prices are USD per million tokens from the Gemini API pricing page for
 * prompts up to 200k tokens (longer prompts cost more on the Pro models; troupe prices the base
 * tier). Cache reads are implicit-cache hits.
 */
import type { ModelCapabilities } from '../../core/provider.js';

/** One catalogue row: a model id (without the `google/` prefix) and what it can do. */
export interface GoogleModel extends ModelCapabilities {
  id: string;
  /** The model troupe picks when only a Gemini key is present. */
  default?: boolean;
  /** The `thinkingBudget` the model takes, from Gemini's thinking guide; another is a 400 on every turn. */
  thinkingRange?: { min: number; max: number };
}

const gemini = (id: string, maxOutputTokens: number, thinking: boolean, [input, output, cacheRead]: [number, number, number], extra: Partial<GoogleModel> = {}): GoogleModel => ({
  id,
  contextWindow: 1_048_576,
  maxOutputTokens,
  tools: true,
  thinking,
  images: true,
  pricing: { input, output, cacheRead },
  ...extra,
});

export const GOOGLE_MODELS: readonly GoogleModel[] = [
  gemini('gemini-2.5-pro', 65_536, true, [1.25, 10, 0.125], { default: true, thinkingRange: { min: 128, max: 32_768 } }),
  gemini('gemini-2.5-flash', 65_536, true, [0.3, 2.5, 0.03], { thinkingRange: { min: 0, max: 24_576 } }),
  gemini('gemini-2.5-flash-lite', 65_536, true, [0.1, 0.4, 0.01], { thinkingRange: { min: 512, max: 24_576 } }),
  gemini('gemini-2.0-flash', 8_192, false, [0.1, 0.4, 0.025]),
];

/** Capabilities assumed for a Gemini model the catalogue does not know. */
export const GOOGLE_FALLBACK: ModelCapabilities = { contextWindow: 1_048_576, maxOutputTokens: 8_192, tools: true, thinking: false, images: true };

/** The suffix of a versioned or aliased id (`gemini-2.0-flash-001`, `gemini-2.5-pro-latest`). */
const SNAPSHOT = /^-(\d{3}|latest)$/;

export function findGoogleModel(model: string): GoogleModel | undefined {
  const bare = model.replace(/^models\//, '');
  return GOOGLE_MODELS.find((r) => bare === r.id || (bare.startsWith(r.id) && SNAPSHOT.test(bare.slice(r.id.length))));
}

export function googleCapabilities(model: string): ModelCapabilities {
  const found = findGoogleModel(model);
  if (!found) return { ...GOOGLE_FALLBACK };
  const { id: _id, default: _d, thinkingRange: _r, ...caps } = found;
  return caps;
}

/**
 * The thinking budget asked of `model`: the config's one budget (`providers.google.thinkingBudget`,
 * for every Gemini model) fitted to the model's range where the catalogue knows it, as the Anthropic
 * adapter fits its budget to the API's rules. A model the catalogue does not know gets it as it is.
 */
export function fitThinkingBudget(model: string, budget: number): number {
  const range = findGoogleModel(model)?.thinkingRange;
  return range ? Math.min(range.max, Math.max(range.min, budget)) : budget;
}
