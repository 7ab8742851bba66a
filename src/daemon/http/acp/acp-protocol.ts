/**
 * ACP Streamable HTTP rules shared by the HTTP and WebSocket sides (SDK 2.4.0 protocol.js as the
 * reference): header names, which methods are session scoped, message shapes, id keys.
 */
import { isRequestId } from '../../../wire/request-id.js';
import type { JsonRpcMessage } from './acp.types.js';

export const HEADER_CONNECTION_ID = 'Acp-Connection-Id';
export const HEADER_SESSION_ID = 'Acp-Session-Id';
/** ACP's protocol notification that withdraws a request (either side's): `params.requestId` names it. */
export const CANCEL_REQUEST = '$/cancel_request';
/** Extension notification sent on a stream that cannot resume where the client asked. */
export const REPLAY_GAP_METHOD = '_troupe/replay_gap';

const SESSION_SCOPED_METHODS = new Set([
  'session/cancel',
  'session/close',
  'session/delete',
  'session/fork',
  'session/load',
  'session/prompt',
  'session/resume',
  'session/set_config_option',
  'session/set_mode',
  'session/set_model',
]);

/** Methods that need `Acp-Session-Id` even when their params carry no sessionId. */
export function methodRequiresSessionHeader(method: string): boolean {
  return SESSION_SCOPED_METHODS.has(method);
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function hasMethod(msg: JsonRpcMessage): msg is JsonRpcMessage & { method: string } {
  return typeof msg['method'] === 'string';
}

/** A request: a method and an id (any id, null included, as the SDK treats it). */
export function isRequest(msg: JsonRpcMessage): boolean {
  return hasMethod(msg) && 'id' in msg;
}

/**
 * What an ACP agent takes from a client, as the SDK's connection checks it (core/jsonrpc.js
 * `receiveUnvalidatedMessage`): a request or notification (`jsonrpc: "2.0"`, a string method, an id,
 * if any, that {@link isRequestId} takes: stricter than the SDK, which takes any finite number), or
 * anything response-shaped (no method; an unknown answer is dropped). Anything else gets -32600 with id null (the relay answers it so, as
 * `troupe acp` on stdio does), so it is never a request in flight under its own id. The one rule,
 * for the relay's answer and the transport's routes alike (spec/daemon.md).
 */
export function isValidClientMessage(msg: JsonRpcMessage): boolean {
  if (!('method' in msg)) return 'id' in msg || 'result' in msg || 'error' in msg;
  if (msg['jsonrpc'] !== '2.0' || typeof msg['method'] !== 'string') return false;
  return !('id' in msg) || isRequestId(msg['id']);
}

/** A request the agent side answers under its own id: valid (above), with a method and an id. */
export function isValidRequest(msg: JsonRpcMessage): boolean {
  return isRequest(msg) && isValidClientMessage(msg);
}

/** A response: an id, no method, and a result or an error. */
export function isResponse(msg: JsonRpcMessage): boolean {
  return !('method' in msg) && 'id' in msg && ('result' in msg || 'error' in msg);
}

export function isInitializeRequest(msg: JsonRpcMessage): boolean {
  return msg['jsonrpc'] === '2.0' && msg['method'] === 'initialize' && 'id' in msg;
}

export function sessionIdOfParams(msg: JsonRpcMessage): string | undefined {
  const params = msg['params'];
  if (!isRecord(params)) return undefined;
  const sid = params['sessionId'];
  return typeof sid === 'string' ? sid : undefined;
}

export function sessionIdOfResult(msg: JsonRpcMessage): string | undefined {
  const result = msg['result'];
  if (!isRecord(result)) return undefined;
  const sid = result['sessionId'];
  return typeof sid === 'string' ? sid : undefined;
}

/** A map key for a JSON-RPC id that keeps 1 and "1" apart. */
export function idKey(id: unknown): string | undefined {
  if (typeof id === 'string') return `s:${id}`;
  if (typeof id === 'number' && Number.isFinite(id)) return `n:${id}`;
  if (id === null) return 'null';
  return undefined;
}

/** A JSON-RPC error response with the troupe string code in `data.code`. */
export function rpcError(id: unknown, code: number, message: string, stringCode?: string, data: Record<string, unknown> = {}): JsonRpcMessage {
  const payload: Record<string, unknown> = { code, message };
  if (stringCode !== undefined || Object.keys(data).length > 0) payload['data'] = { ...data, ...(stringCode ? { code: stringCode } : {}) };
  return { jsonrpc: '2.0', id: id === undefined ? null : id, error: payload };
}
