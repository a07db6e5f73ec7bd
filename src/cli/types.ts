/**
 * The types the CLI's modules share: a command's spec and parsed arguments, the global flags, the
 * context every command gets, a `berth doctor` check. Types only; it imports no module of the CLI
 * but output.ts (for OutputFormat), so the command table (registry.ts), the argument parser and
 * the commands all depend on it and not on each other.
 * @module
 */
import type { BerthClient } from '../api/index.js';
import type { OutputFormat } from './output.js';

export interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  multiple?: boolean;
  /** Shown in help, e.g. `URL|PATH`. */
  value?: string;
  description: string;
}

export interface ParsedCommand {
  values: Record<string, string | boolean | string[] | undefined>;
  positionals: string[];
  /** Arguments after `--` (only for commands that accept them). */
  rest: string[];
}

export type CommandRun = (ctx: CliContext, cmd: ParsedCommand) => Promise<number>;

export interface CommandSpec {
  name: string;
  summary: string;
  /** Usage line after `berth `. */
  usage: string;
  description?: string;
  options: Record<string, OptionSpec>;
  /** Names of the positionals, in order; `?` suffix marks optional ones. */
  positionals: string[];
  /** Accepts `-- CMD...`. */
  rest?: 'required';
  /** Output formats -o accepts here (empty: -o is not used). */
  formats: readonly OutputFormat[];
  load: () => Promise<CommandRun>;
  /** Never talks to `berth serve`: the API client is not loaded (a faster start). */
  offline?: true;
  examples?: string[];
}

/** The flags every command accepts, as parsed. */
export interface GlobalFlags {
  dataDir?: string;
  /** --server: a remote controller's URL. */
  server?: string;
  config?: string;
  output?: OutputFormat;
}

export interface CliIo {
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number; rows?: number };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  stdin: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown };
}

/** What every command gets (built by `createContext` in context.ts). */
export interface CliContext {
  dataDir: string;
  /** --data-dir as the user gave it (for hints that repeat the command line), if given. */
  dataDirFlag: string | undefined;
  /** --server as the user gave it, if given. */
  serverFlag?: string | undefined;
  configPath: string | undefined;
  /** -o, or `table` when not given. */
  output: OutputFormat;
  io: CliIo;
  env: Readonly<Record<string, string | undefined>>;
  now(): Date;
  /** The client of the running serve; throws ServeNotRunningError when there is none. */
  client(): BerthClient;
  /** Resolves when the user interrupts (SIGINT); used by long-running commands to end cleanly. */
  interrupted: AbortSignal;
}

/** One line of `berth doctor` (its checks live in commands/doctor*.ts). */
export interface Check {
  name: string;
  ok: boolean;
  detail: string;
  fix?: string;
  /** A finding shown as `warn` that does not fail doctor (with `ok: true`). */
  warn?: boolean;
}
