/**
 * Every request method `troupe acp` answers: src/acp/agent.app.ts registers each one, and a test
 * (test/unit/acp/agent-methods.test.ts) keeps the two the same. The daemon wakes a resting session's
 * child only for one of these: to any other the child would only answer -32601.
 */
export const AGENT_REQUEST_METHODS: ReadonlySet<string> = new Set([
  'initialize',
  'authenticate',
  'session/new',
  'session/load',
  'session/resume',
  'session/list',
  'session/close',
  'session/delete',
  'session/fork',
  'session/set_mode',
  'session/set_config_option',
  'session/prompt',
  '_troupe/steer',
  '_troupe/session_state',
]);
