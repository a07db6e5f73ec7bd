/**
 * Turns argv into a command invocation with node:util parseArgs: global flags may come before
 * or after the command, `--` ends the flags (for `exec`). Pure; throws UsageError.
 * @module
 */
import { parseArgs } from 'node:util';
import { UsageError } from './exit-codes.js';
import { OUTPUT_FORMATS, type OutputFormat } from './output.js';
import { COMMANDS, GLOBAL_OPTIONS, findCommand } from './registry.js';
import type { CommandSpec, GlobalFlags, OptionSpec, ParsedCommand } from './types.js';

export type Invocation =
  | { kind: 'help'; command?: CommandSpec }
  | { kind: 'version' }
  | { kind: 'run'; command: CommandSpec; globals: GlobalFlags; parsed: ParsedCommand };

type ParseArgsOptions = Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }>;

const toParseArgs = (opts: Record<string, OptionSpec>): ParseArgsOptions =>
  Object.fromEntries(
    Object.entries(opts).map(([k, o]) => [
      k,
      { type: o.type, ...(o.short ? { short: o.short } : {}), ...(o.multiple ? { multiple: true } : {}) },
    ]),
  );

/** Global flags that take a value (`--data-dir X`), as they may appear before the command name. */
const VALUE_FLAGS = new Set(
  Object.entries(GLOBAL_OPTIONS).flatMap(([k, o]) => (o.type === 'string' ? [`--${k}`, ...(o.short ? [`-${o.short}`] : [])] : [])),
);

export function parseCommandLine(argv: readonly string[]): Invocation {
  const dashdash = argv.indexOf('--');
  const head = dashdash >= 0 ? argv.slice(0, dashdash) : [...argv];
  const rest = dashdash >= 0 ? argv.slice(dashdash + 1) : [];

  let cmdIndex = -1;
  for (let i = 0; i < head.length; i++) {
    const a = head[i] ?? '';
    if (VALUE_FLAGS.has(a)) {
      i++;
      continue;
    }
    if (!a.startsWith('-')) {
      cmdIndex = i;
      break;
    }
  }
  const before = cmdIndex >= 0 ? head.slice(0, cmdIndex) : head;
  if (cmdIndex < 0) {
    if (before.includes('--version') || before.includes('-v')) return { kind: 'version' };
    if (before.length === 0 || before.includes('--help') || before.includes('-h')) return { kind: 'help' };
    // Only flags: let parseArgs explain what is wrong with them.
    parseOrUsage(before, toParseArgs(GLOBAL_OPTIONS), undefined);
    return { kind: 'help' };
  }
  const name = head[cmdIndex] ?? '';
  if (name === 'help') {
    const target = head[cmdIndex + 1];
    // `berth help help`: the main help is the one that explains `help`
    if (target === undefined || target === 'help') return { kind: 'help' };
    const command = findCommand(target);
    if (!command) throw new UsageError(`unknown command '${target}' (commands: ${COMMANDS.map((c) => c.name).join(', ')})`);
    return { kind: 'help', command };
  }
  const command = findCommand(name);
  if (!command) throw new UsageError(`unknown command '${name}' (commands: ${COMMANDS.map((c) => c.name).join(', ')})`);

  const args = [...before, ...head.slice(cmdIndex + 1)];
  const { values, positionals } = parseOrUsage(args, toParseArgs({ ...GLOBAL_OPTIONS, ...command.options }), command.name);
  if (values.help === true) return { kind: 'help', command };

  const required = command.positionals.filter((p) => !p.endsWith('?'));
  if (positionals.length < required.length) {
    throw new UsageError(`${command.name}: missing ${required.slice(positionals.length).join(', ')}`, command.name);
  }
  if (positionals.length > command.positionals.length) {
    const extra = positionals.slice(command.positionals.length).join(' ');
    const tip = command.rest ? ` (put the command after --: berth ${command.name} ID -- CMD...)` : '';
    throw new UsageError(`${command.name}: unexpected argument '${extra}'${tip}`, command.name);
  }
  if (command.rest === 'required' && rest.length === 0) {
    throw new UsageError(`${command.name}: missing the command after -- (e.g. berth ${command.name} ID -- git status)`, command.name);
  }
  if (!command.rest && dashdash >= 0) throw new UsageError(`${command.name}: does not take arguments after --`, command.name);
  // An empty word ('' from an unset shell variable) would reach the API as a missing id or program.
  positionals.forEach((p, i) => {
    if (p === '' && command.positionals[i]?.endsWith('?') === false) throw new UsageError(`${command.name}: ${command.positionals[i] ?? 'argument'} must not be empty`, command.name);
  });
  if (command.rest && rest[0] === '') throw new UsageError(`${command.name}: the command after -- must not be empty`, command.name);

  const globals: GlobalFlags = {};
  if (typeof values['data-dir'] === 'string') globals.dataDir = values['data-dir'];
  if (typeof values.config === 'string') globals.config = values.config;
  if (typeof values.server === 'string') globals.server = values.server;
  if (typeof values.output === 'string') {
    const out = values.output as OutputFormat;
    if (!OUTPUT_FORMATS.includes(out)) throw new UsageError(`-o: must be one of ${OUTPUT_FORMATS.join(', ')}`, command.name);
    if (!command.formats.includes(out)) {
      throw new UsageError(
        command.formats.length === 0
          ? `${command.name}: does not support -o`
          : `${command.name}: -o must be one of ${command.formats.join(', ')}`,
        command.name,
      );
    }
    globals.output = out;
  }
  const own: ParsedCommand['values'] = {};
  for (const key of Object.keys(command.options)) own[key] = values[key] as ParsedCommand['values'][string];
  return { kind: 'run', command, globals, parsed: { values: own, positionals, rest } };
}

function parseOrUsage(
  args: string[],
  options: ParseArgsOptions,
  command: string | undefined,
): { values: Record<string, string | boolean | (string | boolean)[] | undefined>; positionals: string[] } {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (err) {
    const raw = (err as Error).message.replace(/\. To specify a positional argument.*$/s, '');
    // node's wording ("Unknown option '--x'") in the style of our messages (lower case after the prefix)
    const msg = `${raw.charAt(0).toLowerCase()}${raw.slice(1)}`;
    throw new UsageError(command ? `${command}: ${msg}` : msg, command);
  }
}
