/** `berth version` and `berth openapi` (both work without a running serve). @module */
import { writeFileSync } from 'node:fs';
import { VERSION } from '../../shared/version.js';
import { write } from '../context.js';
import { ExitCode } from '../exit-codes.js';
import { formatData } from '../output.js';
import type { CliContext, ParsedCommand } from '../types.js';
import { versionInfo, versionLine } from '../version-line.js';

export async function version(ctx: CliContext): Promise<number> {
  const info = versionInfo();
  if (ctx.output === 'json' || ctx.output === 'yaml') await write(ctx.io.stdout, formatData(info, ctx.output));
  else await write(ctx.io.stdout, versionLine(info));
  return ExitCode.ok;
}

export async function openapi(ctx: CliContext, cmd: ParsedCommand): Promise<number> {
  // Loaded here: `berth version` shares this module and needs none of the API schemas.
  const { generateOpenApi } = await import('../../api/index.js');
  const text = `${JSON.stringify(generateOpenApi(VERSION), null, 2)}\n`;
  const out = cmd.values.out;
  if (typeof out === 'string') {
    writeFileSync(out, text);
    await write(ctx.io.stderr, `wrote ${out}\n`);
  } else {
    await write(ctx.io.stdout, text);
  }
  return ExitCode.ok;
}
