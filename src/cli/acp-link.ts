/**
 * An ACP connection to the daemon over the same Streamable HTTP transport a web page or a remote
 * client uses: the SDK's createHttpStream with the bearer token on every request. The CLI advertises
 * no fs or terminal capability, so the agent works on the daemon's files with its own tools.
 */
import * as acp from '@agentclientprotocol/sdk';
import { createHttpStream } from '@agentclientprotocol/sdk/experimental/http-client';
import { ERROR_CODES, TroupeError, type ErrorCode } from '../core/errors.js';
import { VERSION } from '../core/version.js';
import { transportFailure, type DaemonTarget } from './daemon.client.js';

/** What the CLI does with what the agent sends. */
export interface LinkHandlers {
  update(n: acp.SessionNotification): void;
  permission(req: acp.RequestPermissionRequest): Promise<acp.RequestPermissionResponse>;
  /** Any other notification (`_troupe/session_failed`, …). */
  notification?(method: string, params: unknown): void;
}

export interface AcpLink {
  agent: acp.ClientContext;
  initialize: acp.InitializeResponse;
  closed: Promise<void>;
  /** Ends the connection; resolves once the daemon has answered its DELETE (or it failed). */
  close(): Promise<void>;
}

/** JSON-RPC error (from the agent or the transport) → a TroupeError with the daemon's code. */
export function rpcToError(err: unknown, target: DaemonTarget): Error {
  const e = err as { code?: unknown; message?: string; data?: { code?: string; status?: number; body?: string } };
  if (e && typeof e === 'object' && typeof e.code === 'number') {
    const status = e.data?.status;
    if (status === 401 || status === 403) {
      return new TroupeError(status === 401 ? 'unauthorized' : 'forbidden', `the daemon at ${target.url} refused the token (check TROUPE_TOKEN or $TROUPE_HOME/token)`);
    }
    const code = e.data?.code;
    if (code && code in ERROR_CODES) return new TroupeError(code as ErrorCode, e.message ?? code, e.data ?? {});
    // Every error the daemon sends has data.code (spec/errors.md): one without is the SDK's transport
    // failing a request it can no longer answer (-32603 "ACP session SSE stream closed", "terminated").
    const lost = code === undefined ? transportFailure(new Error(e.message ?? ''), target) : undefined;
    if (lost) return lost;
    const byRpc = (Object.keys(ERROR_CODES) as ErrorCode[]).find((k) => ERROR_CODES[k].rpc === e.code);
    return new TroupeError(byRpc ?? 'internal_error', e.message ?? 'the agent returned an error');
  }
  const refused = err instanceof Error ? /\b(401|403)\b/.exec(err.message) : null;
  if (refused) {
    return new TroupeError(refused[1] === '401' ? 'unauthorized' : 'forbidden', `the daemon at ${target.url} refused the token (check TROUPE_TOKEN or $TROUPE_HOME/token)`);
  }
  const lost = transportFailure(err, target);
  if (lost) return lost;
  return err instanceof Error ? err : new Error(String(err));
}

/** Opens the connection and initializes it. */
export async function openLink(target: DaemonTarget, handlers: LinkHandlers): Promise<AcpLink> {
  // The SDK sends the DELETE that ends the connection on the daemon without a promise to wait for: a
  // command leaving at once (stdout closed) waits for it here, else the daemon keeps the connection
  // until --connection-idle-ms.
  let deleting: Promise<unknown> | undefined;
  const fetchAndNote: typeof fetch = (input, init) => {
    const sent = fetch(input, init);
    if (init?.method === 'DELETE') deleting = sent.catch(() => undefined);
    return sent;
  };
  const stream = createHttpStream(`${target.url}/acp`, { headers: { Authorization: `Bearer ${target.token}` }, fetch: fetchAndNote });
  const app = acp
    .client()
    .onNotification('session/update', ({ params }) => handlers.update(params))
    .onRequest('session/request_permission', ({ params }) => handlers.permission(params))
    .onNotification('*', ({ method, params }) => handlers.notification?.(method, params));
  const conn = app.connect(stream);
  try {
    const initialize = await conn.agent.request('initialize', {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: {},
      clientInfo: { name: 'troupe-cli', version: VERSION },
    });
    const close = async () => {
      conn.close();
      await new Promise((r) => setImmediate(r)); // the SDK starts its DELETE on the stream's cancel
      await deleting;
    };
    return { agent: conn.agent, initialize, closed: conn.closed, close };
  } catch (err) {
    conn.close();
    throw rpcToError(err, target);
  }
}
