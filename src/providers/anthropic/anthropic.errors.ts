/**
 * Anthropic SDK errors → ProviderError. Error shapes: https://docs.claude.com/en/api/errors
 * (HTTP errors carry `{type:"error", error:{type, message}}`; the same object can arrive mid-stream
 * as an SSE `error` event, which the SDK throws as an APIError without a status).
 */
import Anthropic from '@anthropic-ai/sdk';
import { askedDelay } from '../../core/model-stream.js';
import { describeError, ProviderError, retryAfterMs, sdkRetriedStatusKind, vendorShouldRetry, vendorText, type ProviderErrorKind } from '../../core/provider.js';

// "exceed context limit": the prompt fits but prompt + max_tokens does not; compacting the prompt is the cure too.
const CONTEXT_OVERFLOW = /prompt is too long|context (window|length)|too many (input )?tokens|exceeds? the (maximum )?context|exceeds? context limit/i;

/**
 * Anthropic's refusals for billing: a 402 `billing_error`, and the 400 `invalid_request_error`s
 * "Your credit balance is too low to access the Anthropic API…" and "You have reached your specified
 * API usage limits…". Until 2026-12-07 they were `provider_invalid_request`, which reads as a
 * request troupe built wrong.
 */
const BILLING = /credit balance is too low|reached your specified API usage limits/i;
const BILLING_EXPLANATION =
  'Anthropic refused the call for billing: the credit balance is too low or a usage limit is reached. ' +
  'Retrying does not help: add credit or raise the limit under Plans & Billing in the Anthropic Console (https://console.anthropic.com/settings/billing), or switch to another model.';

/** Classifies anything the SDK (or the stream) threw. An aborted `signal` always wins. */
export function toAnthropicProviderError(err: unknown, signal: AbortSignal): ProviderError {
  if (err instanceof ProviderError) return err;
  if (signal.aborted || err instanceof Anthropic.APIUserAbortError) {
    return new ProviderError('aborted', 'the request was cancelled');
  }
  if (err instanceof Anthropic.APIConnectionError) return new ProviderError('network', describeError(err));
  if (err instanceof Anthropic.APIError) {
    const status = err.status;
    // A body that is not Anthropic's JSON (a proxy's HTML page) has no apiMessage: see vendorText.
    const message = err.apiMessage ?? vendorText(err.message);
    const kind = classify(status, err.type, message);
    // The server's word on sending it again, as the SDK read it before troupe turned its retries off.
    const shouldRetry = vendorShouldRetry(status, err.headers, kind);
    const said = shouldRetry === undefined ? {} : { shouldRetry };
    if (kind === 'quota_exceeded') return new ProviderError(kind, message, { status, explanation: BILLING_EXPLANATION, ...said });
    // Anthropic sends retry-after with a 529 overloaded_error too: every retried failure waits as asked (askedDelay).
    return new ProviderError(kind, message, { status, retryAfterMs: askedDelay(kind, shouldRetry, retryAfterMs(err.headers)), ...said });
  }
  // A body cut mid-stream surfaces as a fetch TypeError ("terminated") or a socket error.
  return new ProviderError('network', describeError(err));
}

/**
 * A JSON body in Anthropic's error shape (`{"type": "error", "error": {type, message}}`) that came
 * with a 2xx, classified as the same error inside a stream is; undefined for any other JSON (a whole
 * message). See core/whole-body.ts.
 */
export function anthropicErrorBody(json: unknown, response: Response): ProviderError | undefined {
  if (typeof json !== 'object' || json === null || !(json as { error?: unknown }).error) return undefined;
  return toAnthropicProviderError(new Anthropic.APIError(undefined, json as object, undefined, response.headers), new AbortController().signal);
}

function classify(status: number | undefined, type: string | null, message: string): ProviderErrorKind {
  if (type === 'overloaded_error' || status === 529 || status === 503) return 'overloaded';
  if (type === 'billing_error' || status === 402 || BILLING.test(message)) return 'quota_exceeded';
  if (type === 'rate_limit_error' || status === 429) return 'rate_limited';
  if (type === 'authentication_error' || type === 'permission_error' || status === 401 || status === 403) return 'auth';
  if (status === 413 || type === 'request_too_large') return 'context_overflow';
  if ((status === 400 || type === 'invalid_request_error') && CONTEXT_OVERFLOW.test(message)) return 'context_overflow';
  if (type === 'api_error' || type === 'timeout_error' || (status !== undefined && status >= 500)) return 'overloaded';
  const retried = sdkRetriedStatusKind(status);
  if (retried) return retried;
  // An unknown model id is a 404 not_found_error whose message is "model: <id>".
  if ((status === 404 || type === 'not_found_error') && /^model:/i.test(message)) return 'model_not_found';
  if (status === undefined && type === null) return 'network';
  return 'invalid_request';
}

