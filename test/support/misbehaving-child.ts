// Loaded into every process of a daemon under test with NODE_OPTIONS=--import (the daemon's
// children inherit its env). In the first `troupe acp` child only (it makes TROUPE_MISBEHAVE's file
// to claim that), it breaks the protocol on stdout as no troupe code would: a line that is no JSON,
// then a line longer than the daemon takes (MAX_CHILD_LINE_CHARS), never ended; and it floods stderr.
import { openSync } from 'node:fs';

const marker = process.env.TROUPE_MISBEHAVE;
let first = false;
if (marker && process.argv.includes('acp')) {
  try {
    openSync(marker, 'wx');
    first = true;
  } catch {
    // Another child claimed it.
  }
}
if (first) {
  // Pipes are written synchronously on Linux: this holds the child here until the daemon reads.
  process.stdout.write('this is not JSON\n');
  const mib = 'x'.repeat(1024 * 1024);
  for (let i = 0; i < 32; i++) process.stderr.write(mib);
  for (let i = 0; i < 65; i++) process.stdout.write(mib);
}
