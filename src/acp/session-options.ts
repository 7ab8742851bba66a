/**
 * What a client may choose per session: the mode (ACP session modes, and the `mode` config option)
 * and the model (the `model` config option, category "model"). Both are sent complete every time,
 * as ACP requires, and kept in sync with each other.
 */
import { resolve, sep } from 'node:path';
import type * as acp from '@agentclientprotocol/sdk';
import { TroupeError } from '../core/errors.js';
import { SESSION_MODES } from '../tools/modes.js';
import { kernelDirectory } from '../tools/kernel-directory.js';

/**
 * Whether `cwd` names the directory a session was created in. Compared as resolved paths (a trailing
 * slash or a `..` is the same directory, a `..` after a symlink as the kernel takes it:
 * kernelDirectory), as the session index stores them: the cwd session/list gives for a session
 * always loads it.
 */
export function sameCwd(sessionCwd: string, cwd: string): boolean {
  if (sessionCwd === cwd || kernelDirectory(sessionCwd) === kernelDirectory(cwd)) return true;
  // A session logged before 2026-12-07 with a `..` in its cwd (kept as given then; sessionCwd keeps
  // the kernel's directory since): its index entry holds that cwd resolved as text, which session/list
  // gives and the daemon resumes it with (its index entry's cwd). Refused (2026-12-07, until this),
  // such a session could not be loaded with the cwd it was listed with, nor resumed by the daemon.
  return sessionCwd.split(sep).includes('..') && resolve(sessionCwd) === resolve(cwd);
}

/** A session is loaded or resumed with the cwd it was created with, or not at all. */
export function cwdMismatch(sessionId: string, cwd: string): TroupeError {
  return new TroupeError('invalid_params', `session ${sessionId} works in ${cwd}; a session's cwd never changes (another directory means another session)`);
}

export function modeState(currentModeId: string): acp.SessionModeState {
  return { currentModeId, availableModes: SESSION_MODES.map((m) => ({ id: m.id, name: m.name, description: m.description })) };
}

/** `models` is every model id a client may pick (usable providers' catalogues). */
export function configOptions(current: { mode: string; model: string }, models: { id: string; description?: string }[]): acp.SessionConfigOption[] {
  const modelChoices = models.some((m) => m.id === current.model) ? models : [{ id: current.model }, ...models];
  return [
    {
      id: 'mode',
      name: 'Mode',
      description: 'How much the agent may do without asking.',
      category: 'mode',
      type: 'select',
      currentValue: current.mode,
      options: SESSION_MODES.map((m) => ({ value: m.id, name: m.name, description: m.description })),
    },
    {
      id: 'model',
      name: 'Model',
      description: 'The model that answers in this session.',
      category: 'model',
      type: 'select',
      currentValue: current.model,
      options: modelChoices.map((m) => ({ value: m.id, name: m.id, ...(m.description ? { description: m.description } : {}) })),
    },
  ];
}

/** The `session/update` that tells a client a session's slash commands. */
export function commandsUpdate(sessionId: string, availableCommands: acp.AvailableCommand[]): acp.SessionNotification {
  return { sessionId, update: { sessionUpdate: 'available_commands_update', availableCommands } };
}

/** The slash commands troupe understands in a prompt (`available_commands_update`). */
export const SLASH_COMMANDS: acp.AvailableCommand[] = [
  { name: 'compact', description: 'Summarize older turns now to free context.' },
  { name: 'mode', description: 'Switch the session mode: default, accept-edits, plan or bypass.', input: { hint: 'mode id' } },
  { name: 'model', description: 'Switch the model for the next turns.', input: { hint: 'provider/model' } },
];
