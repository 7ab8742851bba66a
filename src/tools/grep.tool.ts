/** grep: search file contents with a regular expression. */
import { stat } from 'node:fs/promises';
import { TroupeError } from '../core/errors.js';
import type { ToolLocation } from '../core/events.js';
import { readConfinedAtMost } from './confined-open.js';
import { compileGlob, type CompiledGlob } from './glob-pattern.js';
import { LineMatcher } from './line-matcher.js';
import { notUtf8NameError, shownFoundPath } from './non-utf8-names.js';
import { defineTool, fileError, notRegularFile, textResult, titleText, type ToolDefinition, type ToolLimits, pathProperty } from './tool.js';
import { ignoredNote, walkFiles, walkStats, type WalkedFile } from './workspace-walk.js';
import { elided } from '../core/text-cut.js';

interface GrepInput {
  pattern: string;
  path?: string;
  glob?: string;
  case_insensitive?: boolean;
  max_results?: number;
  include_ignored?: boolean;
}

/** Matches after which no more locations are attached (the output still lists them). */
const MAX_LOCATIONS = 50;

/** A batch of file texts is sent to the matcher when it reaches either bound. */
const MATCH_BATCH_CHARS = 256 * 1024;
const MATCH_BATCH_FILES = 256;

function compileRegex(input: GrepInput): RegExp {
  try {
    return new RegExp(input.pattern, input.case_insensitive ? 'i' : '');
  } catch (err) {
    throw new TroupeError('invalid_params', `Invalid input for grep: pattern is not a valid regular expression: ${(err as Error).message}`);
  }
}

/** Built from the limits, which its description and schema state. */
export function grepTool(limits: ToolLimits): ToolDefinition {
  return defineTool<GrepInput>({
    name: 'grep',
    description:
      'Search the contents of files for a regular expression (JavaScript syntax), line by line. `path` may be a ' +
      'file or a directory (default: the working directory); `glob` restricts which files are searched (same ' +
      'syntax as the glob tool, e.g. "*.ts"). Returns "path:line: text" for each matching line. node_modules, ' +
      `.git and what .gitignore files ignore are skipped unless include_ignored is true; binary files and files over ${limits.grepMaxFileBytes} bytes are skipped. ` +
      'Reads the files on disk (unsaved editor changes are not seen).',
    schema: {
      type: 'object',
      properties: {
        pattern: { type: 'string', minLength: 1, maxLength: 1000, description: 'Regular expression to search for, e.g. "function\\\\s+main".' },
        path: pathProperty('File or directory to search. Default: the working directory.'),
        glob: { type: 'string', minLength: 1, maxLength: 1000, description: 'Only search files matching this glob, e.g. "*.ts".' },
        case_insensitive: { type: 'boolean', description: 'Ignore case. Default false.' },
        max_results: { type: 'integer', minimum: 1, maximum: limits.searchMaxResults, description: `Maximum number of matching lines to return. Default ${limits.searchDefaultResults}.` },
        include_ignored: { type: 'boolean', description: 'Also search node_modules, .git and what .gitignore files ignore. Default false.' },
      },
      required: ['pattern'],
      additionalProperties: false,
    },
    kind: 'search',
    access: 'read',

    check(input) {
      compileRegex(input);
      if (input.glob !== undefined) compileGlob(input.glob);
    },

    describe(input, env) {
      const path = env.guard.lexical(input.path ?? '.');
      const where = input.path ? ` in ${env.guard.display(path)}` : '';
      return { title: `Search \`${titleText(input.pattern)}\`${where}`, locations: [{ path }] };
    },

    async run(input, env, ctx) {
      const regex = compileRegex(input);
      const filter: CompiledGlob | undefined = input.glob === undefined ? undefined : compileGlob(input.glob);
      const base = await env.guard.check(input.path ?? '.');
      const shownBase = env.guard.display(base.path);
      if (!base.exists) throw (await notUtf8NameError(base.path, shownBase)) ?? new TroupeError('tool_failed', `Not found: ${shownBase}`, { path: shownBase });
      const max = Math.min(input.max_results ?? env.limits.searchDefaultResults, env.limits.searchMaxResults);
      const stats = walkStats();
      const baseInfo = await stat(base.path).catch((err: unknown) => {
        throw fileError(err, shownBase);
      });
      if (!baseInfo.isDirectory() && !baseInfo.isFile()) throw notRegularFile(shownBase);
      const files: AsyncIterable<WalkedFile> | WalkedFile[] = baseInfo.isDirectory()
        ? walkFiles(base.path, { guard: env.guard, includeIgnored: input.include_ignored === true, maxEntries: env.limits.searchMaxEntries, signal: ctx.signal }, stats)
        : [{ path: base.path, rel: base.path.slice(base.path.lastIndexOf('/') + 1) }];

      const lines: string[] = [];
      const locations: ToolLocation[] = [];
      let more = false;
      let skippedLarge = 0;
      // Matched files with a name that is not UTF-8, each named once after the matches with the note
      // list_dir and glob give (a note on every line would bury the lines).
      const notUtf8 = new Map<string, string>();
      // Texts go to the matcher in batches: one round trip per batch, not per file.
      const matcher = new LineMatcher(regex, ctx.signal, env.limits.grepTimeoutMs);
      let batch: Array<{ file: WalkedFile; text: string }> = [];
      let batchBytes = 0;
      /** Matches the batch; false once `max` lines are taken and one more matched. */
      const flush = async (): Promise<boolean> => {
        if (batch.length === 0) return true;
        const texts = batch;
        batch = [];
        batchBytes = 0;
        for (const [t, line, content] of await matcher.match(texts.map((b) => b.text), max - lines.length + 1, env.limits.grepMaxLineChars)) {
          if (lines.length === max) return false;
          const { file } = texts[t]!;
          lines.push(`${env.guard.display(file.path)}:${line}: ${elided(content, env.limits.grepMaxLineChars)}`);
          if (file.raw) notUtf8.set(file.path, shownFoundPath(env.guard, file));
          // No location for such a file: its path (the U+FFFD reading) would lead a client to no file, or another.
          else if (locations.length < MAX_LOCATIONS) locations.push({ path: file.path, line });
        }
        return true;
      };
      try {
        for await (const file of files) {
          if (ctx.signal.aborted) break;
          if (filter && !filter.matches(file.rel)) continue;
          let bytes: Buffer | undefined;
          try {
            // Checked on the open file: a symlink swapped in since the walk must not lead out, and a
            // FIFO or device is refused without blocking. The size too is the open file's: until
            // 2026-12-06 it was checked on the path before the open, so a bigger file swapped in
            // between was read whole.
            bytes = await readConfinedAtMost(file.raw ?? file.path, env.limits.grepMaxFileBytes, (real) => env.guard.containsReal(real), ctx.signal);
          } catch {
            continue; // vanished, unreadable or no longer a regular file since the walk saw it
          }
          if (bytes === undefined) {
            skippedLarge++;
            continue;
          }
          const text = bytes.toString('utf8');
          if (text.slice(0, 8192).includes('\0')) continue;
          batch.push({ file, text });
          batchBytes += text.length;
          if ((batchBytes >= MATCH_BATCH_CHARS || batch.length >= MATCH_BATCH_FILES) && !(await flush())) {
            more = true;
            break;
          }
        }
        if (!more && !(await flush())) more = true;
      } finally {
        matcher.close();
      }
      const notes: string[] = [...notUtf8.values()];
      if (more) notes.push(`[results limited to ${max} matching lines; narrow the pattern, path or glob]`);
      if (skippedLarge > 0) notes.push(`[${skippedLarge} file(s) over ${env.limits.grepMaxFileBytes} bytes skipped]`);
      if (stats.exhausted) notes.push(`[search stopped after examining ${stats.examined} entries; some files were not searched]`);
      notes.push(...ignoredNote(stats, lines.length));
      const body = lines.length === 0 ? `No matches for \`${input.pattern}\` in ${shownBase}.` : lines.join('\n');
      return textResult([body, ...notes].join('\n'), { locations });
    },
  });
}
