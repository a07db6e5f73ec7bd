/**
 * Errors of the controller configuration (`berth.yaml`).
 * @module
 */

/**
 * Thrown when the config file cannot be read or is not valid YAML. The message gives line and column
 * but never echoes file content (it may hold secrets).
 */
export class ConfigFileError extends Error {
  override readonly name = 'ConfigFileError';
  constructor(
    readonly file: string,
    detail: string,
    readonly line: number | null = null,
    readonly column: number | null = null,
    options?: { cause?: unknown },
  ) {
    super(`config ${file}${line === null ? '' : `:${line}:${column ?? 1}`}: ${detail}`, options);
  }
}
