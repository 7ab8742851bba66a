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

/**
 * What an ACP agent takes from a client, as the SDK's connection checks it (core/jsonrpc.js
 * `receiveUnvalidatedMessage`): a request or notification (`jsonrpc: "2.0"`, a string method, an id,
 * if any, that is a string, a finite number or null), or anything response-shaped (no method; an
 * unknown answer is dropped). Anything else gets -32600 with id null, as `troupe acp` on stdio answers.
 */
export function isValidClientMessage(msg: JsonRpcMessage): boolean {
  if (!('method' in msg)) return 'id' in msg || 'result' in msg || 'error' in msg;
  if (msg.jsonrpc !== '2.0' || typeof msg.method !== 'string') return false;
  const id = msg.id;
  return !('id' in msg) || id === null || typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id));
}

export function sessionIdOf(msg: JsonRpcMessage): string | undefined {
  const sid = (msg.params as { sessionId?: unknown } | undefined)?.sessionId;
  return typeof sid === 'string' ? sid : undefined;
}
