/**
 * The permission policy: the mode table plus the session's remembered "always" answers.
 *
 * Order of precedence (first that applies wins):
 * 1. `read` access is always allowed (by policy), in every mode.
 * 2. `plan` mode denies `edit` and `execute` (by policy), even over a remembered allow.
 * 3. A remembered answer for the tool name: allow → allow, reject → deny (by `remembered`).
 * 4. The mode: `bypass` allows all; `accept-edits` allows edits and asks for commands;
 *    `default` (and any unknown mode, the cautious reading) asks.
 */
import type { PermissionDecision, PermissionPolicy, ToolCallRequest, ToolDescription } from '../core/ports.js';
import type { SessionModeId } from './modes.js';

function modeDecision(mode: string, access: 'edit' | 'execute'): PermissionDecision {
  switch (mode as SessionModeId) {
    case 'bypass':
      return { kind: 'allow', by: 'policy' };
    case 'accept-edits':
      return access === 'edit' ? { kind: 'allow', by: 'policy' } : { kind: 'ask' };
    default:
      return { kind: 'ask' };
  }
}

/** The mode policy of troupe's built-in modes (see modes.ts). */
export const modePermissionPolicy: PermissionPolicy = {
  decide(call: ToolCallRequest, description: ToolDescription, mode: string, remembered: ReadonlyMap<string, 'allow' | 'reject'>): PermissionDecision {
    const access = description.access;
    if (access === 'read') return { kind: 'allow', by: 'policy' };
    if (mode === 'plan') {
      const what = access === 'edit' ? 'edit files' : 'run commands';
      return {
        kind: 'deny',
        by: 'policy',
        reason: `Plan mode is read-only: ${call.name} (${description.title}) would ${what}. Describe the change in your plan instead, or ask the user to switch to another mode.`,
      };
    }
    const answer = remembered.get(call.name);
    if (answer === 'allow') return { kind: 'allow', by: 'remembered' };
    if (answer === 'reject') return { kind: 'deny', by: 'remembered', reason: `The user chose to always reject ${call.name} in this session.` };
    return modeDecision(mode, access);
  },
};

/** Factory form, for symmetry with the other ports. */
export function createPermissionPolicy(): PermissionPolicy {
  return modePermissionPolicy;
}
