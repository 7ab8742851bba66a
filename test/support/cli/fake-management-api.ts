// A stand-in for a daemon's management API on 127.0.0.1, answering what a test says: for running a
// CLI command in-process (through TROUPE_URL) against answers no real daemon would give, such as
// session fields with control characters in them (a daemon is a remote peer too).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import type { CliIo } from '../../../src/cli/cli-io.js';

/** `GET /v1/sessions` → the JSON body to answer, or a function that writes the response itself. */
export type Routes = Record<string, unknown | ((req: IncomingMessage, res: ServerResponse) => void)>;

export interface FakeApi {
  url: string;
  /**
   * Runs `command` with its io pointed at this API (TROUPE_URL, unless `env` says otherwise); what
   * it wrote and its exit code.
   */
  run(command: (args: string[], io: CliIo) => Promise<number>, args: string[], env?: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }>;
  close(): Promise<void>;
}

export async function fakeManagementApi(routes: Routes): Promise<FakeApi> {
  const all: Routes = { 'GET /v1/health': { version: '0.1.0', uptimeMs: 1000, sessions: { live: 1, total: 1 } }, ...routes };
  const server = createServer((req, res) => {
    const route = all[`${req.method} ${req.url}`];
    if (typeof route === 'function') return route(req, res);
    if (route === undefined) {
      res.writeHead(404, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ error: { code: 'session_not_found', message: `no route ${req.method} ${req.url}` } }));
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(route));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    async run(command, args, env = { TROUPE_URL: url, TROUPE_TOKEN: 'test-token' }) {
      const collect = () => {
        const s = new PassThrough();
        let text = '';
        s.on('data', (c: Buffer) => (text += c.toString()));
        return { s, text: () => text };
      };
      const out = collect();
      const err = collect();
      const code = await command(args, { stdout: out.s, stderr: err.s, env: { NO_COLOR: '1', ...env } });
      return { code, stdout: out.text(), stderr: err.text() };
    },
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}
