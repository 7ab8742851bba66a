/**
 * Imported first by acp.command.ts, so that it runs before any zod schema is built (zod reads the
 * setting when a schema is constructed): zod's object parsers without their JIT. With it, the first
 * parse of each object schema generates and compiles a parser with `new Function` (code no V8 code
 * cache can hold), which a `troupe acp` process pays for on its first `initialize` and
 * `session/new`; it only pays off for a schema parsed many times, and the agent parses a few
 * requests per turn.
 */
import * as z from 'zod';

z.config({ jitless: true });
