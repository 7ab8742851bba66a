#!/usr/bin/env node
// Tiny shim: the real entry point is compiled TypeScript.
import('../dist/src/main.js').then((m) => m.main(process.argv.slice(2)));
