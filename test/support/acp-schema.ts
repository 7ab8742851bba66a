// Validates what troupe writes on the wire against the ACP SDK's JSON Schemas (schema/v1/schema.json;
// schema.unstable.json for unstable methods): each message against the root schema, and each
// response, agent request and notification against its own definition.
import { createRequire } from 'node:module';
import { Ajv2020 } from 'ajv/dist/2020.js';

const require = createRequire(import.meta.url);
const stable = require('@agentclientprotocol/sdk/schema/v1/schema.json');
const unstable = require('@agentclientprotocol/sdk/schema/v1/schema.unstable.json');

const ajv = new Ajv2020({ allErrors: true, strict: false });
const range = (min: number, max: number) => ({ type: 'number' as const, validate: (n: number) => Number.isInteger(n) && n >= min && n <= max });
ajv.addFormat('int32', range(-(2 ** 31), 2 ** 31 - 1));
ajv.addFormat('int64', range(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER));
ajv.addFormat('uint16', range(0, 65535));
ajv.addFormat('uint32', range(0, 2 ** 32 - 1));
ajv.addFormat('uint64', range(0, Number.MAX_SAFE_INTEGER));
ajv.addFormat('double', { type: 'number', validate: (n: number) => Number.isFinite(n) });
ajv.addFormat('uri', { type: 'string', validate: (s: string) => /^[a-z][a-z0-9+.-]*:/i.test(s) });
ajv.addSchema({ ...stable, $id: 'acp' });
ajv.addSchema({ ...unstable, $id: 'acp-unstable' });

const cache = new Map<string, ReturnType<typeof ajv.compile>>();
function validator(ref: string) {
  let v = cache.get(ref);
  if (!v) cache.set(ref, (v = ajv.compile({ $ref: ref })));
  return v;
}

/** The definition a response to `method` must match (undefined: an extension method, any result). */
const RESPONSES: Record<string, string> = {
  initialize: 'acp#/$defs/InitializeResponse',
  'session/new': 'acp#/$defs/NewSessionResponse',
  'session/load': 'acp#/$defs/LoadSessionResponse',
  'session/list': 'acp#/$defs/ListSessionsResponse',
  'session/delete': 'acp#/$defs/DeleteSessionResponse',
  'session/resume': 'acp#/$defs/ResumeSessionResponse',
  'session/close': 'acp#/$defs/CloseSessionResponse',
  'session/set_mode': 'acp#/$defs/SetSessionModeResponse',
  'session/set_config_option': 'acp#/$defs/SetSessionConfigOptionResponse',
  'session/prompt': 'acp#/$defs/PromptResponse',
  'session/fork': 'acp-unstable#/$defs/ForkSessionResponse',
};

/** Agent → client requests and notifications. */
const OUTGOING: Record<string, string> = {
  'session/update': 'acp#/$defs/SessionNotification',
  '$/cancel_request': 'acp#/$defs/CancelRequestNotification',
  'session/request_permission': 'acp#/$defs/RequestPermissionRequest',
  'fs/read_text_file': 'acp#/$defs/ReadTextFileRequest',
  'fs/write_text_file': 'acp#/$defs/WriteTextFileRequest',
  'terminal/create': 'acp#/$defs/CreateTerminalRequest',
  'terminal/output': 'acp#/$defs/TerminalOutputRequest',
  'terminal/wait_for_exit': 'acp#/$defs/WaitForTerminalExitRequest',
  'terminal/kill': 'acp#/$defs/KillTerminalRequest',
  'terminal/release': 'acp#/$defs/ReleaseTerminalRequest',
};

function check(ref: string, value: unknown): string | undefined {
  const v = validator(ref);
  return v(value) ? undefined : `${ref}: ${ajv.errorsText(v.errors)}`;
}

/**
 * Why `message` (written by the agent) breaks the schema, or undefined. `requestMethod` is the method
 * of the client request a response answers.
 */
export function acpOutgoingError(message: any, requestMethod?: string): string | undefined {
  const root = check('acp', message);
  if (root) return root;
  if ('method' in message) {
    const ref = OUTGOING[message.method];
    if (!ref) return message.method.startsWith('_') ? undefined : `unexpected agent message ${message.method}`;
    return check(ref, message.params);
  }
  if ('error' in message) return check('acp#/$defs/Error', message.error);
  const ref = requestMethod ? RESPONSES[requestMethod] : undefined;
  return ref ? check(ref, message.result) : undefined;
}
