/**
 * The one import of uWebSockets.js in troupe (DESIGN.md §2: only src/daemon/http may import it).
 * The package is CommonJS; under NodeNext its `module.exports` arrives as the default import.
 */
import uWS from 'uWebSockets.js';

export type { HttpRequest, HttpResponse, TemplatedApp, WebSocket, WebSocketBehavior, us_listen_socket } from 'uWebSockets.js';

/** The loaded native module. */
export const uws = uWS;

/** `app.close()` exists in the native build (it closes every socket of the app) but not in its typings. */
export function closeApp(app: unknown): void {
  const close = (app as { close?: () => void }).close;
  if (typeof close === 'function') close.call(app);
}

/** The status line uWS wants ("404 Not Found"), from a number. */
export function statusLine(status: number): string {
  return `${status} ${STATUS_TEXT[status] ?? 'Status'}`;
}

const STATUS_TEXT: Record<number, string> = {
  101: 'Switching Protocols',
  200: 'OK',
  202: 'Accepted',
  204: 'No Content',
  302: 'Found',
  303: 'See Other',
  304: 'Not Modified',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  409: 'Conflict',
  410: 'Gone',
  413: 'Payload Too Large',
  414: 'URI Too Long',
  415: 'Unsupported Media Type',
  426: 'Upgrade Required',
  429: 'Too Many Requests',
  499: 'Client Closed Request',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};
