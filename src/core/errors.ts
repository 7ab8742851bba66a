/**
 * Stable error codes. Two families share one table (spec/errors.md): local errors carry the string
 * `code`; on the wire they become JSON-RPC errors with the numeric `rpc` code and the string code in
 * `data.code`. A test checks that spec/errors.md and this table agree.
 */
export const ERROR_CODES = {
  // JSON-RPC and ACP protocol errors.
  parse_error: { rpc: -32700, http: 400, summary: 'The message is not valid JSON.' },
  invalid_request: { rpc: -32600, http: 400, summary: 'The message is not a valid JSON-RPC request.' },
  method_not_found: { rpc: -32601, http: 404, summary: 'No such method.' },
  invalid_params: { rpc: -32602, http: 400, summary: 'The parameters do not match the method.' },
  internal_error: { rpc: -32603, http: 500, summary: 'A bug or an unexpected failure inside troupe.' },
  request_cancelled: { rpc: -32800, http: 499, summary: 'The request was cancelled by its sender.' },
  auth_required: { rpc: -32000, http: 401, summary: 'Authentication is required.' },
  session_not_found: { rpc: -32002, http: 404, summary: 'No session with this id (data.sessionId names it).' },
  // Session and turn lifecycle.
  turn_mismatch: { rpc: -32010, http: 409, summary: 'A steer named a turn that is not the running turn.' },
  no_active_turn: { rpc: -32011, http: 409, summary: 'A steer arrived while no turn was running.' },
  session_closed: { rpc: -32012, http: 409, summary: 'The session is closed; it accepts no more prompts.' },
  turn_ended: { rpc: -32013, http: 409, summary: 'Accepted guidance could not be delivered because its turn ended first.' },
  session_busy: { rpc: -32014, http: 409, summary: 'The session cannot do this while a turn runs.' },
  // Event log and cursors.
  replay_gap: { rpc: -32020, http: 410, summary: 'Events after the cursor are no longer available; reload the session.' },
  invalid_cursor: { rpc: -32021, http: 400, summary: 'The cursor is beyond the latest seq or malformed.' },
  event_overflow: { rpc: -32022, http: 503, summary: 'A watcher fell too far behind; its stream was ended.' },
  event_too_large: { rpc: -32023, http: 413, summary: 'An event is larger than the configured limit.' },
  invalid_event_payload: { rpc: -32024, http: 400, summary: 'An event payload is not strict JSON.' },
  log_corrupt: { rpc: -32025, http: 500, summary: 'A log file is damaged beyond its recoverable prefix.' },
  log_write_failed: { rpc: -32026, http: 507, summary: "The session's event log cannot be written (a full or failing disk; data.cause is the errno)." },
  index_write_failed: { rpc: -32027, http: 507, summary: 'The session index cannot be written (a full or failing disk; data.cause is the errno).' },
  log_read_failed: { rpc: -32028, http: 500, summary: 'A log file cannot be read (no permission, a failing disk; data.cause is the errno).' },
  // Tools and permissions.
  path_outside_workspace: { rpc: -32030, http: 403, summary: 'A path resolves outside the session cwd and its additional directories.' },
  permission_denied: { rpc: -32031, http: 403, summary: 'The tool call was rejected, by a person or by the mode.' },
  tool_failed: { rpc: -32032, http: 500, summary: 'A tool ran and failed.' },
  tool_timeout: { rpc: -32033, http: 504, summary: 'A tool, a permission request, or the client\'s answer to a request of the agent\'s (a file read or write, a terminal\'s creation or output) ran out of time.' },
  unknown_tool: { rpc: -32034, http: 400, summary: 'The model called a tool that does not exist.' },
  // Models and providers.
  context_overflow: { rpc: -32040, http: 413, summary: 'The conversation does not fit the model context window, even after compaction.' },
  provider_auth: { rpc: -32041, http: 401, summary: 'The model provider refused the credentials.' },
  provider_rate_limited: { rpc: -32042, http: 429, summary: 'The model provider is rate limiting; data.retryAfterMs says when to retry.' },
  provider_overloaded: { rpc: -32043, http: 503, summary: 'The model provider is overloaded.' },
  provider_invalid_request: { rpc: -32044, http: 400, summary: 'The model provider rejected the request.' },
  provider_network: { rpc: -32045, http: 502, summary: 'The model provider could not be reached, or its stream broke or stalled.' },
  model_not_found: { rpc: -32046, http: 400, summary: 'No provider serves this model id.' },
  provider_quota_exceeded: { rpc: -32047, http: 402, summary: "The model provider's account has no quota or credit left for the call; retrying does not help." },
  // Daemon and supervision.
  agent_crashed: { rpc: -32050, http: 502, summary: 'The session process died during the request.' },
  session_failed: { rpc: -32051, http: 503, summary: 'The session crashed too often and is no longer restarted.' },
  capacity_exceeded: { rpc: -32052, http: 503, summary: 'A configured limit (connections, event streams, live sessions) is reached, or the process is shutting down: the daemon, or a `troupe acp` asked, as it stops, for a new session (session/new, a fork) or for one to open from its log.' },
  unauthorized: { rpc: -32053, http: 401, summary: 'No bearer token was presented.' },
  forbidden: { rpc: -32054, http: 403, summary: 'The token or the Origin is not accepted.' },
  payload_too_large: { rpc: -32055, http: 413, summary: 'A request body is over the size limit.' },
  connection_not_found: { rpc: -32056, http: 404, summary: 'No live transport connection has this Acp-Connection-Id.' },
  stream_conflict: { rpc: -32057, http: 409, summary: 'This SSE stream already has an active receiver.' },
  daemon_running: { rpc: -32058, http: 409, summary: 'Another daemon already serves this TROUPE_HOME (data.pid names it).' },
  listen_failed: { rpc: -32059, http: 500, summary: 'The daemon cannot listen on its host and port (data.reason: EADDRINUSE, EACCES, EADDRNOTAVAIL…).' },
  session_locked: { rpc: -32060, http: 409, summary: 'The session is open for writing in another troupe process (data.pid names it).' },
  session_not_failed: { rpc: -32061, http: 409, summary: 'The session has not failed; there is nothing to revive.' },
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/** A local error with a stable string code. `data` is extra detail safe to show to a client. */
export class TroupeError extends Error {
  readonly code: ErrorCode;
  readonly data: Record<string, unknown>;
  constructor(code: ErrorCode, message: string, data: Record<string, unknown> = {}) {
    super(message);
    this.name = 'TroupeError';
    this.code = code;
    this.data = data;
  }

  /** The JSON-RPC error object for this error: numeric code, message, and the string code in data. */
  toRpc(): { code: number; message: string; data: Record<string, unknown> } {
    return { code: ERROR_CODES[this.code].rpc, message: this.message, data: { ...this.data, code: this.code } };
  }
}

export function isTroupeError(err: unknown, code?: ErrorCode): err is TroupeError {
  return err instanceof TroupeError && (code === undefined || err.code === code);
}
