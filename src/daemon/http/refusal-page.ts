/**
 * A refusal a person reads: a browser loading a page of the daemon without a login that works (the
 * inspector reloaded after the daemon restarted, a bookmark, a login URL spent or expired) is
 * answered with a short HTML page saying what happened and how to log in, under the same status.
 * Until 2026-12-07 it was the API's JSON error, `A bearer token is required` or `The token is not
 * accepted`: nothing a browser's user can act on. Requests that do not ask for HTML (the CLI, SDK
 * clients, the page's own fetches and feeds) keep the JSON error (spec/transport.md §8).
 */
import type { HeaderMap } from './http-exchange.js';

/** Whether the request is a browser loading a page: its Accept names `text/html`. */
export function wantsPage(headers: HeaderMap): boolean {
  return /(^|,)\s*text\/html\s*(;|,|$)/i.test(headers['accept'] ?? '');
}

/** Nothing loads from the page: it is only text. */
export const REFUSAL_PAGE_HEADERS = {
  'Content-Type': 'text/html; charset=utf-8',
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'; base-uri 'none'",
};

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The page for a refusal with `status`, `code` and `message` (the JSON error's). */
export function refusalPage(status: number, code: string, message: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>troupe: not logged in</title><meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body>
<h1>troupe: not logged in</h1>
<p data-testid="refusal">${escapeHtml(message)} (${status} ${escapeHtml(code)}).</p>
<p>To open the inspector, run <code>troupe inspect --url</code> and open the URL it prints (or run <code>troupe inspect --open</code>).
A login URL works once, within 60 seconds; a restart of the daemon ends every login.</p>
</body>
</html>
`;
}
