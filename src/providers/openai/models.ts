/**
 * OpenAI model catalogue. Prices are USD per million tokens from OpenAI's pricing page (input,
 * output, cached input), for the models this catalogue names; newer ids work with the fallback.
 */
import type { ModelCapabilities } from '../../core/provider.js';

/** One catalogue row: a model id (without the `openai/` prefix) and what it can do. */
export interface OpenAIModel extends ModelCapabilities {
  id: string;
  /** The model troupe picks when only an OpenAI key is present. */
  default?: boolean;
}

const row = (
  id: string,
  contextWindow: number,
  maxOutputTokens: number,
  thinking: boolean,
  [input, output, cacheRead]: [number, number, number],
  extra: Partial<OpenAIModel> = {},
): OpenAIModel => ({ id, contextWindow, maxOutputTokens, tools: true, thinking, images: true, pricing: { input, output, cacheRead }, ...extra });

export const OPENAI_MODELS: readonly OpenAIModel[] = [
  row('gpt-5', 400_000, 128_000, true, [1.25, 10, 0.125], { default: true }),
  row('gpt-5-mini', 400_000, 128_000, true, [0.25, 2, 0.025]),
  row('gpt-5-nano', 400_000, 128_000, true, [0.05, 0.4, 0.005]),
  row('gpt-5.1', 400_000, 128_000, true, [1.25, 10, 0.125]),
  row('gpt-4.1', 1_047_576, 32_768, false, [2, 8, 0.5]),
  row('gpt-4.1-mini', 1_047_576, 32_768, false, [0.4, 1.6, 0.1]),
  row('gpt-4.1-nano', 1_047_576, 32_768, false, [0.1, 0.4, 0.025]),
  row('gpt-4o', 128_000, 16_384, false, [2.5, 10, 1.25]),
  row('gpt-4o-mini', 128_000, 16_384, false, [0.15, 0.6, 0.075]),
  row('o3', 200_000, 100_000, true, [2, 8, 0.5]),
  row('o4-mini', 200_000, 100_000, true, [1.1, 4.4, 0.275]),
];

/** Capabilities assumed for an OpenAI model the catalogue does not know. */
export const OPENAI_FALLBACK: ModelCapabilities = { contextWindow: 128_000, maxOutputTokens: 16_384, tools: true, thinking: false, images: false };

/**
 * Capabilities assumed for a model on an OpenAI-compatible server (Ollama, vLLM, llama.cpp, LM
 * Studio): small, because local servers often run with a short context; the config can raise them.
 */
export const COMPATIBLE_FALLBACK: ModelCapabilities = { contextWindow: 32_768, maxOutputTokens: 4_096, tools: true, thinking: false, images: false };

/**
 * A model on an OpenAI-compatible server with the config's `overrides` (its `models.<name>`): the
 * fallback, except that a window configured without an output limit asks for at most a quarter of
 * it. Until 2026-12-07 it asked for the fallback's 4,096 whatever the window: a model declared with
 * its server's 4,096 tokens (llama.cpp's default context) asked for the whole window as output in
 * every request, which vLLM refuses when the prompt leaves less ("'max_tokens' … is too large"), a
 * context_overflow no compaction cures, so every turn failed; and a smaller window less still.
 */
export function compatibleCapabilities(overrides: Partial<ModelCapabilities> = {}): ModelCapabilities {
  const contextWindow = overrides.contextWindow ?? COMPATIBLE_FALLBACK.contextWindow;
  const maxOutputTokens = Math.max(1, Math.min(COMPATIBLE_FALLBACK.maxOutputTokens, Math.floor(contextWindow / 4)));
  return { ...COMPATIBLE_FALLBACK, maxOutputTokens, ...overrides };
}

/** The suffix of a dated snapshot or alias of a catalogue id. */
const SNAPSHOT = /^-(\d{4}-\d{2}-\d{2}|latest)$/;

/** The catalogue row for `model`: an exact id, or a dated snapshot of one (`gpt-4.1-2025-04-14`). */
export function findOpenAIModel(model: string): OpenAIModel | undefined {
  return OPENAI_MODELS.find((r) => model === r.id || (model.startsWith(r.id) && SNAPSHOT.test(model.slice(r.id.length))));
}

/** An id of the GPT-5 or GPT-6 generation (`gpt-5.2`, `gpt-5.4-mini`, `gpt-5.1-codex`, `gpt-6-…`), the generations the SDK names. */
const GPT_5_OR_6 = /^gpt-[56](\.\d+)?(-|$)/;

/**
 * Capabilities of an id the catalogue does not name but whose family is known; undefined otherwise.
 * Every model of these generations reads images and calls tools. Until 2026-12-06 such an id (a
 * model newer than the catalogue, `gpt-5.2`) got the fallback: its image prompts were refused and it
 * was never asked to reason, until the config said otherwise. Each guess errs where an error costs
 * least: a `-chat` model (`gpt-5-chat-latest`, ChatGPT's) does not reason and writes at most 16,384
 * tokens; a `-pro` one reasons at the one effort it allows, so troupe asks for none (a `low` effort
 * would be refused). No price is guessed: such a model's cost is not shown.
 */
function familyCapabilities(model: string): ModelCapabilities | undefined {
  if (!GPT_5_OR_6.test(model)) return undefined;
  if (/-chat(-|$)/.test(model)) return { contextWindow: 128_000, maxOutputTokens: 16_384, tools: true, thinking: false, images: true };
  return { contextWindow: 400_000, maxOutputTokens: 128_000, tools: true, thinking: !/-pro(-|$)/.test(model), images: true };
}

/** The catalogue row's capabilities, else the family's (familyCapabilities), else the conservative fallback. */
export function openaiCapabilities(model: string): ModelCapabilities {
  const found = findOpenAIModel(model);
  if (!found) return familyCapabilities(model) ?? { ...OPENAI_FALLBACK };
  const { id: _id, default: _d, ...caps } = found;
  return caps;
}
