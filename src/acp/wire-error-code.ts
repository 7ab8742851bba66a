/**
 * The string code in `data.code` of every wire error (spec/errors.md), also of the errors the ACP SDK
 * makes itself: its zod check of a request's params (`-32602 "Invalid params"`, `data` the zod
 * format), an unknown method (`-32601`, `data.method`), a message that is not JSON-RPC (`-32600`,
 * `-32700`) and a handler's non-RequestError throw (`-32603`, `data.details`) carry no string code.
 * Applied once, where the agent's output is written (batched-stdout.ts), so nothing escapes it.
 */
import { ERROR_CODES, type ErrorCode } from '../core/errors.js';

/** Only the JSON-RPC and ACP protocol codes: the SDK makes no other, and troupe's own carry theirs. */
const PROTOCOL_CODES: readonly ErrorCode[] = ['parse_error', 'invalid_request', 'method_not_found', 'invalid_params', 'internal_error', 'request_cancelled', 'auth_required', 'session_not_found'];
const BY_RPC = new Map<number, ErrorCode>(PROTOCOL_CODES.map((c) => [ERROR_CODES[c].rpc, c]));

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * `message` with `error.data.code` set when it is an error response without a string one. The detail
 * stays: an object `data` gets the field; any other `data` (or one whose own `code` is not a string)
 * moves to `data.details`.
 */
export function withWireCode<M>(message: M): M {
  const error = isRecord(message) ? message['error'] : undefined;
  if (!isRecord(error) || typeof error['code'] !== 'number') return message;
  const data = error['data'];
  if (isRecord(data) && typeof data['code'] === 'string') return message;
  const code = BY_RPC.get(error['code']);
  if (code === undefined) return message;
  const tagged = data === undefined ? { code } : isRecord(data) && !('code' in data) ? { ...data, code } : { code, details: data };
  return { ...message, error: { ...error, data: tagged } };
}

/** The same for one NDJSON line of text (the SDK's own answers to lines it cannot take). */
export function lineWithWireCode(line: string): string {
  if (!line.includes('"error"')) return line;
  try {
    const tagged = withWireCode(JSON.parse(line) as unknown);
    return JSON.stringify(tagged) + (line.endsWith('\n') ? '\n' : '');
  } catch {
    return line;
  }
}
