/**
 * Telling an opaque secret (token, key, nonce, base64 blob) from a long *name* (Kubernetes
 * `namespace/pod-name`, DNS names, UUIDs, volume names, paths) by its shape alone.
 * Pure: no imports, no Node globals — used by the browser-safe client and the bundled agentctl.
 *
 * A long run of token characters is judged by its parts (the pieces between `-`, `.`, `_`, `/`,
 * `+`, `=`) and by its character mix:
 * - a part of 32+ characters is opaque (64-hex nonces, API keys) unless it reads as words
 *   (letters only, CamelCase included). A 40-hex git object id goes too: it has the shape of a
 *   40-hex API token, and a leaked token costs more than an unreadable sha;
 * - a base64 padding `=` at the end of a long run is opaque;
 * - mixed case that reads as random rather than as CamelCase words (see {@link looksRandom}) is
 *   opaque even when separators cut it into short parts (base64url tokens contain `-` and `_`);
 * - a `+` between letters or digits in a mixed-case run is base64;
 * - everything else — lowercase DNS-style names, UUIDs (parts of at most 12 characters), paths of
 *   ordinary names — is kept.
 *
 * Measured with all rules together: of random base64/base64url tokens of 32-36 characters about
 * 0.1-0.5% are kept, of 40+ characters about 0.1%; random hex always goes. A 32+ character
 * CamelCase part with digits (`Http2ClientFactory…`) goes when it is not almost all words.
 * @module
 */

/** Runs shorter than this are never judged opaque (keyword rules catch short secrets in context). */
const MIN_OPAQUE_LENGTH = 32;

/** Random text: at least this share of adjacent pairs changes class … */
const RANDOM_TRANSITION_RATIO = 0.3;
/** … more than this share of its letters are capitals … */
const RANDOM_UPPER_SHARE = 0.2;
/** … and less than this share of it falls into CamelCase words of 3+ characters. */
const RANDOM_WORDY_SHARE = 0.75;
/** Too few pairs make the ratio meaningless. */
const MIN_PAIRS = 16;

const PART_SEPARATORS = /[-._/+=]+/;
const WORDS = /^[A-Za-z]+$/;

type CharClass = 'lower' | 'upper' | 'digit';

function charClass(c: string): CharClass {
  if (c >= 'a' && c <= 'z') return 'lower';
  if (c >= 'A' && c <= 'Z') return 'upper';
  return 'digit';
}

/** CamelCase words: `XML`, `Http`, `request`, `42`. */
const CAMEL_WORD = /[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+/g;

interface MixStats {
  /** Adjacent character pairs, and how many of them change class (lower/upper/digit). */
  pairs: number;
  changes: number;
  letters: number;
  upper: number;
  /** Characters in CamelCase words of 3+ characters, of all characters. */
  wordy: number;
  chars: number;
}

/** Character-mix statistics over the parts of `text` that contain both cases. */
function mixedCaseStats(text: string): MixStats {
  const stats: MixStats = { pairs: 0, changes: 0, letters: 0, upper: 0, wordy: 0, chars: 0 };
  for (const part of text.split(PART_SEPARATORS)) {
    if (!/[a-z]/.test(part) || !/[A-Z]/.test(part)) continue;
    for (let i = 0; i < part.length; i++) {
      const cls = charClass(part[i] ?? '');
      if (cls !== 'digit') stats.letters++;
      if (cls === 'upper') stats.upper++;
      if (i > 0) {
        stats.pairs++;
        if (charClass(part[i - 1] ?? '') !== cls) stats.changes++;
      }
    }
    for (const [word] of part.matchAll(CAMEL_WORD)) {
      stats.chars += word.length;
      if (word.length >= 3) stats.wordy += word.length;
    }
  }
  return stats;
}

/**
 * Mixed-case text that reads as random base64/base62 rather than as CamelCase words: its
 * characters change class often, capitals are common, and little of it falls into words of three
 * or more characters (`UserAccountService`, `XMLHttpRequest2` are nearly all words; a random
 * token splits into `o`, `J`, `Vre`, `EU`, `8` …). Single-case parts (`BERTH_WORKSPACE`,
 * `workspace`) are not looked at. On its own it misses about 0.5% of random base64/base64url
 * tokens of 32-44 characters and flags about 0.6% of synthetic CamelCase identifiers full of
 * acronyms and digits.
 */
function looksRandom(text: string): boolean {
  const s = mixedCaseStats(text);
  if (s.pairs < MIN_PAIRS) return false;
  return s.changes / s.pairs >= RANDOM_TRANSITION_RATIO && s.upper / s.letters > RANDOM_UPPER_SHARE && s.wordy / s.chars < RANDOM_WORDY_SHARE;
}

/** Share of CamelCase-word characters above which a long mixed-case part with digits is still a name. */
const NAME_WORDY_SHARE = 0.85;

/**
 * A long part that is still a name: letters only that read as words
 * (`UserAccountServiceImplementation`), or mixed case almost entirely made of CamelCase words
 * (`HttpFactoryPrepare89ItemListTopDIST`); a random base62 token is neither.
 */
function isLongName(part: string): boolean {
  if (looksRandom(part)) return false;
  if (WORDS.test(part)) return true;
  const s = mixedCaseStats(part);
  return s.chars === part.length && s.wordy / s.chars >= NAME_WORDY_SHARE;
}

/**
 * True when `run` (token characters; `/` counts as a separator) looks like a secret rather than a
 * name. Runs shorter than {@link MIN_OPAQUE_LENGTH} are never opaque.
 */
function isOpaqueToken(run: string): boolean {
  if (run.length < MIN_OPAQUE_LENGTH) return false;
  if (/[A-Za-z0-9]={1,2}$/.test(run)) return true;
  if (/[A-Za-z0-9]\+[A-Za-z0-9]/.test(run) && /[a-z]/.test(run) && /[A-Z]/.test(run)) return true;
  if (looksRandom(run)) return true;
  return run.split(PART_SEPARATORS).some((part) => part.length >= MIN_OPAQUE_LENGTH && !isLongName(part));
}

/** The first component of a path: empty (absolute, `//host`), `.`/`..`, or a plain name (`src`, `Users`, `berth-t-3f9a`). */
const PATH_HEAD = /^[A-Z]?[a-z0-9._-]*$/;
/** Path components at least this long are checked for a random character mix. */
const MIN_RANDOM_COMPONENT = 16;

/**
 * Redacts the opaque pieces of one run of token characters (`[A-Za-z0-9+/=_.-]`). A path — the run
 * contains `/` and starts like one: `/…`, `//host/…`, `src/…`, `namespace/pod` — is judged
 * component by component, so it keeps its readable names while an opaque or random-looking
 * component goes (unless it is random as a whole: a base64 blob such as `k3/EfB…` starts like a
 * path too). Any other run, a base64 blob with `/` in it included, is judged as a whole.
 */
export function redactOpaqueRun(run: string, marker: string): string {
  if (run.length < MIN_OPAQUE_LENGTH) return run;
  const components = run.split('/');
  if (components.length === 1 || !PATH_HEAD.test(components[0] ?? '')) return isOpaqueToken(run) ? marker : run;
  if (looksRandom(run)) return marker;
  return components.map((c) => (isOpaqueComponent(c) ? marker : c)).join('/');
}

function isOpaqueComponent(component: string): boolean {
  return isOpaqueToken(component) || (component.length >= MIN_RANDOM_COMPONENT && looksRandom(component));
}
