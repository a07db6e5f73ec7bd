/**
 * The one redaction of text that leaves a process boundary — error bodies, events, inventory rows,
 * logs, client error messages — used by the controller, the executors, agentctl and the
 * browser-safe client alike (spec §2.6, with Berth's changes noted below). Pure: no imports, no
 * Node globals.
 *
 * In order: exact known secrets (raw and percent-encoded); URL userinfo and query strings (and, with
 * `urls: 'origin'`, the whole path); `Authorization:` values, `Bearer`/`Basic` credentials,
 * `--token`-style flags and `password=`/`token:`-style pairs; JWTs and vendor tokens (`ghp_…`,
 * `sk-…`, …, prefix kept); then long opaque runs judged by their shape (secret-shapes.ts) so that
 * 64-hex nonces and base64 blobs go while Kubernetes names, UUIDs and paths stay readable; home
 * directories (`/home/<name>`, `/Users/<name>`, `home`) become `~`; the result is capped.
 * @module
 */
import { redactOpaqueRun } from './secret-shapes.js';

/** Longest sanitized message (the default cap). */
export const MAX_SANITIZED_LENGTH = 4096;

/** What a redacted value is replaced with. */
const REDACTED = '***';

interface SanitizeOptions {
  /** Exact values to remove before any pattern runs (a token, a nonce); empty ones are ignored. */
  readonly secrets?: readonly (string | undefined)[];
  /** A home directory shown as `~` (`/home/<name>` and `/Users/<name>` always are). */
  readonly home?: string;
  /**
   * `path` (default): userinfo and query removed, the path kept — a clone error must name the
   * repository. `origin`: reduced to `scheme://host` (spec §2.6) — for text from elsewhere, such as
   * cluster Events, whose URLs may carry registry paths and tokens.
   */
  readonly urls?: 'path' | 'origin';
  /** Cap on the returned length; longer text is cut and ends in `…`. @default 4096 */
  readonly maxLength?: number;
}

/** `scheme://userinfo@`: the userinfo runs to the last `@` before the path, so an unencoded `@` in a password goes too. */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^/\s?#'"]*@/gi;
const URL_QUERY = /(\b[a-z][a-z0-9+.-]*:\/\/[^\s?#'"]*)\?[^\s#'"]*/gi;
const URL_ORIGIN = /\b([a-z][a-z0-9+.-]*:\/\/)(?:[^/\s?#'"@]*@)?([^/\s?#'"]*)[^\s'"]*/gi;

/** `Authorization: <scheme> <credentials>` (header, JSON or key=value) → `Authorization: ***`. */
const AUTHORIZATION = /\b((?:proxy-)?authorization["']?\s*[:=]\s*["']?)(?:(?:Bearer|Basic|Token|Digest|Negotiate)\s+)?[^\s"',;}]+/gi;
/** `Bearer <token68>`: only values that are not a plain word (`Bearer token expired` stays). */
const BEARER = /\b(Bearer|Basic)\s+([A-Za-z0-9._~+/=-]{8,})/gi;
const SECRET_FLAG = /(--(?:api[-_]?key|token|auth[-_]token|password|secret|nonce)(?:=|\s+))("?)[^\s"]+/gi;
/** `password=…`, `"token": "…"`, `BERTH_AGENTCTL_TOKEN=…`, `client_secret: …` → the value redacted. */
const SECRET_PAIR =
  /\b((?:[A-Za-z0-9]+[_-])*(?:token|password|passwd|secret|nonce|api[_-]?key|apikey|access[_-]?key|private[_-]?key))(["']?\s*[:=]\s*["']?)[^\s"',;&})\]]+/gi;
const JWT = /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g;
/** Vendor tokens with a recognisable prefix; the prefix is kept so the user knows which one leaked. */
const VENDOR_TOKENS: readonly RegExp[] = [
  /\b(gh[pousr]_)[A-Za-z0-9]{8,}/g,
  /\b(github_pat_)[A-Za-z0-9_]{8,}/g,
  /\b(glpat-)[A-Za-z0-9_-]{8,}/g,
  /\b(npm_)[A-Za-z0-9]{36}\b/g,
  /\b(xox[abeprs]-)[A-Za-z0-9-]{8,}/g,
  /\b((?:sk|rk)[-_](?:live_|test_|proj-|ant-)?)[A-Za-z0-9_-]{16,}/g,
  /\b(A[KS]IA)[A-Z0-9]{16}\b/g,
];
/** Runs of token characters; each is judged by secret-shapes.ts. */
const TOKEN_RUN = /[A-Za-z0-9+/=_.-]{32,}/g;
/** Content digests (`sha256:<hex>`) are public identifiers (image references), not secrets. */
const DIGEST_PREFIX = /(?:^|[^A-Za-z0-9])sha(?:1|256|384|512):$/;
/** A home directory at the start of a path (not `/srv/home/x`): the user name goes. */
const HOME_DIR = /(?<![A-Za-z0-9._-])\/(?:home|Users)\/[^/\s'"`:;,)]+/g;

/** Returns `text` with secrets and credential-shaped values replaced by `***`, capped in length. */
export function sanitize(text: string, opts: SanitizeOptions = {}): string {
  let out = text;
  for (const secret of opts.secrets ?? []) {
    if (secret === undefined || secret.length === 0) continue;
    for (const form of new Set([secret, encodeURIComponent(secret)])) out = out.split(form).join(REDACTED);
  }
  if (opts.urls === 'origin') out = out.replace(URL_ORIGIN, '$1$2');
  out = out.replace(URL_USERINFO, `$1${REDACTED}@`).replace(URL_QUERY, `$1?${REDACTED}`);
  out = out.replace(AUTHORIZATION, `$1${REDACTED}`);
  out = out.replace(BEARER, (match: string, scheme: string, value: string) => (/^[A-Z]?[a-z]+$/.test(value) ? match : `${scheme} ${REDACTED}`));
  out = out.replace(SECRET_FLAG, `$1$2${REDACTED}`);
  out = out.replace(SECRET_PAIR, `$1$2${REDACTED}`);
  out = out.replace(JWT, REDACTED);
  for (const re of VENDOR_TOKENS) out = out.replace(re, `$1${REDACTED}`);
  out = out.replace(TOKEN_RUN, (run: string, offset: number, whole: string) =>
    DIGEST_PREFIX.test(whole.slice(Math.max(0, offset - 8), offset)) ? run : redactOpaqueRun(run, REDACTED),
  );
  if (opts.home !== undefined && opts.home.length > 1) out = out.replace(homePattern(opts.home), '~');
  out = out.replace(HOME_DIR, '~');
  const max = opts.maxLength ?? MAX_SANITIZED_LENGTH;
  return out.length > max ? `${out.slice(0, Math.max(0, max - 1))}…` : out;
}

/** `home` as a whole path prefix: `/root` matches in `/root/x`, not in `/rootfs`. */
function homePattern(home: string): RegExp {
  const escaped = home.replace(/\/+$/, '').replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(?<![A-Za-z0-9._-])${escaped}(?=$|[/\\s'"\`:;,)])`, 'g');
}
