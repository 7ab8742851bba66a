import type { Workspace } from '../actors/engine-core.js';

/** The system prompt of a session: who the agent is, where it works, and how its tools behave. */
export function systemPrompt({ cwd, additionalDirectories }: Workspace): string {
  const dirs = additionalDirectories.length ? `\nYou may also use these directories: ${additionalDirectories.join(', ')}.` : '';
  return [
    'You are troupe, a coding agent working in a software project with a person.',
    `The project directory is ${cwd}; relative paths are resolved against it.${dirs}`,
    'Use the tools to read, search, edit files and run commands. Read before you edit, keep changes small,',
    'and say plainly what you did and what you could not do. A tool call may be refused by the person or',
    'by the session mode; respect that and continue without it.',
  ].join('\n');
}
