/**
 * Size limits of a launch request and the rules for session names. Pure and without imports: the
 * API's wire schemas (browser-safe) and the controller's launch check (controller/validate.ts) both
 * apply them, so a direct caller of the controller gets the same answers as an API client.
 *
 * The limits follow from how the agent is started: the prompt reaches it as `BERTH_PROMPT` and,
 * with `{{prompt}}`, in argv; Linux refuses an exec (`E2BIG`) when one argv or environment string
 * exceeds 128 KiB (MAX_ARG_STRLEN) or all of them together exceed ARG_MAX (2 MiB with the default
 * 8 MiB stack). The limits keep a launch well below both, whatever the agent profile adds.
 * @module
 */

export const LAUNCH_LIMITS = {
  /** UTF-8 bytes of `prompt` (96 KiB): twice that (argv and env) still fits MAX_ARG_STRLEN per string. */
  promptBytes: 96 * 1024,
  /** Number of `env` entries. */
  envEntries: 256,
  /** UTF-8 bytes of one `env` entry, `NAME=value` (64 KiB). */
  envEntryBytes: 64 * 1024,
  /** UTF-8 bytes of all `env` entries together (256 KiB). */
  envTotalBytes: 256 * 1024,
} as const;

/** Session names: a letter or digit, then letters, digits, `.`, `_` or `-`; at most 63 characters. */
const SESSION_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;
/** The shape of the ids the manager gives sessions; a name may not look like one. */
export const SESSION_ID = /^s-[0-9a-f]{10}$/;

export interface LimitProblem {
  /** Dotted path of the field (`prompt`, `env.FOO`, `name`). */
  field: string;
  message: string;
}

const utf8Bytes = (s: string): number => new TextEncoder().encode(s).length;
const kib = (n: number): string => `${n / 1024} KiB`;

/** Why `name` is not an acceptable session name, or null. */
export function sessionNameProblem(name: string): string | null {
  if (!SESSION_NAME.test(name)) return 'must be 1-63 characters: letters, digits, ".", "_" or "-", starting with a letter or digit';
  if (SESSION_ID.test(name)) return 'must not look like a session id (s-xxxxxxxxxx)';
  return null;
}

/** The size and name problems of a launch request (empty when it is fine). */
export function launchRequestProblems(req: { name?: string | undefined; prompt?: string | undefined; env?: Record<string, string> | undefined }): LimitProblem[] {
  const problems: LimitProblem[] = [];
  if (req.name !== undefined) {
    const problem = sessionNameProblem(req.name);
    if (problem) problems.push({ field: 'name', message: problem });
  }
  if (req.prompt !== undefined) {
    // exec() takes NUL-terminated strings: a NUL would cut the prompt short (or fail the start).
    if (req.prompt.includes('\0')) problems.push({ field: 'prompt', message: 'must not contain NUL characters' });
    const bytes = utf8Bytes(req.prompt);
    if (bytes > LAUNCH_LIMITS.promptBytes) {
      problems.push({
        field: 'prompt',
        message: `is ${bytes} bytes; the limit is ${LAUNCH_LIMITS.promptBytes} bytes (${kib(LAUNCH_LIMITS.promptBytes)}): put a longer task in a file in the repository and point the prompt at it`,
      });
    }
  }
  const entries = Object.entries(req.env ?? {});
  if (entries.length > LAUNCH_LIMITS.envEntries) problems.push({ field: 'env', message: `has ${entries.length} entries; the limit is ${LAUNCH_LIMITS.envEntries}` });
  let total = 0;
  for (const [key, value] of entries) {
    const bytes = utf8Bytes(`${key}=${value}`);
    total += bytes;
    if (value.includes('\0')) problems.push({ field: `env.${key}`, message: 'must not contain NUL characters' });
    if (bytes > LAUNCH_LIMITS.envEntryBytes) {
      problems.push({ field: `env.${key}`, message: `is ${bytes} bytes; the limit per variable is ${LAUNCH_LIMITS.envEntryBytes} bytes (${kib(LAUNCH_LIMITS.envEntryBytes)})` });
    }
  }
  if (total > LAUNCH_LIMITS.envTotalBytes) {
    problems.push({ field: 'env', message: `is ${total} bytes in all; the limit is ${LAUNCH_LIMITS.envTotalBytes} bytes (${kib(LAUNCH_LIMITS.envTotalBytes)})` });
  }
  return problems;
}
