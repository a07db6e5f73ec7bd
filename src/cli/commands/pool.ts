/** `berth pool [ls]` and `berth pool rm PROFILE`: the warm pools and their members. @module */
import type { PoolView } from '../../api/index.js';
import { write } from '../context.js';
import { ExitCode, UsageError } from '../exit-codes.js';
import { formatAge, formatData, formatDuration, formatTable } from '../output.js';
import type { CliContext, ParsedCommand } from '../types.js';

/** One line per pooled profile; `wide` adds a line per member. */
export function renderPools(pools: readonly PoolView[], now: Date, wide: boolean): string {
  if (pools.length === 0) return 'no warm pool (set profiles.<name>.pool in berth.yaml)\n';
  const rows = pools.map((p) => [
    p.profile,
    p.executor,
    `${p.ready}/${p.size}`,
    String(p.creating),
    p.maxAgeMs > 0 ? formatDuration(p.maxAgeMs) : '-',
    p.repository ? `${p.repository.url}${p.repository.branch ? ` (${p.repository.branch})` : ''}` : '-',
  ]);
  let out = formatTable(['PROFILE', 'EXECUTOR', 'READY', 'MAKING', 'MAX-AGE', 'REPOSITORY'], rows);
  if (wide) {
    const members = pools.flatMap((p) => p.members.map((m) => [p.profile, m.id, m.state, m.pod ?? '-', formatAge(m.createdAt, now)]));
    if (members.length > 0) out += `\n${formatTable(['PROFILE', 'MEMBER', 'STATE', 'POD', 'AGE'], members)}`;
  }
  return out;
}

export async function run(ctx: CliContext, cmd: ParsedCommand): Promise<number> {
  const [action, profile, extra] = cmd.positionals;
  if (action === undefined || action === 'ls') {
    if (profile !== undefined) throw new UsageError(`pool ls: unexpected argument '${profile}'`, 'pool');
    const pools = await ctx.client().pools.list();
    if (ctx.output === 'json' || ctx.output === 'yaml') await write(ctx.io.stdout, formatData({ pools }, ctx.output));
    else await write(ctx.io.stdout, renderPools(pools, ctx.now(), ctx.output === 'wide'));
    return ExitCode.ok;
  }
  if (action === 'rm') {
    if (profile === undefined) throw new UsageError('pool rm: missing PROFILE (list the pools with: berth pool ls)', 'pool');
    if (extra !== undefined) throw new UsageError(`pool rm: unexpected argument '${extra}'`, 'pool');
    const res = await ctx.client().pools.remove(profile);
    if (ctx.output === 'json' || ctx.output === 'yaml') await write(ctx.io.stdout, formatData(res, ctx.output));
    else await write(ctx.io.stdout, `removed ${res.removed} ready member${res.removed === 1 ? '' : 's'} of profile ${res.profile}'s pool (it makes new ones while its size is above 0; pool: {size: 0} keeps it empty)\n`);
    return ExitCode.ok;
  }
  throw new UsageError(`pool: unknown action '${action}' (ls, rm PROFILE)`, 'pool');
}
