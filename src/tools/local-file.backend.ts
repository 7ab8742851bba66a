/** FileBackend on the local disk, for clients that do not advertise `fs.*` capabilities. */
import { readFile, writeFile } from 'node:fs/promises';
import type { FileBackend, ReadWindow } from './backends.js';

/** Applies an ACP-style line window (1-based `line`, `limit` lines) to a text. */
export function sliceLines(text: string, window: ReadWindow): string {
  if (window.line === undefined && window.limit === undefined) return text;
  const lines = text.split('\n');
  const start = Math.max(0, (window.line ?? 1) - 1);
  const end = window.limit === undefined ? lines.length : start + window.limit;
  return lines.slice(start, end).join('\n');
}

/** Reads and writes with node:fs. Paths arrive already checked by the path guard. */
export function createLocalFileBackend(): FileBackend {
  return {
    async readText(absPath, window, signal) {
      const text = await readFile(absPath, { encoding: 'utf8', signal });
      return sliceLines(text, window);
    },
    async writeText(absPath, content, signal) {
      await writeFile(absPath, content, { encoding: 'utf8', signal });
    },
  };
}
