/**
 * The logger shape the controller side uses: the pino call style (`log.info({ fields }, 'message')`),
 * so a pino logger fits and tests can pass a silent one.
 * @module
 */

export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export const silentLogger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};
