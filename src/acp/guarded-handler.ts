/** The agent app's request handlers, each logged at debug level with its TroupeError turned into its JSON-RPC error. */
import * as acp from '@agentclientprotocol/sdk';
import { ERROR_CODES, isTroupeError } from '../core/errors.js';
import type { Logger } from '../core/ports.js';

/** TroupeError → JSON-RPC error (session_not_found keeps ACP's -32002 with data.sessionId). */
function toRpc(err: unknown): unknown {
  if (!isTroupeError(err)) return err;
  return new acp.RequestError(ERROR_CODES[err.code].rpc, err.message, { ...err.data, code: err.code });
}

type Handler<P, R> = (params: P, ctx: { client: acp.AgentContext; signal: AbortSignal }) => Promise<R>;

/** Logs the request at debug level and turns a TroupeError into its JSON-RPC error. */
export function guard(logger: Logger) {
  return <P, R>(method: string, fn: Handler<P, R>) =>
    async (ctx: { params: P; client: acp.AgentContext; signal: AbortSignal }): Promise<R> => {
      const started = Date.now();
      try {
        const result = await fn(ctx.params, ctx);
        logger.debug(method, { ms: Date.now() - started });
        return result;
      } catch (err) {
        logger.debug(`${method} failed`, { ms: Date.now() - started, code: isTroupeError(err) ? err.code : undefined, error: String(err) });
        throw toRpc(err);
      }
    };
}
