/**
 * The port report: the one line agentctl writes to an inherited file descriptor
 * (`AGENTCTL_REPORT_FD`) once its control server listens. A local executor starts agentctl on port
 * 0 and connects only to the port this line names, so nothing that merely answers on a port it
 * guessed can receive the nonce, the token or the secret environment.
 * No Node APIs here.
 * @module
 */

/** What agentctl reports after binding. */
export interface PortReport {
  /** The control port agentctl bound on 127.0.0.1. */
  readonly controlPort: number;
}

/** Longest line accepted (the real one is ~25 bytes); a reader stops reading after this. */
export const MAX_PORT_REPORT_BYTES = 256;

/** The exact line agentctl writes, newline included. */
export function formatPortReport(report: PortReport): string {
  return `${JSON.stringify({ control_port: report.controlPort })}\n`;
}

function isPort(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 65535;
}

/**
 * Parses one report line (without its newline). Anything but an object with exactly an integer
 * `control_port` between 1 and 65535 is refused with an error saying what is wrong (never echoing
 * the line: it came from a process that may be misbehaving).
 */
export function parsePortReport(line: string): PortReport {
  if (line.length > MAX_PORT_REPORT_BYTES) throw new Error(`port report: longer than ${MAX_PORT_REPORT_BYTES} bytes`);
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw new Error('port report: not a JSON line');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('port report: not a JSON object');
  const keys = Object.keys(value);
  if (keys.length !== 1 || keys[0] !== 'control_port') throw new Error('port report: must hold exactly the field control_port');
  const port = (value as { control_port: unknown }).control_port;
  if (!isPort(port)) throw new Error('port report: control_port must be an integer between 1 and 65535');
  return { controlPort: port };
}
