/**
 * The launch form's environment box: one `KEY=VALUE` per line. Blank lines and `#` comments are
 * skipped; the value is everything after the first `=` (it may contain `=` and spaces).
 * @module
 */

type EnvParse = { ok: true; env: Record<string, string> } | { ok: false; line: number; message: string };

const KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function parseEnvLines(text: string): EnvParse {
  const env: Record<string, string> = {};
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!;
    const trimmed = raw.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const n = i + 1;
    const eq = raw.indexOf('=');
    if (eq < 0) return { ok: false, line: n, message: `env line ${n} ("${clip(trimmed)}") has no "=": write it as KEY=VALUE` };
    const key = raw.slice(0, eq).trim();
    if (!KEY.test(key)) {
      return {
        ok: false,
        line: n,
        message: `env line ${n}: "${clip(key)}" is not a valid variable name (letters, digits and _, not starting with a digit)`,
      };
    }
    if (Object.hasOwn(env, key)) return { ok: false, line: n, message: `env line ${n}: ${key} is already set on an earlier line` };
    env[key] = raw.slice(eq + 1);
  }
  return { ok: true, env };
}

function clip(s: string): string {
  return s.length > 40 ? `${s.slice(0, 40)}…` : s;
}
