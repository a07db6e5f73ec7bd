/**
 * The error every layer throws for an invalid configuration field: executors parse their own
 * profile sections, the config layer the file around them.
 * @module
 */

/** Thrown when a config field is invalid; `path` is the dotted field path (`agents.claude.command`). */
export class ConfigFieldError extends Error {
  override readonly name = 'ConfigFieldError';
  constructor(
    readonly path: string,
    readonly detail: string,
    readonly file: string | null = null,
  ) {
    super(`${path === '' ? '(root)' : path}: ${detail}${file === null ? '' : ` (in ${file})`}`);
  }
}
