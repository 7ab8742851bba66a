/**
 * Serves files from one directory (the web inspector's assets). Paths are resolved inside the root
 * and never escape it; a directory serves its index.html.
 */
import { readFile, stat } from 'node:fs/promises';
import { extname, join, resolve, sep } from 'node:path';
import type { RouteHandler } from './route.types.js';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.map': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};

/** A GET handler for `<prefix>/*` serving files under `dir`. */
export function staticFiles(dir: string): RouteHandler {
  const root = resolve(dir);
  return async (req, res) => {
    const rel = req.params['*'] ?? '';
    const target = resolve(join(root, rel));
    if (target !== root && !target.startsWith(root + sep)) {
      res.error(404, 'method_not_found', 'No such file');
      return;
    }
    let file = target;
    try {
      if ((await stat(file)).isDirectory()) file = join(file, 'index.html');
      const body = await readFile(file);
      res.send(200, { 'Content-Type': TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream', 'Cache-Control': 'no-cache', 'X-Content-Type-Options': 'nosniff' }, body);
    } catch {
      res.error(404, 'method_not_found', 'No such file');
    }
  };
}
