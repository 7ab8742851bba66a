/**
 * The built-in tool host of a session: read_file, write_file, edit_file, list_dir, glob, grep and
 * run_command, all confined to the session's workspace by one PathGuard, with file and command
 * access going through injectable backends (local by default, the ACP client's when it offers).
 */
import { TroupeError } from '../core/errors.js';
import type { ToolCallRequest, ToolDescription, ToolHost, ToolResult, ToolRunContext } from '../core/ports.js';
import type { ToolContent } from '../core/events.js';
import type { ToolSpec } from '../core/provider.js';
import type { CommandBackend, FileBackend } from './backends.js';
import { editFileTool } from './edit-file.tool.js';
import { globTool } from './glob.tool.js';
import { grepTool } from './grep.tool.js';
import { validateInput } from './input-schema.js';
import { createLocalCommandBackend } from './local-command.backend.js';
import { createLocalFileBackend } from './local-file.backend.js';
import { listDirTool } from './list-dir.tool.js';
import { updatePlanTool } from './update-plan.tool.js';
import { PathGuard } from './path-guard.js';
import { readFileTool } from './read-file.tool.js';
import { runCommandTool } from './run-command.tool.js';
import { DEFAULT_LIMITS, specOf, type ToolDefinition, type ToolEnv, type ToolLimits } from './tool.js';
import { writeFileTool } from './write-file.tool.js';

export interface WorkspaceToolsOptions {
  /** The session cwd (absolute). Relative tool paths resolve against it. */
  cwd: string;
  /** Further absolute directories the tools may use: a list, or the session's list as it is now. */
  additionalDirectories?: readonly string[] | (() => readonly string[]);
  /**
   * Where file reads and writes go; default: the local disk, each open checked against this host's
   * path guard. A function gets that local backend to build on (a client's editor buffers falling
   * back to it).
   */
  files?: FileBackend | ((local: FileBackend) => FileBackend);
  /** Where commands run; default: local `sh -c` in a process group. */
  commands?: CommandBackend;
  limits?: Partial<ToolLimits>;
}

/** Turns anything a tool threw into the result the model sees. */
function failure(err: unknown): ToolResult {
  const e = err instanceof TroupeError ? err : new TroupeError('tool_failed', err instanceof Error ? err.message : String(err));
  return { output: e.message, isError: true, errorCode: e.code };
}

const cancelled = (): ToolResult => ({ output: 'Cancelled before it finished.', isError: true, errorCode: 'request_cancelled' });

/** Creates the tool host for one session. Throws `invalid_params` for a relative cwd or directory. */
export function createWorkspaceTools(options: WorkspaceToolsOptions): ToolHost {
  const limits: ToolLimits = { ...DEFAULT_LIMITS, ...options.limits };
  const guard = new PathGuard(options.cwd, options.additionalDirectories ?? []);
  const local = () => createLocalFileBackend({ confine: (real) => guard.containsReal(real) });
  const env: ToolEnv = {
    guard,
    files: options.files === undefined ? local() : typeof options.files === 'function' ? options.files(local()) : options.files,
    commands: options.commands ?? createLocalCommandBackend(),
    limits,
  };
  const tools = new Map<string, ToolDefinition>(
    [readFileTool, writeFileTool, editFileTool, listDirTool, globTool, grepTool, runCommandTool, updatePlanTool].map((make) => make(limits)).map((t) => [t.name, t]),
  );
  const specs: ToolSpec[] = [...tools.values()].map(specOf);

  /** The tool for a call whose input is valid; throws `unknown_tool` / `invalid_params`. */
  function admit(call: ToolCallRequest): ToolDefinition {
    const tool = tools.get(call.name);
    if (!tool) throw new TroupeError('unknown_tool', `There is no tool named "${call.name}". Available: ${[...tools.keys()].join(', ')}.`, { tool: call.name });
    validateInput(tool.name, tool.schema, call.input);
    tool.check?.(call.input, env);
    return tool;
  }

  return {
    specs: () => specs,

    describe(call: ToolCallRequest): ToolDescription {
      const tool = admit(call);
      const { title, locations } = tool.describe(call.input, env);
      return { kind: tool.kind, title, locations, access: tool.access };
    },

    async preview(call: ToolCallRequest, signal: AbortSignal): Promise<ToolContent[] | undefined> {
      // A call that would fail throws what its run would report: the engine judges whether it can
      // succeed at all, and then asks nobody to allow it (src/actors/tool.effects.ts).
      return admit(call).preview?.(call.input, env, signal);
    },

    async run(call: ToolCallRequest, ctx: ToolRunContext): Promise<ToolResult> {
      let tool: ToolDefinition;
      try {
        tool = admit(call);
      } catch (err) {
        return failure(err);
      }
      if (ctx.signal.aborted) return cancelled();
      try {
        return await tool.run(call.input, env, ctx);
      } catch (err) {
        if (ctx.signal.aborted) return cancelled();
        return failure(err);
      }
    },
  };
}
