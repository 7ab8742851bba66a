/** glob: find files by name pattern below a directory. */
import { stat } from 'node:fs/promises';
import { TroupeError } from '../core/errors.js';
import { compileGlob } from './glob-pattern.js';
import { notUtf8NameError, shownFoundPath } from './non-utf8-names.js';
import { defineTool, textResult, titleText, type ToolDefinition, type ToolLimits, pathProperty } from './tool.js';
import { ignoredNote, walkFiles, walkStats } from './workspace-walk.js';

interface GlobInput {
  pattern: string;
  path?: string;
  max_results?: number;
  include_ignored?: boolean;
}

/** Built from the limits, which its description and schema state. */
export function globTool(limits: ToolLimits): ToolDefinition {
  return defineTool<GlobInput>({
    name: 'glob',
    description:
      'Find files whose path matches a glob pattern, below a directory (default: the working directory). ' +
      'Syntax: * (within one path segment), ? , ** (any number of directories), [abc], {a,b}. A pattern without "/" ' +
      'matches file names at any depth ("*.ts"); a pattern with "/" matches the path relative to the search ' +
      'directory ("src/**/*.test.ts"). Returns matching file paths (relative to the working directory), sorted. ' +
      'node_modules, .git and what .gitignore files ignore are skipped unless include_ignored is true. Symbolic links to directories are not followed.',
    schema: {
      type: 'object',
      properties: {
        pattern: { type: 'string', minLength: 1, maxLength: 1000, description: 'Glob pattern, e.g. "*.ts" or "src/**/*.json".' },
        path: pathProperty('Directory to search in. Default: the working directory.'),
        max_results: { type: 'integer', minimum: 1, maximum: limits.searchMaxResults, description: `Maximum number of paths to return. Default ${limits.searchDefaultResults}.` },
        include_ignored: { type: 'boolean', description: 'Also search node_modules, .git and what .gitignore files ignore. Default false.' },
      },
      required: ['pattern'],
      additionalProperties: false,
    },
    kind: 'search',
    access: 'read',

    check(input) {
      compileGlob(input.pattern);
    },

    describe(input, env) {
      const path = env.guard.lexical(input.path ?? '.');
      const where = input.path ? ` in ${env.guard.display(path)}` : '';
      return { title: `Find \`${titleText(input.pattern)}\`${where}`, locations: [{ path }] };
    },

    async run(input, env, ctx) {
      const glob = compileGlob(input.pattern);
      const base = await env.guard.check(input.path ?? '.');
      const shownBase = env.guard.display(base.path);
      if (!base.exists) throw (await notUtf8NameError(base.path, shownBase)) ?? new TroupeError('tool_failed', `Directory not found: ${shownBase}`, { path: shownBase });
      // A file walks as an empty directory: "No files match" would be the wrong answer.
      if (!(await stat(base.path).then((s) => s.isDirectory(), () => true))) {
        throw new TroupeError('tool_failed', `${shownBase} is a file, not a directory: glob searches a directory (read_file reads a file).`, { path: shownBase });
      }
      const max = Math.min(input.max_results ?? env.limits.searchDefaultResults, env.limits.searchMaxResults);
      const stats = walkStats();
      const options = {
        guard: env.guard,
        includeIgnored: input.include_ignored === true,
        maxEntries: env.limits.searchMaxEntries,
        signal: ctx.signal,
      };
      const found: Array<{ shown: string; line: string }> = [];
      let more = false;
      for await (const file of walkFiles(base.path, options, stats)) {
        if (!glob.matches(file.rel)) continue;
        if (found.length === max) {
          more = true;
          break;
        }
        found.push({ shown: env.guard.display(file.path), line: shownFoundPath(env.guard, file) });
      }
      // By path: a note after a name must not change where it sorts.
      found.sort((a, b) => (a.shown < b.shown ? -1 : a.shown > b.shown ? 1 : 0));
      const notes: string[] = [];
      if (more) notes.push(`[results limited to ${max}; narrow the pattern or the directory]`);
      if (stats.exhausted) notes.push(`[search stopped after examining ${stats.examined} entries; some files were not considered]`);
      notes.push(...ignoredNote(stats, found.length));
      const body = found.length === 0 ? `No files match \`${input.pattern}\` in ${shownBase}.` : found.map((f) => f.line).join('\n');
      return textResult([body, ...notes].join('\n'));
    },
  });
}
