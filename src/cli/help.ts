/**
 * Help texts: `berth --help` (commands, global flags, exit codes) and `berth CMD --help`.
 * @module
 */
import { COMMANDS, GLOBAL_OPTIONS } from './registry.js';
import type { CommandSpec, OptionSpec } from './types.js';

const EXIT_CODES_HELP = `Exit codes:
  0  ok
  1  error (the launch failed, invalid config, server error …)
  2  usage error (unknown flag, missing argument, invalid request field)
  3  not found (unknown session id or name)
  4  conflict (the session's state does not allow it; serve already running)
  5  controller unreachable (start it with: berth serve), also when it goes away mid-command
  exec and shell exit with the command's own exit code (5 when the controller went away meanwhile:
  the command's status is then unknown). A reader that goes away (berth logs ID | head -1) ends berth
  quietly with 0. Wherever a command takes an ID, a session's unique name works too.`;

function optionLines(opts: Record<string, OptionSpec>): string[] {
  const rows = Object.entries(opts).map(([name, o]) => {
    const flag = `${o.short ? `-${o.short}, ` : '    '}--${name}${o.value ? ` ${o.value}` : ''}`;
    return [flag, o.description] as const;
  });
  const width = Math.max(...rows.map(([f]) => f.length));
  return rows.map(([f, d]) => `  ${f.padEnd(width)}  ${d}`);
}

/** Greedy word wrap. */
export function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  if (line) lines.push(line);
  return lines;
}

export function mainHelp(version: string): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    `berth ${version}: isolated workspaces for AI coding agents`,
    '',
    'Usage: berth [global flags] COMMAND [flags] [args]',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    `  ${'help'.padEnd(width)}  help for a command (berth help CMD, or berth CMD --help)`,
    '',
    'Global flags:',
    ...optionLines(GLOBAL_OPTIONS),
    '',
    'Every command but serve, doctor, openapi, version, login, logout, context and help talks to a running',
    '`berth serve`: the data dir\'s (found through <data-dir>/serve.json; start one first in another terminal',
    'or in the background), or a remote one: --server URL, $BERTH_SERVER, or the current context of berth login.',
    '',
    EXIT_CODES_HELP,
    '',
    'Quick start:',
    '  berth serve &',
    '  berth launch --repo https://github.com/org/app.git --agent demo',
    '  berth shell <id>',
    '  berth dashboard            # a one-time login link to the web dashboard',
    '',
  ].join('\n');
}

export function commandHelp(c: CommandSpec): string {
  const lines = [`Usage: berth ${c.usage}`, '', c.summary[0]?.toUpperCase() + c.summary.slice(1) + '.'];
  if (c.description) lines.push('', ...wrap(c.description, 96));
  if (Object.keys(c.options).length > 0) lines.push('', 'Flags:', ...optionLines(c.options));
  const globals = Object.fromEntries(
    Object.entries(GLOBAL_OPTIONS).filter(([k]) => k !== 'output' || c.formats.length > 0),
  );
  if (c.formats.length > 0) globals.output = { ...GLOBAL_OPTIONS.output!, description: `output format: ${c.formats.join('|')}` };
  lines.push('', 'Global flags:', ...optionLines(globals));
  if (c.examples) lines.push('', 'Examples:', ...c.examples.map((e) => `  ${e}`));
  lines.push('', EXIT_CODES_HELP, '');
  return lines.join('\n');
}
