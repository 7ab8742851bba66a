/** FileBackend on the local disk, for clients that do not advertise `fs.*` capabilities. */
import type { FileHandle } from 'node:fs/promises';
import { FileTooLargeError, type FileBackend, type ReadWindow } from './backends.js';
import { openForRead, readAtMost, type Confine } from './confined-open.js';
import { replaceContent } from './replace-content.js';

export interface LocalFileOptions {
  /**
   * The workspace's real-path check (`PathGuard.containsReal`), applied again to the file each read
   * and write actually opens (see confined-open.ts). Without it, paths are trusted as checked.
   */
  confine?: Confine;
}

/** Applies an ACP-style line window (1-based `line`, `limit` lines) to a text. */
export function sliceLines(text: string, window: ReadWindow): string {
  const cut = (s: string) => (window.maxChars === undefined ? s : s.slice(0, window.maxChars));
  if (window.line === undefined && window.limit === undefined) return cut(text);
  const lines = text.split('\n');
  const start = Math.max(0, (window.line ?? 1) - 1);
  const end = window.limit === undefined ? lines.length : start + window.limit;
  return cut(lines.slice(start, end).join('\n'));
}

/**
 * `sliceLines(content, window)` without holding the whole file: the file is streamed and the read
 * stops after the window's last line or its `maxChars`th character. read_file always asks for a
 * window, and suggests one for files too large to read whole; reading those whole first cost memory
 * of their size and failed outright past V8's maximum string length (512 MiB) or 2 GiB. A window
 * without `maxChars` is only bounded by its lines, which may be as long as the file.
 */
async function readWindow(handle: FileHandle, window: ReadWindow, signal: AbortSignal): Promise<string> {
  const start = Math.max(0, (window.line ?? 1) - 1);
  const end = window.limit === undefined ? Infinity : start + window.limit;
  const maxChars = window.maxChars ?? Infinity;
  const parts: string[] = [];
  let kept = 0;
  let line = 0;
  // The signal is checked here, not given to the stream: a FileHandle stream given one that aborts
  // errors twice, to this reader and then as an unhandled 'error' event that ends the process
  // (Node 20). A cancel takes effect at the next chunk (64 KiB).
  signal.throwIfAborted();
  const stream = handle.createReadStream({ encoding: 'utf8', autoClose: false });
  try {
    for await (const chunk of stream as AsyncIterable<string>) {
      signal.throwIfAborted();
      for (let pos = 0; ; ) {
        const nl = chunk.indexOf('\n', pos);
        const stop = nl === -1 ? chunk.length : nl;
        if (line >= start && line < end) {
          const piece = chunk.slice(pos, stop) + (nl !== -1 && line + 1 < end ? '\n' : '');
          parts.push(piece);
          kept += piece.length;
          if (kept >= maxChars) return parts.join('').slice(0, maxChars);
        }
        if (nl === -1) break;
        pos = nl + 1;
        if (++line >= end) return parts.join('');
      }
    }
    return parts.join('');
  } finally {
    stream.destroy();
  }
}

/** Reads and writes with node:fs. Paths arrive already checked by the path guard. */
export function createLocalFileBackend(options: LocalFileOptions = {}): FileBackend {
  return {
    async readText(absPath, window, signal) {
      const handle = await openForRead(absPath, options.confine);
      try {
        if (window.maxBytes !== undefined) {
          const bytes = await readAtMost(handle, window.maxBytes, signal);
          if (bytes === undefined) throw new FileTooLargeError(window.maxBytes);
          return sliceLines(bytes.toString('utf8'), window);
        }
        if (window.line === undefined && window.limit === undefined && window.maxChars === undefined) return await handle.readFile({ encoding: 'utf8', signal });
        return await readWindow(handle, window, signal);
      } finally {
        await handle.close().catch(() => undefined);
      }
    },
    async writeText(absPath, content, signal) {
      // A cancel before the write starts leaves the file alone; once started, the write completes:
      // aborting it midway would leave the file empty or cut. A write that fails leaves the old
      // content (replace-content.ts).
      signal.throwIfAborted();
      await replaceContent(absPath, content, options.confine);
    },
  };
}
