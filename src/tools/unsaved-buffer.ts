/**
 * A path with nothing on disk may still be a file of the editor's: a new buffer not saved yet, which
 * ACP's `fs/read_text_file` exists to serve. read_file and edit_file ask the file backend for such a
 * path instead of refusing it as not found: the local backend answers ENOENT ("File not found", as
 * before), an ACP client's bridge asks the editor. Until 2026-12-07 they answered "File not found"
 * without asking, so a model could not read or edit a file the person had open but not saved.
 * write_file asks too, for the text its diff replaces; and neither writes to the disk under an
 * editor's buffer that is not the disk's (an unsaved buffer, unsaved changes) when the editor reads
 * its buffers but takes no writes.
 */
import { TroupeError } from '../core/errors.js';
import { FileTooLargeError } from './backends.js';
import { readConfinedAtMost } from './confined-open.js';
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
 * A write of `target` refused when the editor reads its buffers but takes no writes, and its text for
 * the path is not the disk's: the write goes to the disk, under the editor's buffer. A path that is only
 * an unsaved buffer (nothing on disk) would become a file there that the buffer conflicts with (and
 * overwrites when saved); a file with unsaved changes would have them saved behind the person's back
 * (edit_file computes the edit on the buffer, which is what the editor reads) or overwritten, the
 * buffer then conflicting with the file. Until 2026-12-07 both went to the disk (the unsaved buffer
 * was refused earlier that day, unsaved changes only since). A file open clean (the editor's text is
 * the disk's, byte for byte) is written as ever.
 *
 * `editorText`: the editor's text already read (edit_file's, write_file's for its diff), else it is
 * read here, bounded by maxFileBytes (null over it). The disk is read bounded as well, and only for
 * such an editor (no request is made, and nothing read, for any other). Both over maxFileBytes cannot
 * be compared and are let be, as such a file is not shown either. `verb`: what the tool would do.
 */
export async function refuseUnwritableBuffer(target: GuardedPath, shown: string, verb: 'edit' | 'write', env: ToolEnv, signal: AbortSignal, editorText?: string): Promise<void> {
  const editor = env.files.editorBuffers?.();
  if (!editor?.reads || editor.writes) return;
  const maxBytes = env.limits.maxFileBytes;
  // undefined: over maxBytes; null: nothing there (gone since the path was checked, for a file that was).
  const disk = target.exists
    ? await readConfinedAtMost(target.path, maxBytes, (real) => env.guard.containsReal(real), signal).catch((err: unknown) => {
        if (errnoOf(err) === 'ENOENT') return null;
        throw fileError(err, shown);
      })
    : null;
  if (disk === null) throw unwritable(verb, shown, onlyBuffer);
  const text =
    editorText ??
    (await env.files.readText(target.path, { maxBytes }, signal).catch((err: unknown) => {
      if (err instanceof FileTooLargeError) return null;
      throw fileError(err, shown);
    }));
  if (text === null && disk === undefined) return;
  if (text === null || disk === undefined || !Buffer.from(text).equals(disk)) throw unwritable(verb, shown, unsavedChanges);
}

/** What is in the editor, what the write would do there, and what the person is to do first. */
interface Unwritable {
  state: string;
  outcome: string;
  ask: string;
}

const onlyBuffer: Unwritable = {
  state: 'it is only an unsaved buffer in the editor (nothing is on disk)',
  outcome: 'make a file on disk that the unsaved buffer conflicts with',
  ask: 'save the file',
};

const unsavedChanges: Unwritable = {
  state: "it has unsaved changes in the editor (its text there is not the file's on disk)",
  outcome: "go to the disk under them: the changes would be saved behind the person's back, or lost, and the editor's buffer would conflict with the file",
  ask: 'save (or discard) their changes',
};

function unwritable(verb: 'edit' | 'write', shown: string, why: Unwritable): TroupeError {
  return new TroupeError(
    'tool_failed',
    `Cannot ${verb} ${shown}: ${why.state}, and this editor takes no writes from troupe (it offers fs/read_text_file, not fs/write_text_file), so the ${verb} would ${why.outcome}. Ask the person to ${why.ask} first; nothing was written.`,
    { path: shown },
  );
}
