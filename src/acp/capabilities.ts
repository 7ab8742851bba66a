/**
 * What troupe answers to `initialize`, in one place: the stdio agent and the daemon (which answers
 * initialize itself before any child exists) must advertise exactly the same agent.
 */
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
