/**
 * The price of a model call. The formula lives in src/core/provider.ts (`costOf`) so that the session
 * engine, which may not import providers, uses the same one; this module re-exports it next to the
 * catalogues. `inputTokens` excludes cached tokens (see the `usage` ProviderEvent); cache reads and
 * writes are charged at their own rates, falling back to the input rate when a vendor publishes
 * none; a model without pricing has no cost.
 */
import type { ModelCapabilities, ProviderEvent } from '../core/provider.js';

export { costOf } from '../core/provider.js';

export type ModelPricing = NonNullable<ModelCapabilities['pricing']>;
export type UsageCounts = Omit<Extract<ProviderEvent, { type: 'usage' }>, 'type'>;
export interface Cost {
  amount: number;
  currency: 'USD';
}
