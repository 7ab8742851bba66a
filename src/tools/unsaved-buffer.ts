/**
 * A path with nothing on disk may still be a file of the editor's: a new buffer not saved yet, which
 * ACP's `fs/read_text_file` exists to serve. read_file and edit_file ask the file backend for such a
 * path instead of refusing it as not found: the local backend answers ENOENT ("File not found", as
 * before), an ACP client's bridge asks the editor. Until 2026-12-07 they answered "File not found"
 * without asking, so a model could not read or edit a file the person had open but not saved.
 * write_file asks too, for the text its diff replaces; and neither writes such a buffer to the disk
 * when the editor reads its buffers but takes no writes.
 */
import { TroupeError } from '../core/errors.js';
import { FileTooLargeError } from './backends.js';
import { notUtf8NameError } from './non-utf8-names.js';
import type { GuardedPath } from './path-guard.js';
import { errnoOf, fileError, fileSize, type ToolEnv } from './tool.js';

/**
 * The size on disk of the file at `target` (refused as fileSize refuses it), or undefined when nothing
 * is there, for the backend to be asked (a name that is there but not UTF-8 is refused as fileSize does).
 */
export async function sizeOnDisk(target: GuardedPath, shown: string): Promise<number | undefined> {
  if (target.exists) return fileSize(target, shown);
  const notUtf8 = await notUtf8NameError(target.path, shown);
  if (notUtf8) throw notUtf8;
  return undefined;
}

const notFound = (shown: string, why = '') =>
  new TroupeError('tool_failed', `File not found: ${shown}${why}`, { path: shown, errno: 'ENOENT' });

/**
 * The error of a failed read of a path with nothing on disk: the local backend's ENOENT is "File not
 * found" as ever; an editor's refusal is that too, with the editor's reason (a read that timed out
 * stays a timeout).
 */
export function unsavedReadError(err: unknown, shown: string): TroupeError {
  if (err instanceof TroupeError || errnoOf(err) !== undefined) return fileError(err, shown);
  return notFound(shown, ` (nothing is on disk there, and the editor gave no text for it: ${err instanceof Error ? err.message : String(err)})`);
}

/**
 * An empty text read for a path with nothing on disk is no file: an editor may answer a read of any
 * missing path with an empty new buffer (Zed opens one), and "the file is empty" would tell the model
 * that a file exists.
 */
export function unsavedNotFound(shown: string): TroupeError {
  return notFound(shown, ' (nothing is on disk there, and the editor has no text for it)');
}

/**
 * An editor's buffer of `target`, a path with nothing on disk, that write_file would replace: its text,
 * null when it is over maxFileBytes (too large to show, as a file on disk is), or undefined when there
 * is none. Until 2026-12-07 write_file did not ask, and its prompt showed such a write as a new file,
 * so a person could allow losing unsaved text without seeing it. Only a backend that reads the
 * editor's buffers is asked (no request otherwise); an empty answer (an editor may make an empty
 * buffer for any path asked) or a refusal is no buffer; a read the editor left unanswered fails the
 * call (tool_timeout), since what it would replace is not known.
 */
export async function unsavedBuffer(target: GuardedPath, env: ToolEnv, signal: AbortSignal): Promise<{ text: string | null } | undefined> {
  if (env.files.editorBuffers?.().reads !== true) return undefined;
  const text = await env.files.readText(target.path, { maxBytes: env.limits.maxFileBytes }, signal).catch((err: unknown) => {
    if (err instanceof FileTooLargeError) return null;
    if (err instanceof TroupeError || signal.aborted) throw err;
    return '';
  });
  return text === '' ? undefined : { text };
}

/**
 * A write to `shown`, an editor's unsaved buffer with nothing on disk, refused when the editor reads
 * its buffers but takes no writes: the write would go to the disk, making a file there that the
 * editor's dirty buffer conflicts with (and overwrites when saved), while the model was told it
 * edited the text it read. Until 2026-12-07 edit_file did so. `verb`: what the tool would do.
 */
export function refuseUnwritableBuffer(env: ToolEnv, shown: string, verb: 'edit' | 'write'): void {
  const editor = env.files.editorBuffers?.();
  if (!editor?.reads || editor.writes) return;
  throw new TroupeError(
    'tool_failed',
    `Cannot ${verb} ${shown}: it is only an unsaved buffer in the editor (nothing is on disk), and this editor takes no writes from troupe (it offers fs/read_text_file, not fs/write_text_file), so the ${verb} would make a file on disk that the unsaved buffer conflicts with. Ask the person to save the file first; nothing was written.`,
    { path: shown },
  );
}
