// A command that file modes bind even when the tests run as root (as in CI's container): root keeps
// its uid but loses the capabilities that bypass file permissions (setpriv, util-linux).
import { existsSync } from 'node:fs';

const isRoot = process.getuid?.() === 0;

/** False only for root without setpriv: such a test cannot make a file it may not read. */
export const canDropFileOverride = !isRoot || existsSync('/usr/bin/setpriv');

/** `[file, args]` to spawn `argv` so that a file of mode 000 is EACCES to it. */
export function boundByFileModes(argv: string[]): [string, string[]] {
  return isRoot ? ['setpriv', ['--bounding-set=-dac_override,-dac_read_search', ...argv]] : [argv[0]!, argv.slice(1)];
}
