/**
 * `troupe models [--json]`: the model catalogue, which providers are usable with the credentials
 * present, and the default model. Reads local config only; never prints a credential.
 */
import { isTroupeError } from '../core/errors.js';
import type { ModelCapabilities } from '../core/provider.js';
import { loadConfig, type CredentialSource, type TroupeConfig } from '../providers/config.js';
import { chooseDefaultModel, CREDENTIAL_HINTS, defaultModelProblem, providerStatus, type DefaultModelSource, type ProviderStatus } from '../providers/registry.js';
import { noExtraPositionals, parseCommandArgs } from './args.js';
import { CliError, EXIT, reportError } from './cli-io.js';

const USAGE = `Usage: troupe models [--json] [--no-color]

Lists every provider, whether it is usable with the credentials present, and its models.
  --json   print one JSON document instead of the table

Examples:
  troupe models
  troupe models --json | jq -r '.providers[] | select(.usable) | .models[].id'
`;


const SOURCES: Record<DefaultModelSource, string> = {
  TROUPE_MODEL: 'from TROUPE_MODEL',
  config: 'from the config file',
  credential: 'first provider with a credential',
  offline: 'offline demo model: no API key found',
};

export async function modelsCommand(
  args: string[],
  io: { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream; env: NodeJS.ProcessEnv },
): Promise<number> {
  let json: boolean;
  let config;
  try {
    const { values, positionals } = parseCommandArgs('models', args, { json: { type: 'boolean' } });
    if (values.help) return void io.stdout.write(USAGE), EXIT.ok;
    noExtraPositionals('models', positionals, 0);
    json = values.json ?? false;
    config = loadConfig(io.env);
  } catch (err) {
    if (!(err instanceof CliError) && !isTroupeError(err)) throw err;
    return reportError(io, 'models', err);
  }
  const providers = providerStatus(io.env, config);
  const chosen = chooseDefaultModel(io.env, config);
  // A default no session could be made with (TROUPE_MODEL=scripted/nope): until 2026-12-07 listed as any other.
  const problem = unusableDefault(io.env, config);
  if (json) {
    io.stdout.write(`${JSON.stringify({ defaultModel: chosen.modelId, defaultModelSource: chosen.source, defaultModelProblem: problem ?? null, configFile: config.source ?? null, providers }, null, 2)}\n`);
    return 0;
  }
  io.stdout.write(`Default model: ${chosen.modelId} (${SOURCES[chosen.source]})${problem ? `: cannot be used: ${problem}` : ''}\n`);
  for (const p of providers) io.stdout.write(`\n${section(p)}`);
  return 0;
}

/** Why no session can be made with the default model (registry.ts defaultModelProblem's reason), or undefined. */
function unusableDefault(env: NodeJS.ProcessEnv, config: TroupeConfig): string | undefined {
  try {
    const problem = defaultModelProblem(env, config);
    return problem ? String(problem.data.reason) : undefined;
  } catch (err) {
    // What else resolving it throws (a TROUPE_SCRIPT that cannot be read) is its reason too.
    return err instanceof Error ? err.message : String(err);
  }
}

function section(p: ProviderStatus): string {
  const state = p.usable ? `usable${credentialNote(p.credential)}` : `not configured: ${CREDENTIAL_HINTS[p.id] ?? 'no credential'}`;
  const lines = [`${p.id}  ${p.label}  [${state}]${p.baseURL ? `  ${p.baseURL}` : ''}`];
  if (p.models.length === 0) {
    lines.push('  (no models listed: name them under providers["openai-compatible"].models, or use any name the server has)');
    return `${lines.join('\n')}\n`;
  }
  const rows = p.models.map((m) => [`${m.id}${m.default ? ' *' : ''}`, ...(m.capabilities ? capabilityCells(m.capabilities) : [`(${m.problem ?? 'unknown'})`])]);
  const header = ['MODEL', 'CONTEXT', 'OUTPUT', 'TOOLS', 'THINK', 'IMAGES', '$/M IN', '$/M OUT'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  for (const row of [header, ...rows]) lines.push(`  ${row.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd()}`);
  return `${lines.join('\n')}\n`;
}

function capabilityCells(c: ModelCapabilities): string[] {
  const yes = (b: boolean) => (b ? 'yes' : '-');
  const price = (n: number | undefined) => (n === undefined ? '-' : n.toFixed(n < 0.1 ? 3 : 2));
  return [tokens(c.contextWindow), tokens(c.maxOutputTokens), yes(c.tools), yes(c.thinking), yes(c.images), price(c.pricing?.input), price(c.pricing?.output)];
}

function tokens(n: number): string {
  if (n >= 1_000_000) return `${+(n / 1_000_000).toFixed(2)}M`;
  if (n >= 1_000) return `${Math.round(n / 1_000)}k`;
  return String(n);
}

function credentialNote(c: CredentialSource): string {
  if (c.kind === 'env') return `, ${c.name}`;
  if (c.kind === 'config') return ', config file';
  return '';
}
