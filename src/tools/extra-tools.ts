/**
 * A session's tool host: the workspace's built-in tools, plus tools from elsewhere (its MCP
 * servers) that can change while the session lives. Built-in names never start with `mcp__`.
 */
import { TroupeError } from '../core/errors.js';
import type { ToolHost } from '../core/ports.js';

export type ExtraTools = ToolHost & { has(name: string): boolean };

export function withExtraTools(base: ToolHost, extra: () => ExtraTools | undefined): ToolHost {
  const specs = () => {
    const more = extra()?.specs();
    return more?.length ? [...base.specs(), ...more] : base.specs();
  };
  // A name neither serves: the model is told every tool it has, the extra ones too.
  const unknown = (name: string) => new TroupeError('unknown_tool', `There is no tool named "${name}". Available: ${specs().map((s) => s.name).join(', ')}.`, { tool: name });
  const served = (name: string) => base.specs().some((s) => s.name === name);
  return {
    specs,
    describe(call) {
      const more = extra();
      if (more?.has(call.name)) return more.describe(call);
      if (more && !served(call.name)) throw unknown(call.name);
      return base.describe(call);
    },
    async preview(call, signal) {
      const more = extra();
      if (more?.has(call.name)) return more.preview?.(call, signal);
      return served(call.name) ? base.preview?.(call, signal) : undefined;
    },
    async run(call, ctx) {
      const more = extra();
      if (more?.has(call.name)) return more.run(call, ctx);
      if (more && !served(call.name)) return { output: unknown(call.name).message, isError: true, errorCode: 'unknown_tool' };
      return base.run(call, ctx);
    },
  };
}
