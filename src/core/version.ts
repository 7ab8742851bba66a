import { readFileSync } from 'node:fs';

/** The package version, read once from package.json (two levels above dist/src/core). */
export const VERSION: string = (() => {
  const url = new URL('../../../package.json', import.meta.url);
  return (JSON.parse(readFileSync(url, 'utf8')) as { version: string }).version;
})();
