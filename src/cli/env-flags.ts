/**
 * The values of the environment flags (`--env K=V`, `--secret-env NAME`) of launch and exec. Pure;
 * throws UsageError naming the flag.
 * @module
 */
import { UsageError } from './exit-codes.js';

/** Parses repeated `K=V` flags into a map (UsageError naming the flag on a bad entry). */
export function parseEnvPairs(pairs: readonly string[] | undefined, flag: string, command: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of pairs ?? []) {
    const eq = pair.indexOf('=');
    const key = eq > 0 ? pair.slice(0, eq) : '';
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) throw new UsageError(`${flag}: expected K=V with a valid variable name, got '${pair}'`, command);
    env[key] = pair.slice(eq + 1);
  }
  return env;
}

/** Parses repeated variable-name flags (`--secret-env NAME`), dropping duplicates (UsageError naming the flag on a bad name). */
export function parseEnvNames(names: readonly string[] | undefined, flag: string, command: string): string[] {
  const out: string[] = [];
  for (const name of names ?? []) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
      const hint = name.includes('=') ? ' (give only the name: the value is read from the environment of berth serve)' : '';
      throw new UsageError(`${flag}: expected an environment variable name, got '${name}'${hint}`, command);
    }
    if (!out.includes(name)) out.push(name);
  }
  return out;
}
