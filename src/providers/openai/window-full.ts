/**
 * Which limit a reply stopped for its length reached: the output limit troupe asked for, or the
 * model's context window. OpenAI sends one signal for both: the Responses API's
 * `incomplete_details.reason: "max_output_tokens"` ("If the generated tokens reach the context window
 * limit or the max_output_tokens value you've set", its reasoning guide), and the finish_reason
 * `length` of an OpenAI-compatible server that stops a reply at its window rather than refusing the
 * request. (Not vLLM's: it refuses a request whose max_tokens does not fit what the prompt leaves of
 * the window, a 400 "'max_tokens' or 'max_completion_tokens' is too large: … maximum context
 * length …", which openai.errors.ts reads as context_overflow.) Until 2026-12-07 troupe read it always as the output limit
 * (`max_tokens`): a reply the window cut ended the turn as if the model had written all it was
 * allowed, with no compaction and nothing said of the window.
 */
import { ProviderError } from '../../core/provider.js';

/** What troupe asked of one call and what it knows of the model, against which a length stop is read. */
export interface LengthLimits {
  /** The output limit the request carried (`max_output_tokens`, `max_tokens`). */
  maxOutputTokens: number;
  /** The model's context window, as troupe knows it (the catalogue, else the config, else the fallback). */
  contextWindow: number;
}

/**
 * The `context_overflow` of a reply stopped for its length (`signal`, the vendor's words for the
 * stop) if it filled the context window; undefined if it reached the output limit, or if that cannot
 * be told. Both must hold, each from the vendor's own counts: the reply wrote fewer tokens than the
 * output limit asked for (so that limit was not the one reached), and the input and output it reports
 * together reach the window (so the window was). The first alone is not enough: a server may cap the
 * output below what was asked (vLLM's generation config, a gateway's limit), and the reply then stops
 * short of the limit with the window nowhere near. Counts the server did not send (no usage, or part
 * of one) tell nothing, and the stop stays the output limit, as before.
 *
 * `inputTokens`: every token of the prompt, the cached ones included (as OpenAI's `input_tokens`
 * and `prompt_tokens` count them); `outputTokens`: every token written, reasoning included.
 */
export function windowFullError(signal: string, inputTokens: unknown, outputTokens: unknown, limits: LengthLimits | undefined): ProviderError | undefined {
  if (!limits || !isCount(inputTokens) || !isCount(outputTokens)) return undefined;
  if (outputTokens >= limits.maxOutputTokens || inputTokens + outputTokens < limits.contextWindow) return undefined;
  // The vendor's side of the overflow (its vendorMessage): troupe's own account is made from it (src/actors/step-error.ts).
  return new ProviderError(
    'context_overflow',
    `the reply filled the model's context window (${signal}: ${outputTokens} output tokens, under the ${limits.maxOutputTokens} asked for, ` +
      `and ${inputTokens + outputTokens} with the input, the window being ${limits.contextWindow})`,
  );
}

const isCount = (n: unknown): n is number => typeof n === 'number' && Number.isFinite(n) && n >= 0;
