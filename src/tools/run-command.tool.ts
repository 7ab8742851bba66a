/** run_command: a shell command in the workspace, with a timeout and an output limit. */
import { stat } from 'node:fs/promises';
import { isTroupeError, TroupeError } from '../core/errors.js';
import type { ToolContent } from '../core/events.js';
import type { ToolResult } from '../core/ports.js';
import type { CommandOutcome } from './backends.js';
import { defineTool, titleText, type ToolDefinition, type ToolLimits, pathProperty } from './tool.js';

interface RunCommandInput {
  command: string;
  cwd?: string;
  timeout_ms?: number;
}

/** The status line appended to the output, and how the call counts. */
function verdict(outcome: CommandOutcome, timeoutMs: number, cancelled: boolean): Pick<ToolResult, 'isError' | 'errorCode'> & { line: string } {
  if (cancelled) return { line: '[cancelled; the command and its child processes were stopped]', isError: true, errorCode: 'request_cancelled' };
  if (outcome.timedOut) return { line: `[timed out after ${timeoutMs} ms; the command and its child processes were killed]`, isError: true, errorCode: 'tool_timeout' };
  if (outcome.failure) return { line: `[${outcome.failure}]`, isError: true, errorCode: outcome.failureCode ?? 'tool_failed' };
  if (outcome.exitCode === null) return { line: `[terminated by signal ${outcome.signal ?? 'unknown'}]`, isError: true, errorCode: 'tool_failed' };
  if (outcome.exitCode !== 0) return { line: `[exit code: ${outcome.exitCode}]`, isError: true, errorCode: 'tool_failed' };
  return { line: '[exit code: 0]', isError: false };
}

/** run_command's schema carries the configured maximum timeout, hence a factory. */
export function runCommandTool(limits: ToolLimits): ToolDefinition {
  const defaultSeconds = Math.round(limits.commandTimeoutMs / 1000);
  return defineTool<RunCommandInput>({
    name: 'run_command',
    description:
      'Run a shell command (sh -c) and return its combined stdout and stderr followed by "[exit code: N]". ' +
      `It runs non-interactively (stdin is empty) in the working directory or in \`cwd\`, with a timeout (default ${defaultSeconds} s) ` +
      `after which the command and every process it started are killed. Output beyond ${limits.commandOutputBytes} bytes is cut in the ` +
      'middle (the start and the end are kept). Background processes do not outlive the command. ' +
      'Use it to build, test, run git and other programs; use the file tools to read and edit files.',
    schema: {
      type: 'object',
      properties: {
        command: { type: 'string', minLength: 1, maxLength: 100_000, description: 'The shell command line, e.g. "npm test -- --grep parser".' },
        cwd: pathProperty('Directory to run in, relative to the working directory or absolute. Default: the working directory.'),
        timeout_ms: { type: 'integer', minimum: 1, maximum: limits.commandMaxTimeoutMs, description: `Timeout in milliseconds. Default ${limits.commandTimeoutMs}.` },
      },
      required: ['command'],
      additionalProperties: false,
    },
    kind: 'execute',
    access: 'execute',

    describe(input, env) {
      const where = input.cwd ? ` in ${env.guard.display(env.guard.lexical(input.cwd))}` : '';
      return { title: `Run \`${titleText(input.command, 80)}\`${where}`, locations: input.cwd ? [{ path: env.guard.lexical(input.cwd) }] : [] };
    },

    async run(input, env, ctx) {
      const dir = await env.guard.check(input.cwd ?? '.');
      const shown = env.guard.display(dir.path);
      const isDir = dir.exists && (await stat(dir.path).then((s) => s.isDirectory(), () => false));
      if (!isDir) throw new TroupeError('tool_failed', `Cannot run in ${shown}: not an existing directory.`, { path: shown });
      const timeoutMs = input.timeout_ms ?? limits.commandTimeoutMs;
      let outcome: CommandOutcome;
      try {
        outcome = await env.commands.run({ command: input.command, cwd: dir.path, timeoutMs, outputByteLimit: limits.commandOutputBytes }, ctx);
      } catch (err) {
        // A client that did not answer terminal/create in time stays a timeout (`tool_timeout`).
        throw new TroupeError(isTroupeError(err, 'tool_timeout') ? 'tool_timeout' : 'tool_failed', `Could not start the command: ${err instanceof Error ? err.message : String(err)}`);
      }
      const { line, ...status } = verdict(outcome, timeoutMs, ctx.signal.aborted);
      const output = `${outcome.output === '' ? '(no output)\n' : outcome.output.replace(/\n?$/, '\n')}${line}`;
      // A client terminal already shows the output; otherwise the output text is the content (default).
      // A terminal that failed does not show why: the reason follows it, as a cancel's does.
      const content: ToolContent[] | undefined = outcome.terminalId
        ? [{ type: 'terminal', terminalId: outcome.terminalId }, ...(outcome.failure ? [{ type: 'text' as const, text: line }] : [])]
        : undefined;
      return { output, ...status, ...(content ? { content } : {}) };
    },
  });
}
