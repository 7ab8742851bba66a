/**
 * Session modes: how much a session may do without asking. The list is what the ACP agent
 * advertises as session modes (and the mode config option); the policy in permission.policy.ts
 * gives each mode its meaning.
 */

export interface SessionMode {
  id: string;
  name: string;
  description: string;
}

export const SESSION_MODES = [
  { id: 'default', name: 'Default', description: 'Reads freely; asks before editing files and before running commands.' },
  { id: 'accept-edits', name: 'Accept edits', description: 'Reads and edits files freely; asks before running commands.' },
  { id: 'plan', name: 'Plan', description: 'Read-only: reads and searches, never edits files or runs commands.' },
  { id: 'bypass', name: 'Bypass permissions', description: 'Never asks: reads, edits and runs commands freely (except tools you chose to always reject).' },
] as const satisfies readonly SessionMode[];

export type SessionModeId = (typeof SESSION_MODES)[number]['id'];

/** The mode of a new session. */
export const DEFAULT_MODE_ID: SessionModeId = 'default';

export function isSessionModeId(value: unknown): value is SessionModeId {
  return SESSION_MODES.some((mode) => mode.id === value);
}
