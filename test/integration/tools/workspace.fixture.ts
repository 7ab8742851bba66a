// A throw-away workspace on the real file system: the session cwd, an additional directory, and an
// "outside" directory with files that no tool may read or change.
import { mkdtempSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { ToolCallRequest, ToolHost, ToolResult, ToolRunContext } from '../../../src/core/ports.js';
import type { ToolContent } from '../../../src/core/events.js';

export const SECRET = 'TOP SECRET: must never be read by a tool\n';

export interface Workspace {
  root: string;
  cwd: string;
  extra: string;
  outside: string;
  /** Absolute path of a file outside the workspace. */
  secret: string;
  write(rel: string, content: string): string;
  read(abs: string): string;
  dispose(): void;
}

export function makeWorkspace(): Workspace {
  // realpath: the temp dir may itself sit behind a symlink (macOS /tmp), which would blur the tests.
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'troupe-tools-')));
  const cwd = join(root, 'ws');
  const extra = join(root, 'extra');
  const outside = join(root, 'outside');
  for (const d of [cwd, extra, outside]) mkdirSync(d);
  const secret = join(outside, 'secret.txt');
  writeFileSync(secret, SECRET);
  return {
    root,
    cwd,
    extra,
    outside,
    secret,
    write(rel, content) {
      const abs = join(cwd, rel);
      mkdirSync(dirname(abs), { recursive: true });
      writeFileSync(abs, content);
      return abs;
    },
    read: (abs) => readFileSync(abs, 'utf8'),
    dispose: () => rmSync(root, { recursive: true, force: true }),
  };
}

let counter = 0;

/** A run context that records every update. */
export function runContext(signal: AbortSignal = new AbortController().signal): ToolRunContext & { updates: ToolContent[][] } {
  const updates: ToolContent[][] = [];
  return { signal, updates, update: (content) => updates.push(content) };
}

export function call(name: string, input: Record<string, unknown>): ToolCallRequest {
  return { id: `call_${++counter}`, name, input };
}

/** Runs one call with a fresh context. */
export function run(host: ToolHost, name: string, input: Record<string, unknown>, signal?: AbortSignal): Promise<ToolResult> {
  return host.run(call(name, input), runContext(signal));
}
