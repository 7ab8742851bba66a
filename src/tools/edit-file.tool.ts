/** edit_file: replace an exact string in a file, yielding a diff of the whole file. */
import { isUtf8 } from 'node:buffer';
import { TroupeError } from '../core/errors.js';
import { FileTooLargeError } from './backends.js';
import { readConfinedAtMost } from './confined-open.js';
import { refuseDirectoryName } from './path-guard.js';
import { defineTool, fileError, type ToolDefinition, type ToolEnv, type ToolLimits, pathProperty } from './tool.js';
import { refuseUnwritableBuffer, sizeOnDisk, unsavedNotFound, unsavedReadError } from './unsaved-buffer.js';

interface EditFileInput {
  path: string;
  old_string: string;
  new_string: string;
  replace_all?: boolean;
}

/** How far into a text we look for NUL bytes to call it binary (as read_file does). */
const BINARY_PROBE_CHARS = 8192;

/**
 * A file too large for edit_file, and what to do instead. `size`: its size in bytes, or a bound it
 * is over when the read that found it stopped there.
 */
function overLimit(shown: string, size: string, limit: number): TroupeError {
  return new TroupeError(
    'tool_failed',
    `${shown} is ${size}, over the ${limit}-byte limit for edit_file. Edit it with run_command instead (e.g. sed -i, or a patch), or read the part you need with read_file (offset and limit).`,
    { path: shown },
  );
}

/** Start offsets of the non-overlapping occurrences of `needle`, left to right. */
export function occurrences(haystack: string, needle: string): number[] {
  const found: number[] = [];
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length)) found.push(at);
  return found;
}

/**
 * The text was decoded as UTF-8, and writing it back re-encodes the whole file: a binary file, or
 * one in another encoding (Latin-1, …), would have every invalid byte, far from the edit, replaced
 * by U+FFFD. Such files are refused. Invalid bytes decode to U+FFFD, so the bytes on disk are
 * checked only when the text has one (it may also be a genuine U+FFFD of a valid file).
 */
async function refuseUnsafeText(text: string, path: string, shown: string, env: ToolEnv, signal: AbortSignal): Promise<void> {
  if (text.slice(0, BINARY_PROBE_CHARS).includes('\0')) {
    throw new TroupeError('tool_failed', `${shown} looks like a binary file (it contains NUL bytes); edit_file only edits text.`, { path: shown });
  }
  if (!text.includes('\uFFFD')) return;
  // Opened as the backend opens (confined, non-blocking, regular files only): until 2026-12-06 a
  // plain readFile here hung for ever on a FIFO, or read a file outside, swapped in since the read.
  // Bounded as the read of the text is: the file on disk may have grown, or been swapped for a
  // bigger one, since. Until 2026-12-07 it was read whole here; past 2 GiB that read failed, the
  // check was skipped, and the edit replaced the multi-GiB file with the text read before.
  const maxBytes = env.limits.maxFileBytes;
  const bytes = await readConfinedAtMost(path, maxBytes, (real) => env.guard.containsReal(real), signal).catch(() => null);
  if (bytes === undefined) throw overLimit(shown, `more than ${maxBytes} bytes`, maxBytes);
  // null: not read (gone, no longer a regular file, led outside); the write opens it confined as well.
  if (bytes !== null && !isUtf8(bytes)) {
    throw new TroupeError(
      'tool_failed',
      `${shown} is not valid UTF-8 text (another encoding, or binary); edit_file would replace every invalid byte, so it refuses. Use run_command (e.g. iconv, sed) or rewrite it with write_file.`,
      { path: shown },
    );
  }
}

/**
 * Models tend to drop the `\r` of CRLF line endings, so a multi-line old_string then never matches,
 * and "read the file again" does not help. The match stays exact (as specified); the message says
 * what would match.
 */
function crlfHint(text: string, oldString: string): string {
  if (!oldString.includes('\n') || !text.includes('\r\n')) return '';
  const crlf = oldString.replace(/\r?\n/g, '\r\n');
  const count = crlf === oldString ? 0 : occurrences(text, crlf).length;
  if (count === 0) return '';
  return ` The file has CRLF (\\r\\n) line endings and old_string has bare \\n line breaks: with \\r\\n instead, it would match ${count === 1 ? 'once' : `${count} times`}. Write each line break in old_string and new_string as \\r\\n.`;
}

/** The edit `input` makes, computed without writing: what run writes and preview shows. */
async function planEdit(input: EditFileInput, env: ToolEnv, signal: AbortSignal) {
  const target = await env.guard.check(input.path);
  const shown = env.guard.display(target.path);
  refuseDirectoryName(input.path, shown, 'edit_file');
  const maxBytes = env.limits.maxFileBytes;
  // undefined: nothing on disk, but the backend is asked (an editor's unsaved buffer, unsaved-buffer.ts).
  const size = await sizeOnDisk(target, shown);
  if (size !== undefined && size > maxBytes) throw overLimit(shown, `${size} bytes`, maxBytes);
  // Bounded again on the file the read opens: it may have grown, or been swapped, since the size above.
  const oldText = await env.files.readText(target.path, { maxBytes }, signal).catch((err: unknown) => {
    if (err instanceof FileTooLargeError) throw overLimit(shown, `more than ${err.maxBytes} bytes`, maxBytes);
    throw size === undefined ? unsavedReadError(err, shown) : fileError(err, shown);
  });
  if (size === undefined && oldText === '') throw unsavedNotFound(shown);
  // The text read is the editor's when it reads its buffers; one that takes no writes would have the
  // edit of it written to the disk: refused unless the two are the same (unsaved-buffer.ts).
  await refuseUnwritableBuffer(target, shown, 'edit', env, signal, oldText);
  await refuseUnsafeText(oldText, target.path, shown, env, signal);
  const found = occurrences(oldText, input.old_string);
  if (found.length === 0) {
    throw new TroupeError(
      'tool_failed',
      `old_string was not found in ${shown}. It must match the file exactly, including whitespace and indentation; read the file again to see its current content.${crlfHint(oldText, input.old_string)}`,
      { path: shown },
    );
  }
  if (found.length > 1 && input.replace_all !== true) {
    throw new TroupeError(
      'tool_failed',
      `old_string occurs ${found.length} times in ${shown}; include more surrounding context to make it unique, or set replace_all to true.`,
      { path: shown, occurrences: found.length },
    );
  }
  // The result is bounded as the file read is. Until 2026-12-06 it was not: replace_all of one
  // character in a 10 MiB file made a string of hundreds of MiB (the agent's memory, then a file that
  // size on disk) or failed with "Invalid string length". Its length in UTF-16 units, a lower bound of
  // its UTF-8 bytes, is known before it is built.
  const units = oldText.length + (input.replace_all ? found.length : 1) * (input.new_string.length - input.old_string.length);
  const tooLarge = (size: string) =>
    new TroupeError('tool_failed', `The edit would make ${shown} ${size}, over the ${env.limits.maxFileBytes}-byte limit for edit_file; nothing was changed.`, { path: shown });
  if (units > env.limits.maxFileBytes) throw tooLarge(`at least ${units} bytes`);
  // split/join rather than String.replace, whose replacement string interprets `$&` and friends.
  const first = found[0]!;
  const newText = input.replace_all
    ? oldText.split(input.old_string).join(input.new_string)
    : oldText.slice(0, first) + input.new_string + oldText.slice(first + input.old_string.length);
  const bytes = Buffer.byteLength(newText);
  if (bytes > env.limits.maxFileBytes) throw tooLarge(`${bytes} bytes`);
  return { target, shown, oldText, newText, found, first };
}

/** Built from the limits, which its description and schema state. */
export function editFileTool(limits: ToolLimits): ToolDefinition {
  return defineTool<EditFileInput>({
    name: 'edit_file',
    description:
      'Edit a text file by exact string replacement. `old_string` must match the current file content exactly ' +
      '(whitespace and indentation included) and, unless `replace_all` is true, occur exactly once: include ' +
      'enough surrounding lines to make it unique. Every occurrence is replaced when `replace_all` is true. ' +
      `Read the file first. Files over ${limits.maxFileBytes} bytes cannot be edited. To create a file or rewrite it entirely, use write_file.`,
    schema: {
      type: 'object',
      properties: {
        path: pathProperty('File to edit, relative to the working directory or absolute.'),
        old_string: { type: 'string', minLength: 1, description: 'The exact text to replace.' },
        new_string: { type: 'string', description: 'The replacement text (may be empty to delete old_string).' },
        replace_all: { type: 'boolean', description: 'Replace every occurrence instead of requiring exactly one. Default false.' },
      },
      required: ['path', 'old_string', 'new_string'],
      additionalProperties: false,
    },
    kind: 'edit',
    access: 'edit',

    check(input) {
      if (input.old_string === input.new_string) {
        throw new TroupeError('invalid_params', 'Invalid input for edit_file: old_string and new_string are identical, so the edit would change nothing.');
      }
    },

    describe(input, env) {
      const path = env.guard.lexical(input.path);
      return { title: `Edit ${env.guard.display(path)}`, locations: [{ path }] };
    },

    async preview(input, env, signal) {
      const { target, oldText, newText } = await planEdit(input, env, signal);
      return [{ type: 'diff', path: target.path, oldText, newText }];
    },

    async run(input, env, ctx) {
      const { target, shown, oldText, newText, found, first } = await planEdit(input, env, ctx.signal);
      await env.files.writeText(target.path, newText, ctx.signal).catch((err: unknown) => {
        throw fileError(err, shown);
      });
      const line = oldText.slice(0, first).split('\n').length;
      const count = found.length === 1 ? '1 occurrence' : `${found.length} occurrences`;
      return {
        output: `Edited ${shown}: replaced ${count} of old_string (first at line ${line}).`,
        isError: false,
        content: [{ type: 'diff', path: target.path, oldText, newText }],
        locations: [{ path: target.path, line }],
      };
    },
  });
}
