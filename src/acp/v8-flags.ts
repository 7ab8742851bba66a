/**
 * The V8 flags of a `troupe acp` process, set at run time before the agent's code runs, however it
 * was started: bin/troupe.js for an editor's agent or a bundle child, and the startup snapshot's main
 * function for a daemon child started from the blob (command-line heap flags would not match the
 * blob's). `troupe acp` is a small process that mostly waits on its client (docs/editors.md,
 * "Memory"): keep the young generation at its first size (1 MiB semi-spaces instead of growing to
 * 16 MiB), and let only code that stays hot reach the optimizing compiler (5x V8's budget), so that
 * code run once at start-up is not compiled twice and its compiler memory kept, and a streamed
 * reply's hot loop is compiled once its types have settled, not speculatively and then again
 * (bench/child-stream.ts). TROUPE_ACP_V8_FLAGS replaces the list (empty: V8's defaults).
 */
import { setFlagsFromString } from 'node:v8';

export const DEFAULT_ACP_V8_FLAGS = '--semi-space-growth-factor=1 --interrupt-budget=337920';

/** Sets the flags; returns them (a code cache is only valid under the flags it was made with). */
export function applyAcpV8Flags(env: NodeJS.ProcessEnv): string {
  const flags = env.TROUPE_ACP_V8_FLAGS ?? DEFAULT_ACP_V8_FLAGS;
  if (flags.trim()) setFlagsFromString(flags);
  return flags;
}
