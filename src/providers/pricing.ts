/** The price of a model call, from its usage and the catalogue's USD-per-million-token rates. */
import type { ModelCapabilities, ProviderEvent } from '../core/provider.js';

export type ModelPricing = NonNullable<ModelCapabilities['pricing']>;
export type UsageCounts = Omit<Extract<ProviderEvent, { type: 'usage' }>, 'type'>;

export interface Cost {
  amount: number;
  currency: 'USD';
}

/**
 * Cost of one call, or undefined when the model has no known price (local servers, unknown ids).
 * `inputTokens` excludes cached tokens (see the `usage` ProviderEvent); cache reads and writes are
 * charged at their own rates, falling back to the input rate when a vendor publishes none.
 */
export function costOf(usage: UsageCounts, pricing: ModelPricing | undefined): Cost | undefined {
  if (!pricing) return undefined;
  const micro =
    usage.inputTokens * pricing.input +
    usage.outputTokens * pricing.output +
    (usage.cacheReadTokens ?? 0) * (pricing.cacheRead ?? pricing.input) +
    (usage.cacheWriteTokens ?? 0) * (pricing.cacheWrite ?? pricing.input);
  return { amount: micro / 1_000_000, currency: 'USD' };
}
