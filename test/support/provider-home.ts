// A troupe home for a provider test: a config file (under its own XDG_CONFIG_HOME) whose
// `providers` section is given, typically to turn retries off.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The home, and the XDG_CONFIG_HOME to give the child, whose troupe/config.json holds `providers`. */
export function providerHome(providers: Record<string, unknown>): { home: string; configHome: string } {
  const home = mkdtempSync(join(tmpdir(), 'troupe-e2e-home-'));
  const configHome = join(home, 'config');
  mkdirSync(join(configHome, 'troupe'), { recursive: true });
  writeFileSync(join(configHome, 'troupe', 'config.json'), JSON.stringify({ providers }));
  return { home, configHome };
}
