/**
 * A provider whose adapter (and vendor SDK) is imported on first use. Capabilities come from the
 * catalogue without the SDK, so resolving a model, building the initialize answer or listing models
 * never loads a vendor SDK. `explain` (refused-key.ts) rewrites what a model call fails with: done
 * here, around the one stream, not by another generator wrapped around this one, which every
 * streamed event would pass through once more.
 */
import type { ModelCapabilities, ModelProvider, ModelRequest, ProviderEvent } from '../core/provider.js';

export function lazyProvider(
  id: string,
  capabilities: (model: string) => ModelCapabilities,
  counts: boolean,
  load: () => Promise<ModelProvider>,
  explain: (err: unknown) => unknown = (err) => err,
): ModelProvider {
  let adapter: Promise<ModelProvider> | undefined;
  const get = () => (adapter ??= load());
  const provider: ModelProvider = {
    id,
    capabilities,
    async *stream(request: ModelRequest, signal: AbortSignal): AsyncGenerator<ProviderEvent> {
      try {
        yield* (await get()).stream(request, signal);
      } catch (err) {
        throw explain(err);
      }
    },
  };
  if (counts) {
    provider.countTokens = async (request, signal) => {
      const a = await get();
      if (!a.countTokens) throw new Error(`${id} has no token count endpoint`);
      return a.countTokens(request, signal);
    };
  }
  return provider;
}
