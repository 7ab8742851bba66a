/**
 * `troupe acp --check`: what an editor's `troupe acp` would use — the config file, each provider
 * and whether its key is present, the default model — and exit 1 when that configuration cannot
 * work (an unreadable config file, a default model no provider serves, a broken TROUPE_SCRIPT).
 */
import { isTroupeError } from '../core/errors.js';
import { configPath, loadConfig } from '../providers/config.js';
import { chooseDefaultModel, defaultModelProblem, providerStatus, resolveModel } from '../providers/registry.js';

export function acpCheck(env: NodeJS.ProcessEnv, out: (line: string) => void): number {
  let config;
  try {
    config = loadConfig(env);
  } catch (err) {
    out(`config   ${configPath(env)}: BROKEN: ${(err as Error).message}`);
    out('not ready: fix the lines marked above');
    return 1;
  }
  out(`config   ${config.source ?? `${configPath(env)} (absent: defaults)`}`);
  let ok = true;
  for (const p of providerStatus(env, config)) {
    const key = p.credential.kind === 'env' ? `key from ${p.credential.name}` : p.credential.kind === 'config' ? 'key from config' : 'no key';
    const broken = p.models.filter((m) => m.problem);
    out(`${p.usable ? 'ok  ' : '--  '} ${p.id.padEnd(18)} ${key}${p.baseURL ? `, base URL ${p.baseURL}` : ''}, ${p.models.length} models`);
    for (const m of broken) out(`       ${m.id}: ${m.problem}`);
  }
  const chosen = chooseDefaultModel(env, config);
  // The check a new session's default gets (usableDefaultModel): until 2026-12-07 only resolveModel's,
  // and TROUPE_MODEL=scripted/nope was "ready" though every turn would fail model_not_found.
  // Inside the try: it throws what else resolving the default throws (a TROUPE_SCRIPT that cannot be
  // read), the model's BROKEN line as before (review of 2026-12-07: it ended the check with a stack).
  try {
    const refused = defaultModelProblem(env, config);
    if (refused) throw refused;
    const resolved = resolveModel(chosen.modelId, env, config);
    out(`model    ${resolved.id} (${chosen.source}), context window ${resolved.capabilities.contextWindow}`);
  } catch (err) {
    out(`model    ${chosen.modelId} (${chosen.source}): BROKEN: ${isTroupeError(err) ? err.message : String(err)}`);
    ok = false;
  }
  if (chosen.modelId === 'scripted/replay' && !env.TROUPE_SCRIPT) {
    out('model    scripted/replay needs TROUPE_SCRIPT to name a script file');
    ok = false;
  }
  const status = providerStatus(env, config).find((p) => chosen.modelId.startsWith(`${p.id}/`));
  if (status && !status.usable) {
    out(`model    ${chosen.modelId}: its provider has no credential`);
    ok = false;
  }
  const problem = status?.models.find((m) => m.id === chosen.modelId)?.problem;
  if (problem) {
    out(`model    ${chosen.modelId}: ${problem}`);
    ok = false;
  }
  out(ok ? 'ready' : 'not ready: fix the lines marked above');
  return ok ? 0 : 1;
}
