/** Why an MCP server failed, as people (a session's status, the log) and the model read it. */
import { SseError } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { STDIO_DEFAULT_MAX_BUFFER_SIZE } from '@modelcontextprotocol/sdk/shared/stdio.js';
import { statSync } from 'node:fs';
import { vendorText } from '../../core/provider.js';

/**
 * One line: an HTTP server's refusal starts with its status (with a hint for 401 and 403), and
 * whatever it sent is cut (an HTML page is its title). Until 2026-12-06 it was the SDK's message
 * whole, which for Streamable HTTP is the response's body without its status: a 401 did not say
 * 401, and a login page's kilobytes of HTML were the server's status and log line.
 */
export function reasonOf(err: unknown): string {
  const text = vendorText(err instanceof Error ? err.message : String(err)).replace(/\s+/g, ' ');
  const code = err instanceof StreamableHTTPError || err instanceof SseError ? err.code : undefined;
  if (typeof code !== 'number' || code < 100 || code > 599) return text;
  const hint = code === 401 || code === 403 ? ' (it refused the credentials: see the headers given for it)' : '';
  return `HTTP ${code}${hint}: ${text}`;
}

/**
 * The longest message troupe reads from a server, on any transport: the SDK's stdio ReadBuffer's
 * limit (a longer line makes it stop the server), which troupe gives the transport itself so that the
 * error it then reports is known, and boundedFetch's for HTTP and SSE servers (mcp-bounded-fetch.ts).
 */
export const STDIO_MAX_MESSAGE_BYTES = STDIO_DEFAULT_MAX_BUFFER_SIZE;
const overBy = `it sent a message over ${STDIO_MAX_MESSAGE_BYTES / (1024 * 1024)} MB, more than troupe reads from a server`;
/** Why a stdio server the SDK stopped for a message over the limit no longer serves. */
export const OVERLONG = `${overBy}, so troupe stopped it`;
/** Why an HTTP or SSE server troupe disconnected from for a message over the limit no longer serves. */
export const OVERLONG_REMOTE = `${overBy}, so troupe disconnected from it`;

/** Whether an error is the SDK's stdio transport refusing a message over STDIO_MAX_MESSAGE_BYTES (it then stops the server). */
export function isOverlongMessage(err: unknown): boolean {
  return err instanceof Error && err.message === `ReadBuffer exceeded maximum size of ${STDIO_MAX_MESSAGE_BYTES} bytes`;
}

/**
 * A stdio server's start that failed because the directory it runs in (the session's cwd) is gone: a
 * project moved or deleted since the session was made, then loaded. Node's spawn fails then with
 * ENOENT naming the command (`spawn /usr/bin/node ENOENT`), as if the command were missing: until
 * 2026-12-07 that was the server's status and log line. Any other error is returned as it is.
 */
export function startedInMissingDirectory(err: unknown, cwd: string): unknown {
  if ((err as NodeJS.ErrnoException | undefined)?.code !== 'ENOENT') return err;
  const isDirectory = (() => {
    try {
      return statSync(cwd).isDirectory();
    } catch {
      return false;
    }
  })();
  return isDirectory ? err : new Error(`cannot start it in the session's directory ${cwd}, which no longer exists (moved or deleted?)`);
}
