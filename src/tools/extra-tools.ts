/**
 * A session's tool host: the workspace's built-in tools, plus tools from elsewhere (its MCP
 * servers) that can change while the session lives. Built-in names never start with `mcp__`.
 */
import type { ToolHost } from '../core/ports.js';

export type ExtraTools = ToolHost & { has(name: string): boolean };

export function withExtraTools(base: ToolHost, extra: () => ExtraTools | undefined): ToolHost {
  return {
    specs() {
      const more = extra()?.specs();
      return more?.length ? [...base.specs(), ...more] : base.specs();
    },
    describe(call) {
      const more = extra();
      return more?.has(call.name) ? more.describe(call) : base.describe(call);
    },
    run(call, ctx) {
      const more = extra();
      return more?.has(call.name) ? more.run(call, ctx) : base.run(call, ctx);
    },
  };
}
