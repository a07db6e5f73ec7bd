/**
 * `berth doctor --egress PROFILE`: whether the profile's egress policy is enforced on its cluster
 * (executors/kubernetes/doctor-egress.ts), as probe lines and a verdict; exits 1 unless enforced.
 * @module
 */
import { resolveProfile, type ResolvedConfig } from '../../config/index.js';
import { egressDoctor } from '../../executors/kubernetes/index.js';
import { readInstallationId } from '../../shared/installation-id.js';
import { write } from '../context.js';
import { ExitCode } from '../exit-codes.js';
import { UsageError } from '../exit-codes.js';
import type { CliContext } from '../types.js';

export async function runEgressDoctor(ctx: CliContext, config: ResolvedConfig, name: string): Promise<number> {
  const resolved = resolveProfile(config, name);
  const profile = resolved?.profile;
  if (!resolved || !profile) throw new UsageError(`doctor --egress: '${name}' is not a profile of the config`, 'doctor');
  if (resolved.executor.type !== 'kubernetes' || profile.kubernetes === null) throw new UsageError(`doctor --egress: profile '${name}' is not on a kubernetes executor`, 'doctor');
  if (!profile.network) throw new UsageError(`doctor --egress: profile '${name}' has no network: settings (nothing to enforce)`, 'doctor');
  const report = await egressDoctor({
    executor: resolved.executor.name,
    connection: resolved.executor.connection,
    profileName: name,
    profile: profile.kubernetes,
    network: profile.network,
    proxy: resolved.executor.egressProxy,
    installationId: readInstallationId(ctx.dataDir),
    env: ctx.env,
    onProgress: (line) => void write(ctx.io.stderr, `· ${line}\n`),
  });
  const lines = report.probes.map((p) => {
    const ok = p.expect === 'blocked' ? p.result === 'blocked' : p.result === 'reachable';
    return `${ok ? 'ok  ' : 'fail'}  ${p.name.padEnd(16)} ${p.target.padEnd(24)} expected ${p.expect}, ${p.result}${p.detail ? ` (${p.detail})` : ''}`;
  });
  await write(ctx.io.stdout, `${lines.join('\n')}\n${report.verdict === 'enforced' ? 'ok' : 'fail'}: ${report.message}\n`);
  return report.verdict === 'enforced' ? ExitCode.ok : ExitCode.error;
}
