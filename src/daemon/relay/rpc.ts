/** JSON-RPC helpers of the relay: typed errors with the string code in `data.code` (spec/errors.md). */
import { ERROR_CODES, type ErrorCode } from '../../core/errors.js';

export type JsonRpcMessage = Record<string, unknown>;

export function rpcError(code: ErrorCode, message: string, data: Record<string, unknown> = {}) {
  const clean = Object.fromEntries(Object.entries(data).filter(([, v]) => v !== undefined));
  return { code: ERROR_CODES[code].rpc, message, data: { ...clean, code } };
}

export function errorResponse(id: unknown, code: ErrorCode, message: string, data: Record<string, unknown> = {}): JsonRpcMessage {
  return { jsonrpc: '2.0', id, error: rpcError(code, message, data) };
}

/** A request: a method and an id, `null` included (JSON-RPC 2.0 allows it, and the ACP SDK answers it). */
export function isRequest(msg: JsonRpcMessage): boolean {
  return typeof msg.method === 'string' && msg.id !== undefined;
}

export function sessionIdOf(msg: JsonRpcMessage): string | undefined {
  const sid = (msg.params as { sessionId?: unknown } | undefined)?.sessionId;
  return typeof sid === 'string' ? sid : undefined;
}
