/** list_dir: the entries of one directory. */
import { isUtf8 } from 'node:buffer';
import type { Dirent } from 'node:fs';
import { firstEntries } from './first-entries.js';
import { notUtf8NameError, notUtf8Note } from './non-utf8-names.js';
import { shownName } from './path-guard.js';
import { defineTool, fileError, textResult, type ToolDefinition, type ToolLimits, pathProperty } from './tool.js';

interface ListDirInput {
  path?: string;
}

/** `ls -F`-style marker: directories end in `/`, symlinks in `@` (never followed here). A name that is not UTF-8 is marked so. */
function render(entry: Dirent<Buffer>): string {
  const name = shownName(entry.name.toString('utf8'));
  const marker = entry.isDirectory() ? '/' : entry.isSymbolicLink() ? '@' : '';
  return `${name}${marker}${isUtf8(entry.name) ? '' : notUtf8Note(entry.name)}`;
}

/** Built from the limits, which its description and schema state. */
export function listDirTool(limits: ToolLimits): ToolDefinition {
  return defineTool<ListDirInput>({
    name: 'list_dir',
    description:
      'List the entries of one directory (not recursive), sorted by name. Directories end with "/", symbolic ' +
      `links with "@"; at most ${limits.listMaxEntries} entries. Defaults to the working directory. Use glob to find files recursively.`,
    schema: {
      type: 'object',
      properties: {
        path: pathProperty('Directory to list, relative to the working directory or absolute. Default ".".'),
      },
      required: [],
      additionalProperties: false,
    },
    kind: 'read',
    access: 'read',

    describe(input, env) {
      const path = env.guard.lexical(input.path ?? '.');
      return { title: `List ${env.guard.display(path)}`, locations: [{ path }] };
    },

    async run(input, env, ctx) {
      const target = await env.guard.check(input.path ?? '.');
      const shown = env.guard.display(target.path);
      const max = env.limits.listMaxEntries;
      let listed: { kept: Dirent<Buffer>[]; total: number };
      try {
        if (!target.exists) throw (await notUtf8NameError(target.path, shown)) ?? Object.assign(new Error('missing'), { code: 'ENOENT' });
        // As bytes: a name that is not UTF-8 would otherwise read as another (U+FFFD for its bad bytes).
        // Sorted by bytes, holding at most twice the entries shown, however many the directory has (first-entries.ts).
        listed = await firstEntries(target.path, max, (entry) => entry, (a, b) => Buffer.compare(a.name, b.name), ctx.signal);
      } catch (err) {
        const e = fileError(err, shown);
        if (e.data['errno'] === 'ENOENT' && !e.data['reason']) e.message = `Directory not found: ${shown}`;
        if (e.data['errno'] === 'ENOTDIR') e.message = `${shown} is a file, not a directory (use read_file).`;
        throw e;
      }
      const lines = listed.kept.map(render);
      if (listed.total > max) lines.push(`[... ${listed.total - max} more entries not shown]`);
      const output = lines.length === 0 ? `[${shown} is empty]` : lines.join('\n');
      return textResult(output, { locations: [{ path: target.path }] });
    },
  });
}
