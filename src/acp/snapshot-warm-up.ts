/**
 * What the startup snapshot can run at build time (see snapshot-entry.ts): the session machinery's
 * part of `session/new` on a throwaway session in a temporary home, so that the snapshot holds it
 * compiled. The SDK's own request path cannot run here: its stream writer makes Node create a second
 * V8 context, which a snapshot cannot hold.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as acp from '@agentclientprotocol/sdk';
import { silentLogger } from '../core/ports.js';
import { loadConfig } from '../providers/config.js';
import { usableModels } from '../providers/registry.js';
import { SessionHost } from './session-host.js';
import { configOptions, modeState } from './session-options.js';

export async function snapshotWarmUp(): Promise<void> {
  const home = mkdtempSync(join(tmpdir(), 'troupe-snapshot-warm-up-'));
  try {
    const env = { HOME: home, TROUPE_HOME: home };
    const config = loadConfig(env);
    const host = await SessionHost.open({ home, env, config, logger: silentLogger });
    const client = { request: async () => ({}), notify: async () => undefined } as unknown as acp.AgentContext;
    host.attach(client, {});
    for (let i = 0; i < 2; i++) {
      const live = await host.create({ cwd: home, additionalDirectories: [] });
      const conv = live.engine.conversation;
      modeState(conv.mode);
      configOptions({ mode: conv.mode, model: conv.model }, usableModels(env, config));
      await host.unload(live.engine.sessionId);
    }
    await host.shutdown();
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}
