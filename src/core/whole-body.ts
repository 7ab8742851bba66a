/**
 * A successful answer to a streamed model request whose body is one whole document rather than the
 * event stream asked for. The vendor SDKs read any 2xx body of a streamed request as server-sent
 * events: a JSON document or a web page holds none, so the stream ended at once, "before
 * message_stop" (or `response.completed`, or a `finish_reason`), a `network` failure that was retried
 * as one and told the person nothing of what answered. Seen in the wild:
 *
 * - LM Studio answers a path it does not serve with HTTP 200 and `{"error": "Unexpected endpoint or
 *   method. (POST /chat/completions)"}` (lmstudio-bug-tracker#618): a base URL without its `/v1`;
 * - a web server at the base URL (a dev server's page for every path, a captive portal) answers 200
 *   with HTML;
 * - a server or proxy that does not stream answers with the whole reply as JSON.
 *
 * Until 2026-12-07 each of these ended the turn `provider_network` ("the completion stream ended
 * before a finish_reason"), after the retries.
 */
import { ProviderError, vendorText } from './provider.js';
import { elided } from './text-cut.js';

/** The most of a whole JSON reply kept as the vendor's words (it may be a long answer). */
const JSON_WORDS_MAX = 300;

/**
 * Throws when `response` (a 2xx to a streamed request) carries JSON or HTML instead of an event
 * stream, and returns otherwise with the body unread, for the SDK's stream. The content type
 * decides: any other (text/event-stream, a server's text/plain or none) is read as a stream, as
 * before, and so is a body labelled JSON that reads as events. `errorOf` classifies a JSON body in the vendor's error shape, and returns undefined for
 * any other JSON (a whole reply).
 */
export async function refuseWholeBody(response: Response, errorOf: (json: unknown, response: Response) => ProviderError | undefined): Promise<void> {
  const media = response.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase() ?? '';
  const json = media === 'application/json' || media.endsWith('+json');
  if (!json && media !== 'text/html') return;
  // Read from a copy: the response's own body stays unread for the SDK, in case it is a stream after all.
  const text = await response.clone().text();
  const where = `${response.url || 'the server'} answered with HTTP ${response.status}`;
  if (!json) {
    // vendorText tells an HTML page as its title and what such a page means.
    const words = vendorText(text);
    throw new ProviderError('invalid_request', words, { status: response.status, explanation: `${where} and ${words}` });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Server-sent events labelled JSON by a server that mislabels them: read as the stream they are
    // (whole, since the copy was read to its end first).
    if (/^\s*(data|event|id|retry)?:/.test(text)) return;
    parsed = undefined;
  }
  const failure = parsed === undefined ? undefined : errorOf(parsed, response);
  if (failure) {
    // The vendor's own error, of its own kind (a refused key is `auth`, a rate limit `rate_limited`…).
    const explanation = `${where} and an error where an event stream was asked for: ${failure.explanation ?? failure.vendorMessage}`;
    throw new ProviderError(failure.kind, failure.vendorMessage, { status: response.status, retryAfterMs: failure.retryAfterMs, explanation });
  }
  const words = elided(text, JSON_WORDS_MAX);
  throw new ProviderError('invalid_request', words, {
    status: response.status,
    explanation: `${where} and one JSON document, not the event stream asked for: the server does not stream, or something before it (a proxy, a gateway) does not pass a stream on. It said: ${words}`,
  });
}
