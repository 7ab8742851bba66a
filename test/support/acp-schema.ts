// Checks what troupe writes on the ACP wire against the ACP v1 schema as the SDK's own zod schemas state
// it (dist/v1/schema/zod.gen.js of @agentclientprotocol/sdk, dist/v1/unstable/… for unstable methods):
// the validators its app API runs on what it receives. Every test that watches troupe's stdout uses this
// one check: AcpChild (test/support/acp-child.ts), the raw client of acp-schema-conformance and cli-run.
//
// The zod schemas are made for a lenient reader: an invalid optional value is replaced by its default
// (`.catch`), an invalid item of some lists is skipped, and unknown fields are stripped. A parse that
// succeeds therefore proves little, so a message conforms only if the parse also lost nothing the agent
// sent (`losses`): a field the schema does not know is a custom field at the root of an ACP type, which
// ACP forbids outside `_meta`. (The SDK's JSON Schema files, which this once used through ajv, never say
// `additionalProperties: false`, so they let such fields through.)
//
// What the zod schemas do not check, and this does besides:
// - the JSON-RPC envelope (in the JSON Schema files, the root schema): `jsonrpc: "2.0"`, a request id,
//   a response with exactly one of result and error, and no member JSON-RPC does not name;
// - that each int64/uint64 field holds a safe integer: the SDK's `wideInt` deliberately takes any
//   integer (a 64-bit peer may send more than 2^53), but a JS client reads such a number rounded.
// The other formats of the JSON Schema files are in the zod schemas already: uint16/uint32/int32 ranges
// (`z.int().gte().max()`), `uri` (`z.url()`), and a finite `double` (`z.number()`).
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

// The package exports no subpath for its zod schemas: they are found beside an exported file.
const sdkRoot = resolve(dirname(createRequire(import.meta.url).resolve('@agentclientprotocol/sdk/schema/v1/schema.json')), '../..');
const stable = await import(pathToFileURL(join(sdkRoot, 'dist/v1/schema/zod.gen.js')).href);
const unstable = await import(pathToFileURL(join(sdkRoot, 'dist/v1/unstable/schema/zod.gen.js')).href);

/** The schema of each client request's result (`session/fork` is unstable in ACP v1). */
export const RESPONSES: Record<string, any> = {
  initialize: stable.zInitializeResponse,
  'session/new': stable.zNewSessionResponse,
  'session/load': stable.zLoadSessionResponse,
  'session/resume': stable.zResumeSessionResponse,
  'session/list': stable.zListSessionsResponse,
  'session/close': stable.zCloseSessionResponse,
  'session/delete': stable.zDeleteSessionResponse,
  'session/set_mode': stable.zSetSessionModeResponse,
  'session/set_config_option': stable.zSetSessionConfigOptionResponse,
  'session/prompt': stable.zPromptResponse,
  'session/fork': unstable.zForkSessionResponse,
};

/** The schema of the params of each agent → client message, and whether it is a request (has an id). */
export const OUTGOING: Record<string, { params: any; request: boolean }> = {
  'session/update': { params: stable.zSessionNotification, request: false },
  '$/cancel_request': { params: stable.zCancelRequestNotification, request: false },
  'session/request_permission': { params: stable.zRequestPermissionRequest, request: true },
  'fs/read_text_file': { params: stable.zReadTextFileRequest, request: true },
  'fs/write_text_file': { params: stable.zWriteTextFileRequest, request: true },
  'terminal/create': { params: stable.zCreateTerminalRequest, request: true },
  'terminal/output': { params: stable.zTerminalOutputRequest, request: true },
  'terminal/wait_for_exit': { params: stable.zWaitForTerminalExitRequest, request: true },
  'terminal/kill': { params: stable.zKillTerminalRequest, request: true },
  'terminal/release': { params: stable.zReleaseTerminalRequest, request: true },
};

/** Where `sent` differs from what the lenient parse made of it (`parsed`); defaults it added are fine. */
export function losses(sent: unknown, parsed: unknown, path = ''): string[] {
  if (Array.isArray(sent)) {
    if (!Array.isArray(parsed)) return [`${path || '.'}: became ${JSON.stringify(parsed)}`];
    if (parsed.length !== sent.length) return [`${path || '.'}: ${sent.length - parsed.length} invalid item(s) skipped`];
    return sent.flatMap((item, i) => losses(item, parsed[i], `${path}[${i}]`));
  }
  if (sent !== null && typeof sent === 'object') {
    if (parsed === null || typeof parsed !== 'object') return [`${path || '.'}: became ${JSON.stringify(parsed)}`];
    return Object.entries(sent).flatMap(([key, value]) =>
      key in parsed ? losses(value, (parsed as Record<string, unknown>)[key], `${path}.${key}`) : [`${path}.${key}: not in the schema (custom fields belong in _meta)`],
    );
  }
  return Object.is(sent, parsed) ? [] : [`${path || '.'}: ${JSON.stringify(sent)} is invalid (read as ${JSON.stringify(parsed)})`];
}

/** Fields whose value the schema leaves free (any JSON): no number in them is an ACP integer. (`data`
 * is an error's; elsewhere it is base64 text, with no number in it either.) */
const FREE = new Set(['_meta', 'rawInput', 'rawOutput', 'data']);

/**
 * Integers past 2^53 outside free fields. The zod schemas bound every int32/uint32/uint16 field; only
 * int64/uint64 (`wideInt`) take any integer. A double that large (a cost, a priority) is flagged too:
 * troupe writes none, and one would be a bug as well.
 */
function unsafeIntegers(value: unknown, path = ''): string[] {
  if (typeof value === 'number') return Number.isInteger(value) && !Number.isSafeInteger(value) ? [`${path || '.'}: ${value} is past 2^53 (read rounded)`] : [];
  if (Array.isArray(value)) return value.flatMap((item, i) => unsafeIntegers(item, `${path}[${i}]`));
  if (value !== null && typeof value === 'object') return Object.entries(value).flatMap(([key, v]) => (FREE.has(key) ? [] : unsafeIntegers(v, `${path}.${key}`)));
  return [];
}

/** Why `value` does not conform to the zod `schema`, losslessly: nothing if it does. `at` names it in the problems. */
export function conformance(schema: any, value: unknown, at = ''): string[] {
  const r = schema.safeParse(value);
  if (!r.success) return r.error.issues.map((i: any) => `${at}${i.path.map((k: unknown) => `.${String(k)}`).join('') || (at ? '' : '.')}: ${i.message}`);
  return [...losses(value, r.data, at), ...unsafeIntegers(value, at)];
}

/** The members JSON-RPC 2.0 gives its messages. */
const ENVELOPE = new Set(['jsonrpc', 'id', 'method', 'params', 'result', 'error']);

/** A JSON-RPC id as ACP has it (`RequestId`): a safe integer or a string; null only on an error. */
function idProblems(id: unknown, nullable: boolean): string[] {
  if (id === null) return nullable ? [] : ['id: null (only an error that cannot name its request has id null)'];
  if (typeof id === 'string' || Number.isSafeInteger(id)) return [];
  return [`id: ${JSON.stringify(id)} is not a string or a safe integer`];
}

/**
 * Why `message` (one line the agent wrote, parsed) breaks the ACP schema: nothing if it does not.
 * `requestMethod` is the method of the client request a response answers (its result is not checked
 * without one, nor the params of extension methods, `_…`, which ACP leaves free).
 */
export function acpOutgoingProblems(message: any, requestMethod?: string): string[] {
  if (message === null || typeof message !== 'object' || Array.isArray(message)) return ['not a JSON-RPC message (an object)'];
  const problems = Object.keys(message)
    .filter((key) => !ENVELOPE.has(key))
    .map((key) => `${key}: not a JSON-RPC member`);
  if (message.jsonrpc !== '2.0') problems.push(`jsonrpc: ${JSON.stringify(message.jsonrpc)}, not "2.0"`);
  if ('method' in message) {
    if (typeof message.method !== 'string') return [...problems, `method: ${JSON.stringify(message.method)} is not a string`];
    if ('result' in message || 'error' in message) problems.push('a request or notification carries no result or error');
    const outgoing = OUTGOING[message.method];
    if (!outgoing) return message.method.startsWith('_') ? problems : [...problems, `a method ACP does not have the agent send: ${message.method}`];
    if (outgoing.request) problems.push(...('id' in message ? idProblems(message.id, false) : [`${message.method} is a request: it needs an id`]));
    else if ('id' in message) problems.push(`${message.method} is a notification: it has no id`);
    return [...problems, ...conformance(outgoing.params, message.params, 'params')];
  }
  if (!('id' in message)) return [...problems, 'neither a request or notification (no method) nor a response (no id)'];
  if ('result' in message === 'error' in message) return [...problems, 'a response has exactly one of result and error'];
  problems.push(...idProblems(message.id, 'error' in message));
  if ('error' in message) return [...problems, ...conformance(stable.zError, message.error, 'error')];
  const schema = requestMethod ? RESPONSES[requestMethod] : undefined;
  return schema ? [...problems, ...conformance(schema, message.result, 'result')] : problems;
}

/** `acpOutgoingProblems` as one line, or undefined when the message conforms. */
export function acpOutgoingError(message: any, requestMethod?: string): string | undefined {
  const problems = acpOutgoingProblems(message, requestMethod);
  return problems.length ? problems.join('; ') : undefined;
}
