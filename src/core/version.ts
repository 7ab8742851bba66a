import { readFileSync } from 'node:fs';

/**
 * The package version, from the nearest package.json named "troupe" above this module (found by
 * walking up, so that it works from dist/src/core and from a single-file bundle alike).
 */
export const VERSION: string = (() => {
  let dir = new URL('.', import.meta.url);
  for (let i = 0; i < 6; i++) {
    try {
      const pkg = JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')) as { name?: string; version: string };
      if (pkg.name === 'troupe') return pkg.version;
    } catch {
      // Not here: look one level up.
    }
    dir = new URL('..', dir);
  }
  return '0.0.0-unknown';
})();
