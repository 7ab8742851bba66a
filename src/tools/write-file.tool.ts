/** write_file: create or replace a whole file; parent directories are created as needed. */
import { lstat, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { TroupeError } from '../core/errors.js';
import { makeDirectories } from './confined-mkdir.js';
import { notUtf8NameError } from './non-utf8-names.js';
import { refuseDirectoryName, shownName, type GuardedPath } from './path-guard.js';
import { defineTool, fileError, fileSize, type ToolDefinition, type ToolEnv, type ToolLimits, pathProperty } from './tool.js';
import { refuseUnwritableBuffer, unsavedBuffer } from './unsaved-buffer.js';

interface WriteFileInput {
  path: string;
  content: string;
}

/** Where `input` writes and what it replaces (null: nothing, or too large to show), written nowhere yet. */
async function planWrite(input: WriteFileInput, env: ToolEnv, signal: AbortSignal) {
  const target = await env.guard.check(input.path);
  const shown = env.guard.display(target.path);
  // Writing would create a *file* named like the directory the model meant.
  refuseDirectoryName(input.path, shown, 'write_file');
  if (!target.exists) {
    // The U+FFFD reading of a name that is not UTF-8 would create a second file beside it.
    const notUtf8 = await notUtf8NameError(target.path, shown);
    if (notUtf8) throw notUtf8;
    await refuseMissingRoot(target, shown, env);
  }
  let oldText: string | null = null;
  // Nothing on disk, but an editor's unsaved buffer there: the diff replaces its text (unsaved-buffer.ts).
  const unsaved = target.exists ? undefined : await unsavedBuffer(target, env, signal);
  if (unsaved) {
    await refuseUnwritableBuffer(target, shown, 'write', env, signal);
    oldText = unsaved.text;
  }
  if (target.exists) {
    const size = await fileSize(target, shown);
    // The diff shows what was replaced; a file too large to diff is shown as newly written. The read
    // is bounded too: the file may have grown, or been swapped, since the size above.
    const window = { maxBytes: env.limits.maxFileBytes };
    if (size <= env.limits.maxFileBytes) oldText = await env.files.readText(target.path, window, signal).catch(() => null);
    // The text read is the editor's when it reads its buffers; one that takes no writes would have the
    // write go to the disk under it: refused unless the two are the same (unsaved-buffer.ts).
    await refuseUnwritableBuffer(target, shown, 'write', env, signal, oldText ?? undefined);
  }
  return { target, shown, oldText, unsaved: unsaved !== undefined };
}

/**
 * A new file's missing parents are created, but never the workspace directory itself: a project
 * deleted or moved away (or a drive unmounted) while its session lives would otherwise come back as
 * a directory holding only what the model wrote next.
 */
async function refuseMissingRoot(target: GuardedPath, shown: string, env: ToolEnv): Promise<void> {
  const within = env.guard.rootOf(target.real);
  if (!within) return;
  const isDir = await stat(within.realRoot).then((s) => s.isDirectory(), () => false);
  if (isDir) return;
  throw new TroupeError('tool_failed', `Cannot write ${shown}: the workspace directory ${shownName(within.root)} no longer exists (moved or deleted); nothing was created.`, { path: shown, root: within.root });
}

/**
 * The existing ancestor of `dir` that is not a directory (a file, a dangling link), if one is what
 * made creating `dir` fail: mkdir then says only EEXIST ("file already exists, mkdir …"), which
 * does not tell a model which part of its path to change.
 */
async function ancestorInTheWay(dir: string): Promise<{ path: string; what: string } | undefined> {
  for (let at = dir; at !== dirname(at); at = dirname(at)) {
    // ENOENT: missing, ENOTDIR: something above is the file; either way look higher.
    const link = await lstat(at).then((s) => s.isSymbolicLink(), () => undefined);
    if (link === undefined) continue;
    if (await stat(at).then((s) => s.isDirectory(), () => false)) return undefined;
    return { path: at, what: link ? 'a symbolic link that does not lead to a directory' : 'a file is in the way' };
  }
  return undefined;
}

/** A factory like the other tools; write_file states no limit. */
export function writeFileTool(_limits: ToolLimits): ToolDefinition {
  return defineTool<WriteFileInput>({
    name: 'write_file',
    description:
      'Create a file, or replace the whole content of an existing one, with `content` (UTF-8 text). ' +
      'Missing parent directories are created. The path must lie inside the workspace. ' +
      'To change part of an existing file, prefer edit_file.',
    schema: {
      type: 'object',
      properties: {
        path: pathProperty('File to write, relative to the working directory or absolute.'),
        content: { type: 'string', description: 'The complete new content of the file.' },
      },
      required: ['path', 'content'],
      additionalProperties: false,
    },
    kind: 'edit',
    access: 'edit',

    describe(input, env) {
      const path = env.guard.lexical(input.path);
      return { title: `Write ${env.guard.display(path)}`, locations: [{ path }] };
    },

    async preview(input, env, signal) {
      const { target, oldText } = await planWrite(input, env, signal);
      return [{ type: 'diff', path: target.path, oldText, newText: input.content }];
    },

    async run(input, env, ctx) {
      const { target, shown, oldText, unsaved } = await planWrite(input, env, ctx.signal);
      try {
        // Every existing ancestor resolved inside the workspace (the guard checked); the new
        // directories are made in directories checked again as they are opened (confined-mkdir.ts).
        await makeDirectories(dirname(target.path), (real) => env.guard.containsReal(real)).catch(async (err: unknown) => {
          if (err instanceof TroupeError) throw err;
          const inTheWay = await ancestorInTheWay(dirname(target.path));
          if (inTheWay === undefined) throw err;
          throw new TroupeError('tool_failed', `Cannot create ${shown}: ${env.guard.display(inTheWay.path)} is not a directory (${inTheWay.what}); nothing was written.`, { path: shown, errno: 'ENOTDIR' });
        });
        await env.files.writeText(target.path, input.content, ctx.signal);
      } catch (err) {
        throw fileError(err, shown);
      }
      const bytes = Buffer.byteLength(input.content);
      const output = target.exists
        ? `Wrote ${shown} (${bytes} bytes; replaced the previous content).`
        : unsaved
          ? `Wrote ${shown} (${bytes} bytes; replaced the editor's unsaved buffer).`
          : `Created ${shown} (${bytes} bytes).`;
      return {
        output,
        isError: false,
        content: [{ type: 'diff', path: target.path, oldText, newText: input.content }],
        locations: [{ path: target.path }],
      };
    },
  });
}
