/** list_dir: the entries of one directory. */
import type { Dirent } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { shownName } from './path-guard.js';
import { defineTool, fileError, textResult, type ToolDefinition, type ToolLimits } from './tool.js';

interface ListDirInput {
  path?: string;
}

/** `ls -F`-style marker: directories end in `/`, symlinks in `@` (never followed here). */
function render(entry: Dirent): string {
  const name = shownName(entry.name);
  if (entry.isDirectory()) return `${name}/`;
  if (entry.isSymbolicLink()) return `${name}@`;
  return name;
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
        path: { type: 'string', minLength: 1, description: 'Directory to list, relative to the working directory or absolute. Default ".".' },
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

    async run(input, env) {
      const target = await env.guard.check(input.path ?? '.');
      const shown = env.guard.display(target.path);
      let entries: Dirent[];
      try {
        if (!target.exists) throw Object.assign(new Error('missing'), { code: 'ENOENT' });
        entries = await readdir(target.path, { withFileTypes: true });
      } catch (err) {
        const e = fileError(err, shown);
        if (e.data['errno'] === 'ENOENT') e.message = `Directory not found: ${shown}`;
        if (e.data['errno'] === 'ENOTDIR') e.message = `${shown} is a file, not a directory (use read_file).`;
        throw e;
      }
      entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      const max = env.limits.listMaxEntries;
      const lines = entries.slice(0, max).map(render);
      if (entries.length > max) lines.push(`[... ${entries.length - max} more entries not shown]`);
      const output = lines.length === 0 ? `[${shown} is empty]` : lines.join('\n');
      return textResult(output, { locations: [{ path: target.path }] });
    },
  });
}
