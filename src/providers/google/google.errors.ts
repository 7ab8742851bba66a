/**
 * @google/genai errors → ProviderError. The SDK throws `ApiError` whose message is the JSON error
 * body, `{"error":{"code","message","status","details"}}` (https://ai.google.dev/gemini-api/docs/troubleshooting),
 * prefixed with `got status: …. ` when the error arrived inside a stream.
 */
import { ApiError } from '@google/genai';
import { askedDelay } from '../../core/model-stream.js';
import { ProviderError, vendorText, type ProviderErrorKind } from '../../core/provider.js';

interface GoogleErrorBody {
  code?: number;
  message?: string;
  status?: string;
  details?: { '@type'?: string; reason?: string; retryDelay?: string; violations?: { quotaId?: string }[] }[];
}

/**
 * A 429 RESOURCE_EXHAUSTED that no retry within the minute cures: a QuotaFailure naming a per-day
 * quota (`GenerateRequestsPerDayPerProjectPerModel-FreeTier`), a quota of none for the model on the
 * key's tier ("Quota exceeded for metric: …, limit: 0, model: gemini-2.5-pro"), or spent prepaid
 * credit ("Your prepayment credits are depleted"). Gemini still sends a RetryInfo of seconds with
 * them, so until 2026-12-07 they were retried as rate limits, and ended the turn as one.
 */
const SPENT = /\blimit: 0\b|prepayment credits are depleted/i;
const QUOTA_EXPLANATION =
  "Gemini refused the call because the key's quota is used up: a daily quota, none for this model on the key's tier, or no prepaid credit left. " +
  'Retrying does not help: see the quota and billing of the project in Google AI Studio (https://aistudio.google.com/usage), wait for the daily quota to reset, or switch to another model.';

function quotaSpent(body: GoogleErrorBody | undefined, message: string): boolean {
  if (SPENT.test(message)) return true;
  const failures = body?.details?.filter((d) => d['@type']?.endsWith('google.rpc.QuotaFailure')) ?? [];
  return failures.some((d) => d.violations?.some((v) => /PerDay/.test(v.quotaId ?? '')));
}

const CONTEXT_OVERFLOW = /input token count.*exceeds|exceeds the maximum number of tokens|context (window|length)|too many tokens/i;

export function toGoogleProviderError(err: unknown, signal: AbortSignal): ProviderError {
  if (err instanceof ProviderError) return err;
  if (signal.aborted) return new ProviderError('aborted', 'the request was cancelled');
  // The SDK enforces httpOptions.timeout by aborting its own fetch: the caller did not cancel.
  if (err instanceof Error && err.name === 'AbortError') return new ProviderError('network', 'the request timed out (providers.google.timeoutMs)');
  if (err instanceof ApiError) {
    const body = parseBody(err.message);
    // The SDK wraps a body that is not JSON (a proxy's HTML page) as the message: see vendorText.
    const message = vendorText(body?.message ?? err.message);
    const kind = classify(err.status, body, message);
    if (kind === 'quota_exceeded') return new ProviderError(kind, message, { status: err.status, explanation: QUOTA_EXPLANATION });
    // A RetryInfo is read on every retried failure (a 503 UNAVAILABLE's too), not a 429's alone (askedDelay).
    // The SDK's ApiError keeps no headers: a retry-after header cannot be read here.
    return new ProviderError(kind, message, { status: err.status, retryAfterMs: askedDelay(kind, undefined, retryInfoDelayMs(body)) });
  }
  const message = err instanceof Error ? err.message : String(err);
  return new ProviderError('network', message);
}

function classify(status: number, body: GoogleErrorBody | undefined, message: string): ProviderErrorKind {
  const rpc = body?.status;
  // An invalid key is a 400 INVALID_ARGUMENT whose ErrorInfo says API_KEY_INVALID.
  if (status === 401 || status === 403 || rpc === 'UNAUTHENTICATED' || rpc === 'PERMISSION_DENIED') return 'auth';
  if (body?.details?.some((d) => d.reason === 'API_KEY_INVALID')) return 'auth';
  if (status === 429 || rpc === 'RESOURCE_EXHAUSTED') return quotaSpent(body, message) ? 'quota_exceeded' : 'rate_limited';
  if (status === 400 && CONTEXT_OVERFLOW.test(message)) return 'context_overflow';
  if (status === 413) return 'context_overflow';
  if (status >= 500 || rpc === 'UNAVAILABLE' || rpc === 'INTERNAL' || rpc === 'DEADLINE_EXCEEDED') return 'overloaded';
  // An unknown model is a 404 NOT_FOUND: "models/<id> is not found for API version …".
  if ((status === 404 || rpc === 'NOT_FOUND') && /\bmodels\//.test(message)) return 'model_not_found';
  return 'invalid_request';
}

function parseBody(message: string): GoogleErrorBody | undefined {
  const start = message.indexOf('{');
  if (start < 0) return undefined;
  try {
    const parsed = JSON.parse(message.slice(start)) as { error?: GoogleErrorBody };
    return parsed.error;
  } catch {
    return undefined;
  }
}

/**
 * RetryInfo's `retryDelay` ("7s", "0.5s"), which is how Gemini says when to come back; undefined for
 * one of 0 or less ("0s"), which asks for no delay a retry can wait (core/provider.ts retryAfterMs).
 */
export function retryInfoDelayMs(body: GoogleErrorBody | undefined): number | undefined {
  const delay = body?.details?.find((d) => d['@type']?.endsWith('google.rpc.RetryInfo'))?.retryDelay;
  const seconds = delay ? Number.parseFloat(delay) : Number.NaN;
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : undefined;
}
