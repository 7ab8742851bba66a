/**
 * The string code in `data.code` of every wire error (spec/errors.md), also of the errors the ACP SDK
 * makes itself: its zod check of a request's params (`-32602 "Invalid params"`, `data` the zod
 * format), an unknown method (`-32601`, `data.method`), a message that is not JSON-RPC (`-32600`,
 * `-32700`) and a handler's non-RequestError throw (`-32603`, `data.details`) carry no string code.
 * Applied once, where the agent's output is written (batched-stdout.ts), so nothing escapes it.
 */
import type * as acp from '@agentclientprotocol/sdk';
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
  const problems = code === 'invalid_params' && error['message'] === 'Invalid params' ? paramsProblems(data) : undefined;
  return { ...message, error: { ...error, ...(problems ? { message: `Invalid params: ${problems}` } : {}), data: tagged } };
}

/** How many fields the message of an SDK's `Invalid params` names; `data` has them all. */
const SHOWN_PROBLEMS = 3;

/**
 * ACP's content block kinds and the fields each requires (the SDK's zod schema, not exported: the
 * Record's type keeps the kinds in step with the SDK's ContentBlock).
 */
const BLOCK_FIELDS: Record<acp.ContentBlock['type'], readonly string[]> = {
  text: ['text'],
  image: ['data', 'mimeType'],
  audio: ['data', 'mimeType'],
  resource_link: ['name', 'uri'],
  resource: ['resource'],
};
const BLOCK_KINDS = Object.keys(BLOCK_FIELDS) as acp.ContentBlock['type'][];

interface Problem {
  path: string;
  why: string;
  /** The kinds a union's `type` tag was expected to be (the ones the value is not). */
  kinds?: string[];
  first?: boolean;
}

/**
 * A content block of a kind ACP has, missing (or mistyping) a field of that kind: zod reports it
 * against every kind of the union, its `type` listing the other four. Its problems become its own
 * kind's fields alone, named first, in the prompt's order ("prompt[0].text: expected string, received undefined (a block
 * of type \"text\")"): until 2026-12-07 the message began with the kinds the block is not, as if its type were
 * wrong. Every problem stays in `data`.
 */
function ownKindFirst(found: Problem[]): Problem[] {
  let problems = found;
  for (const tag of found) {
    if (!tag.kinds || !tag.path.endsWith('.type') || tag.kinds.length !== BLOCK_KINDS.length - 1) continue;
    const kind = BLOCK_KINDS.find((k) => !tag.kinds!.includes(k));
    if (!kind || !tag.kinds.every((k) => (BLOCK_KINDS as string[]).includes(k))) continue;
    const block = tag.path.slice(0, -'.type'.length);
    const inBlock = (p: Problem) => p.path.startsWith(`${block}.`);
    const own = problems.filter((p) => inBlock(p) && BLOCK_FIELDS[kind].includes(p.path.slice(block.length + 1).split(/[.[]/)[0]!));
    if (own.length === 0) continue;
    const mine = own.map((p) => ({ path: p.path, why: `${p.why} (a block of type "${kind}")`, first: true }));
    // In the block's place, so that the blocks are named in the prompt's order (until 2026-12-07 each
    // went before those already done: the last block first, the first one left "in data" past three).
    const at = problems.findIndex(inBlock);
    problems = [...problems.slice(0, at), ...mine, ...problems.slice(at).filter((p) => !inBlock(p))];
  }
  return problems;
}

/**
 * What is wrong with a request's params, from the zod format the SDK puts in `data` (`{_errors: [],
 * field: {_errors: [why], …}}`): `sessionId: expected string, received number; prompt[0].type:
 * expected "text", "image", "audio", "resource_link" or "resource"`. The SDK's message is only
 * "Invalid params", which is what an editor shows; until 2026-12-07 it was all a person read of a
 * prompt block of a type ACP does not have, or a request missing a field. A content block that fits no
 * kind has its `type` named first: it lists the kinds there are; one of a kind there is, the fields of
 * its kind that are wrong (ownKindFirst).
 */
export function paramsProblems(format: unknown): string | undefined {
  const found: Problem[] = [];
  const walk = (node: unknown, path: string) => {
    if (!isRecord(node) || !Array.isArray(node['_errors'])) return;
    const whys = [...new Set(node['_errors'].filter((e): e is string => typeof e === 'string').map((e) => e.replace(/^Invalid input: /, '')))];
    if (whys.length > 0) {
      // A union's tag: one "expected \"kind\"" per kind it is not.
      const tag = whys.every((w) => /^expected "[^"]*"$/.test(w));
      const kinds = tag ? whys.map((w) => w.slice('expected '.length)) : undefined;
      const why = kinds && kinds.length > 1 ? `expected ${kinds.slice(0, -1).join(', ')} or ${kinds.at(-1)}` : whys.join(', ');
      const isType = tag && path.endsWith('.type');
      found.push({ path: path || 'params', why, ...(kinds ? { kinds: kinds.map((k) => k.slice(1, -1)) } : {}), ...(isType ? { first: true } : {}) });
    }
    for (const [key, child] of Object.entries(node)) if (key !== '_errors' && key !== 'code') walk(child, /^\d+$/.test(key) ? `${path}[${key}]` : path ? `${path}.${key}` : key);
  };
  walk(format, '');
  if (found.length === 0) return undefined;
  const problems = ownKindFirst(found);
  const ordered = [...problems.filter((f) => f.first), ...problems.filter((f) => !f.first)];
  const shown = ordered.slice(0, SHOWN_PROBLEMS).map((f) => `${f.path}: ${f.why}`);
  return shown.join('; ') + (problems.length > SHOWN_PROBLEMS ? ` (and ${problems.length - SHOWN_PROBLEMS} more in data)` : '');
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
