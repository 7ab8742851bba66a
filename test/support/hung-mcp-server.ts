// A stdio MCP server that hangs in its start, for tests of a request withdrawn while its servers start.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from './daemon.js';

/**
 * A stdio MCP server that writes its pid to `<dir>/hung.pid` and never answers initialize; its stdin's
 * end does not stop it (SIGTERM does), as a hung server's does not.
 */
export function hungServer(dir: string): { server: { name: string; command: string; args: string[]; env: [] }; pid: () => Promise<number> } {
  const pidFile = join(dir, 'hung.pid');
  const script = join(dir, 'hung.cjs');
  writeFileSync(script, `const fs = require('node:fs'); fs.writeFileSync(${JSON.stringify(pidFile + '.tmp')}, String(process.pid)); fs.renameSync(${JSON.stringify(pidFile + '.tmp')}, ${JSON.stringify(pidFile)}); setInterval(() => undefined, 1000);`);
  return {
    server: { name: 'hung', command: process.execPath, args: [script], env: [] },
    pid: () => waitFor('the hung MCP server to run', () => existsSync(pidFile) && Number(readFileSync(pidFile, 'utf8'))),
  };
}
