import type { Workspace } from '../actors/engine-core.js';
import { MAX_TOTAL_INSTRUCTIONS_BYTES, type ProjectInstructions } from './project-instructions.js';

/**
 * The system prompt of a session: who the agent is, where it works, how its tools behave, and the
 * project's own instructions (its AGENTS.md files: project-instructions.ts).
 */
export function systemPrompt({ cwd, additionalDirectories }: Workspace, instructions: readonly ProjectInstructions[] & { omitted?: number } = []): string {
  const dirs = additionalDirectories.length ? `\nYou may also use these directories: ${additionalDirectories.join(', ')}.` : '';
  const lines = [
    'You are troupe, a coding agent working in a software project with a person.',
    `The project directory is ${cwd}; relative paths are resolved against it.${dirs}`,
    'Use the tools to read, search, edit files and run commands. Read before you edit, keep changes small,',
    'and say plainly what you did and what you could not do. A tool call may be refused by the person or',
    'by the session mode; respect that and continue without it.',
  ];
  if (instructions.length) {
    lines.push(
      '',
      "The project's instructions for coding agents follow, from its AGENTS.md files. Follow them; where two disagree, the later one (in a deeper directory) wins, and what the person asks wins over both.",
    );
    for (const file of instructions) {
      lines.push('', `<instructions file="${file.path}">`, file.text, ...(file.truncated ? [`[… cut: only the beginning of this file is given]`] : []), '</instructions>');
    }
    if (instructions.omitted) lines.push('', `[${instructions.omitted} more AGENTS.md file(s) left out: the instructions are given at most ${MAX_TOTAL_INSTRUCTIONS_BYTES} bytes]`);
  }
  return lines.join('\n');
}
