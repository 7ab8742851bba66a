/**
 * The largest request the daemon's `/acp` endpoint takes by default: a POST body or a WebSocket
 * message (docs/daemon.md §Limits a client meets). Here, not in the daemon, so that the CLI, which
 * may not import the daemon, knows what a prompt of its can be before it sends one.
 */
export const MAX_ACP_BODY_BYTES = 16 * 1024 * 1024;
