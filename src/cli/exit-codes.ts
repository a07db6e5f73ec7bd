/**
 * berth's exit codes, and the one mapping from errors to them (documented in `berth --help`).
 * @module
 */
import { describeConfigError, describeRemoteError } from './remote-errors.js';

export const ExitCode = {
  ok: 0,
  error: 1,
  usage: 2,
  notFound: 3,
  conflict: 4,
  unreachable: 5,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** Thrown for a command line that does not parse (unknown flag, missing argument, bad value). */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  constructor(
    message: string,
    /** The command whose help to point at, if any. */
    readonly command?: string,
  ) {
    super(message);
  }
}

/** Thrown when no `berth serve` is running for the data dir. */
export class ServeNotRunningError extends Error {
  override readonly name = 'ServeNotRunningError';
  constructor(readonly dataDir: string) {
    super(`no berth controller is running for data dir ${dataDir}`);
  }
}

/** Thrown when a stream from the controller breaks off (serve died or restarted) mid-way. */
export class ControllerLostError extends Error {
  override readonly name = 'ControllerLostError';
  constructor(
    readonly reason: string,
    /** The command line that picks up where the stream stopped, when there is one. */
    readonly resumeWith: string | null,
    /** What became of the work and what to do next, when nothing can simply resume it. */
    readonly hint?: string,
  ) {
    super(resumeWith !== null ? `lost the controller (${reason}); resume with: ${resumeWith}` : `lost the controller (${reason})`);
  }
}

/**
 * `err` as a ControllerLostError with `hint` when it is a stream that broke off (the controller
 * went away mid-command); anything else is returned as is, to be rethrown.
 */
export function lostDuring(err: unknown, hint: string): unknown {
  if ((err as Error | undefined)?.name !== 'StreamBrokenError') return err;
  const cause = (err as Error).cause;
  return new ControllerLostError(cause instanceof Error && cause.message !== '' ? cause.message : (err as Error).message, null, hint);
}

interface ErrorReport {
  code: ExitCode;
  message: string;
  hint?: string;
}

/** `--data-dir DIR ` as typed on a command line (quoted when needed), or '' without one. */
export function dataDirArgs(dataDirFlag: string | undefined): string {
  if (dataDirFlag === undefined) return '';
  const word = /^[\w./~@%+=:,-]+$/.test(dataDirFlag) ? dataDirFlag : `'${dataDirFlag.replaceAll("'", `'\\''`)}'`;
  return `--data-dir ${word} `;
}

/**
 * Maps anything a command threw to an exit code, a one-line message and an optional hint.
 * `dataDirFlag`: the --data-dir the user passed, repeated in hints that suggest a command.
 */
export function describeError(
  err: unknown,
  opts: { dataDirFlag?: string | undefined; remote?: { server: string; context: string | null } | undefined } = {},
): ErrorReport {
  const e = err instanceof Error ? err : new Error(String(err));
  const special = describeConfigError(e) ?? (opts.remote ? describeRemoteError(e, opts.remote.server, opts.remote.context) : null);
  if (special !== null) return special as ErrorReport;
  switch (e.name) {
    case 'UsageError': {
      const cmd = (e as UsageError).command;
      return { code: ExitCode.usage, message: e.message, hint: `see: berth ${cmd ? `${cmd} ` : ''}--help` };
    }
    case 'ServeNotRunningError':
    case 'ControllerUnreachableError':
      return { code: ExitCode.unreachable, message: e.message, hint: `start it with: berth ${dataDirArgs(opts.dataDirFlag)}serve` };
    case 'ControllerLostError': {
      const hint = (e as ControllerLostError).hint;
      return { code: ExitCode.unreachable, message: e.message, ...(hint !== undefined ? { hint } : {}) };
    }
    case 'StreamBrokenError':
      return { code: ExitCode.unreachable, message: e.message, hint: `is berth serve still running? check with: berth ${dataDirArgs(opts.dataDirFlag)}doctor` };
    case 'ServeLockedError':
      return { code: ExitCode.conflict, message: e.message };
    case 'ConfigFieldError':
    case 'ConfigFileError':
      return { code: ExitCode.error, message: `invalid config: ${e.message}` };
    case 'BerthApiError': {
      const status = (e as Error & { status: number }).status;
      if (status === 400) return { code: ExitCode.usage, message: e.message };
      if (status === 401) {
        return { code: ExitCode.error, message: e.message, hint: 'the API token changed: was berth serve restarted with another --data-dir?' };
      }
      if (status === 404) return { code: ExitCode.notFound, message: e.message };
      if (status === 409) return { code: ExitCode.conflict, message: e.message };
      return { code: ExitCode.error, message: e.message };
    }
    case 'SessionNotFoundError':
      return { code: ExitCode.notFound, message: e.message };
    case 'SessionStateError':
      return { code: ExitCode.conflict, message: e.message };
    default:
      return { code: ExitCode.error, message: e.message || String(err) };
  }
}
