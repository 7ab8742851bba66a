/**
 * What troupe answers to `initialize`, in one place: the stdio agent and the daemon (which answers
 * initialize itself before any child exists) must advertise exactly the same agent.
 */
import { TroupeError } from '../core/errors.js';
import { oneLineClipped } from '../core/one-line.js';
import { VERSION } from '../core/version.js';

export function initializeResult(images: boolean) {
  return {
    protocolVersion: 1,
    agentInfo: { name: 'troupe', title: 'troupe', version: VERSION },
    authMethods: [],
    agentCapabilities: {
      loadSession: true,
      promptCapabilities: { image: images, audio: false, embeddedContext: true },
      // stdio MCP servers need no capability: every agent takes them (spec/tools.md §7).
      mcpCapabilities: { http: true, sse: true },
      sessionCapabilities: { list: {}, delete: {}, resume: {}, close: {}, additionalDirectories: {} },
      _meta: {
        troupe: {
          version: VERSION,
          steer: { method: '_troupe/steer' },
          sessionState: { method: '_troupe/session_state' },
          fork: { method: 'session/fork' },
          promptQueueing: true,
        },
      },
    },
  };
}

/**
 * The answer to `authenticate`, a baseline method of every ACP agent (docs: protocol/overview): its
 * `methodId` "must be one of the methods advertised in the initialize response" (the schema), and
 * troupe advertises none, so every call names a method troupe does not have (`invalid_params`). Until
 * 2026-12-07 both faces answered -32601 method not found, as if the agent lacked the method.
 */
export function authenticateRefusal(methodId: unknown): TroupeError {
  const named = typeof methodId === 'string' ? JSON.stringify(oneLineClipped(methodId, 60)) : 'no method';
  return new TroupeError(
    'invalid_params',
    `troupe needs no authentication: it advertises no authentication methods (authMethods is []), so there is ${typeof methodId === 'string' ? `no method ${named}` : named} to authenticate with. Model keys are read from the agent's environment or its config file.`,
    { ...(typeof methodId === 'string' ? { methodId: oneLineClipped(methodId, 60) } : {}), authMethods: [] },
  );
}
