// Runs one built-in tool call in a workspace and prints its result as one JSON line on stdout, for
// tests that run it in a process of their own (under a heap budget: `--max-old-space-size`).
// Arguments: the workspace cwd, the tool's name, its input as JSON, and optionally its limits as JSON.
import { createWorkspaceTools } from '../../src/tools/index.js';

const [cwd, name, input, limits] = process.argv.slice(2);
const host = createWorkspaceTools({ cwd: cwd!, ...(limits ? { limits: JSON.parse(limits) } : {}) });
const result = await host.run({ id: 'call_1', name: name!, input: JSON.parse(input!) }, { signal: new AbortController().signal, update: () => undefined });
process.stdout.write(`${JSON.stringify(result)}\n`);
