/**
 * Which request ids troupe takes from a client, one rule for every transport: the daemon's HTTP and
 * WebSocket sides (src/daemon/http/acp/acp-protocol.ts) and `troupe acp` on stdio
 * (src/acp/request-gate.ts). Here, not in the daemon, so that the stdio agent, which may not import
 * the daemon, follows the same one (spec/transport.md §1, spec/daemon.md).
 */

/**
 * A request id troupe takes from a client: a string, null, or an integer it echoes exactly, one
 * within ±(2^53 − 1). ACP's schema (RequestId) allows an integer, a string or null; JSON-RPC 2.0
 * says numbers SHOULD NOT have fractional parts, and the server MUST answer with the same value.
 * `1.5` is no ACP id, and its answer would not validate against the schema; a larger integer
 * (`9007199254740993`) is read as its nearest double, and was answered under another id
 * (`9007199254740992`), equal to a third request's; `1e400` parses to Infinity. No parsed id above
 * 2^53 − 1 can be told from its neighbours, so the parsed value is enough to refuse them all: the
 * raw text is not needed. Each such request is refused -32600 with id null, as one whose id is an
 * object is. The SDK (2.4.0) takes any finite number; troupe did until 2026-12-07.
 */
export function isRequestId(id: unknown): boolean {
  return id === null || typeof id === 'string' || Number.isSafeInteger(id);
}
