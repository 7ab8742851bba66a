// Child process of temp-files.test.ts: starts an atomic write of the file named on its command line
// and stops midway (its first part written, the rest never coming), says so on stdout, and waits to
// be killed, as a writer killed midway would be.
import { writeFileAtomic } from '../../../src/store/atomic-write.js';

async function* halfThenNothing(): AsyncGenerator<Uint8Array> {
  yield Buffer.from('{"half":');
  process.stdout.write('midway\n');
  await new Promise(() => undefined);
}

if (process.argv[1]?.endsWith('temp-writer-child.js')) {
  // Never outlive a parent that failed to kill us.
  setTimeout(() => process.exit(3), 30_000);
  // writeFile takes an async iterable at run time; the type lists the forms callers use.
  void writeFileAtomic(process.argv[2]!, halfThenNothing() as unknown as Uint8Array);
}
