/**
 * The times an operator may give a session's MCP servers through the environment (spec/tools.md §7):
 * TROUPE_MCP_START_TIMEOUT_MS and TROUPE_MCP_CALL_MAX_MS. Both become timers, which is why a value
 * is read strictly: Node runs a timer of more than 2^31-1 ms after 1 ms (TimeoutOverflowWarning),
 * so until 2026-12-07 a "practically no bound" such as 9999999999 made every MCP call end
 * `tool_timeout` at once (and every server start fail), and 0, a negative number or a typo fell
 * back to the default without a word.
 */
import type { Logger } from '../core/ports.js';
import { timeoutMsFromEnv } from '../core/option-values.js';

/** How long a server may take to start and list its tools (TROUPE_MCP_START_TIMEOUT_MS). */
export const DEFAULT_START_TIMEOUT_MS = 20_000;
/**
 * How long one tool call may take in all, progress or not (TROUPE_MCP_CALL_MAX_MS): generous, an
 * hour, for work that reports progress as it goes, yet a bound for a server that reports progress
 * for ever (a person can cancel such a call; `troupe run` and a daemon's unattended session cannot).
 */
export const DEFAULT_CALL_MAX_TOTAL_MS = 3_600_000;

export interface McpLimits {
  startTimeoutMs: number;
  callMaxTotalMs: number;
}

/** The MCP times of this process, from its environment (warnings to `logger`). */
export function mcpLimitsFromEnv(env: NodeJS.ProcessEnv, logger: Logger): McpLimits {
  return {
    startTimeoutMs: timeoutMsFromEnv(env, 'TROUPE_MCP_START_TIMEOUT_MS', DEFAULT_START_TIMEOUT_MS, logger),
    callMaxTotalMs: timeoutMsFromEnv(env, 'TROUPE_MCP_CALL_MAX_MS', DEFAULT_CALL_MAX_TOTAL_MS, logger),
  };
}
