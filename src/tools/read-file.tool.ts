/** read_file: a text file, or a window of its lines. */
import { TroupeError } from '../core/errors.js';
import { refuseDirectoryName } from './path-guard.js';
import { defineTool, fileError, textResult, type ToolDefinition, type ToolLimits, pathProperty } from './tool.js';
import { sizeOnDisk, unsavedNotFound, unsavedReadError } from './unsaved-buffer.js';

interface ReadFileInput {
  path: string;
  offset?: number;
  limit?: number;
}

/** How far into a text we look for NUL bytes to call it binary. */
const BINARY_PROBE_CHARS = 8192;

/** Built from the limits, which its description and schema state. */
export function readFileTool(limits: ToolLimits): ToolDefinition {
  return defineTool<ReadFileInput>({
    name: 'read_file',
    description:
      'Read a UTF-8 text file from the workspace. Returns the file content verbatim (no line numbers added), ' +
      `by default at most the first ${limits.readDefaultLines} lines (and ${limits.readMaxBytes} bytes); use ` +
      ' `offset` (1-based first line) and `limit` (number of lines) ' +
      'to read further or less. The path is relative to the session working directory or absolute, and must lie ' +
      'inside the workspace. Read a file before editing it so that edit_file old_string matches exactly.',
    schema: {
      type: 'object',
      properties: {
        path: pathProperty('File to read, relative to the working directory or absolute.'),
        offset: { type: 'integer', minimum: 1, description: '1-based line to start reading from. Default 1.' },
        limit: { type: 'integer', minimum: 1, maximum: 100_000, description: `Maximum number of lines to return. Default ${limits.readDefaultLines}.` },
      },
      required: ['path'],
      additionalProperties: false,
    },
    kind: 'read',
    access: 'read',

    describe(input, env) {
      const path = env.guard.lexical(input.path);
      const from = input.offset && input.offset > 1 ? ` (from line ${input.offset})` : '';
      return { title: `Read ${env.guard.display(path)}${from}`, locations: [{ path, ...(input.offset ? { line: input.offset } : {}) }] };
    },

    async run(input, env, ctx) {
      const target = await env.guard.check(input.path);
      const shown = env.guard.display(target.path);
      refuseDirectoryName(input.path, shown, 'read_file');
      // undefined: nothing on disk, but the backend is asked (an editor's unsaved buffer, unsaved-buffer.ts).
      const size = await sizeOnDisk(target, shown);
      const unsaved = size === undefined;
      if (size !== undefined && size > env.limits.maxFileBytes && input.offset === undefined && input.limit === undefined) {
        throw new TroupeError('tool_failed', `${shown} is ${size} bytes, over the ${env.limits.maxFileBytes}-byte limit; read a window with offset and limit, or use grep.`, { path: shown });
      }
      const offset = input.offset ?? 1;
      const wanted = input.limit ?? env.limits.readDefaultLines;
      // Two extra lines tell "the file continues" apart from "the file ends with a newline". One
      // character more than the byte budget (a character is at least a byte) shows that the window
      // is over it, without holding a window whose lines are as long as a huge file.
      const maxChars = env.limits.readMaxBytes + 1;
      const text = await env.files.readText(target.path, { line: offset, limit: wanted + 2, maxChars }, ctx.signal).catch((err: unknown) => {
        throw unsaved ? unsavedReadError(err, shown) : fileError(err, shown);
      });
      // An empty buffer of a path not on disk is no file (an editor may make one for any path asked),
      // unless it has lines before the window: asked apart, one character.
      if (unsaved && text === '' && (offset === 1 || (await env.files.readText(target.path, { line: 1, limit: 1, maxChars: 1 }, ctx.signal).catch(() => '')) === '')) {
        throw unsavedNotFound(shown);
      }
      // Cut at maxChars: what follows the cut was not read.
      const unread = text.length >= maxChars;
      if (text.slice(0, BINARY_PROBE_CHARS).includes('\0')) {
        throw new TroupeError('tool_failed', `${shown} looks like a binary file (it contains NUL bytes); read_file only reads text.`, { path: shown });
      }
      const lines = text.split('\n');
      const continues = lines.length > wanted + 1 || (lines.length === wanted + 1 && lines[wanted] !== '');
      let body = continues ? `${lines.slice(0, wanted).join('\n')}\n` : text;
      let note = '';
      if (Buffer.byteLength(body) > env.limits.readMaxBytes) {
        const max = env.limits.readMaxBytes;
        const bytes = Buffer.from(body);
        // Cut before a character, not inside its UTF-8 sequence (which would show as U+FFFD).
        let end = max;
        while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
        const cut = bytes.subarray(0, end).toString('utf8');
        const lastNewline = cut.lastIndexOf('\n');
        if (lastNewline >= 0) {
          body = cut.slice(0, lastNewline + 1);
          const shownLines = body.split('\n').length - 1;
          note = `\n[output cut at ${max} bytes after line ${offset + shownLines - 1}; read again with offset ${offset + shownLines}]`;
        } else {
          // The window's first line alone is over the budget. "Read again with offset <the same>"
          // would show the same cut line for ever: say so, and point past it.
          body = cut;
          const firstNewline = text.indexOf('\n');
          const more =
            continues ||
            (firstNewline !== -1 && firstNewline < text.length - 1) ||
            // The read stopped inside the line: whether anything follows it is asked apart, holding
            // one character (the rest of the line is streamed past, not kept).
            (unread && (await env.files.readText(target.path, { line: offset + 1, limit: 2, maxChars: 1 }, ctx.signal).catch(() => '')) !== '');
          note =
            `\n[line ${offset} is longer than ${max} bytes and was cut here; read_file cannot show the rest of it (use grep or run_command)` +
            (more ? `; the file continues: read again with offset ${offset + 1}]` : ']');
        }
      } else if (continues) {
        note = `\n[showing lines ${offset}-${offset + wanted - 1}; the file continues: read again with offset ${offset + wanted}]`;
      }
      // The model may run a command on it, or grep it: neither sees what is only in the editor.
      const where = unsaved ? `\n[${shown} is not on disk: this is the editor's unsaved buffer, which commands, grep and glob do not see]` : '';
      if (body === '' && note === '') return textResult((offset > 1 ? `[${shown} has fewer than ${offset} lines]` : `[${shown} is empty]`) + where, { locations: [{ path: target.path }] });
      return textResult(body + note + where, { locations: [{ path: target.path, line: offset }] });
    },
  });
}
