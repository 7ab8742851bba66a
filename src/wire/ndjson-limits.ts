/**
 * The most one NDJSON line of ACP may take, in bytes without its line ending: the ACP SDK's own
 * default limit (`ndJsonStream`), so what editors built on it read. troupe reads no more on its stdin
 * (src/acp/oversized-lines.ts), and writes no more either: a longer line ends the reader's
 * connection, every session of the editor with it.
 */
export const MAX_LINE_BYTES = 32 * 1024 * 1024;
