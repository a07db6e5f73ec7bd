/**
 * Which host paths a sandboxed agent must not see, and which look like credentials (what `berth
 * doctor` probes for). Pure: callers pass the environment, homes and config-derived paths in.
 * @module
 */
import { isAbsolute, join, relative, sep } from 'node:path';

/** Directories hidden from every sandboxed agent besides the user's homes and the data dir. */
const SYSTEM_HIDDEN = ['/root', '/var/run/secrets', '/run/secrets'] as const;

/**
 * Places (relative to a home) that hold credentials by convention. The list `berth doctor` probes:
 * none of them may be readable inside a sandbox unless the user exposed it.
 */
export const CREDENTIAL_PATHS = [
  '.ssh',
  '.kube',
  '.aws',
  '.azure',
  '.config/gcloud',
  '.config/gh',
  '.config/hub',
  '.config/glab-cli',
  '.config/berth',
  '.local/share/berth',
  '.netrc',
  '.docker/config.json',
  '.git-credentials',
  '.config/git/credentials',
  '.npmrc',
  '.yarnrc.yml',
  '.pypirc',
  '.config/pip/pip.conf',
  '.gem/credentials',
  '.cargo/credentials',
  '.cargo/credentials.toml',
  '.m2/settings.xml',
  '.gradle/gradle.properties',
  '.gnupg',
  '.password-store',
  '.vault-token',
  '.terraform.d/credentials.tfrc.json',
  '.pgpass',
  '.my.cnf',
  '.s3cfg',
  '.boto',
  '.config/rclone',
  '.claude',
  '.claude.json',
  '.config/op',
  '.local/share/keyrings',
] as const;

/** The entries of a `KUBECONFIG`-style list (`:`-separated), absolute ones only. */
function kubeconfigEntries(value: string | undefined): string[] {
  return (value ?? '').split(':').filter((p) => p !== '' && isAbsolute(p));
}

interface HostSecretInput {
  /** The controller's environment (`HOME`, `KUBECONFIG`, `XDG_CONFIG_HOME`). */
  env: Readonly<Record<string, string | undefined>>;
  /** The user's home directories ($HOME and the account's home when they differ). */
  homes: readonly string[];
  /** `kubeconfig_path` of every kubernetes executor (null: the default, $KUBECONFIG or ~/.kube/config). */
  kubeconfigPaths: readonly (string | null)[];
  /** The config file in use (berth.yaml), or null for the built-in defaults. */
  configFile: string | null;
}

/**
 * Paths outside the user's homes that Berth knows hold its own or the clusters' credentials: the
 * kubeconfigs (configured, `$KUBECONFIG`, `~/.kube`), Berth's config dir and the config file. (The
 * homes, /root, /run/secrets and the data dir are added by the executor itself.)
 */
export function hostSecretPaths(input: HostSecretInput): string[] {
  const out: string[] = [];
  for (const home of input.homes) out.push(join(home, '.kube'), join(home, '.config', 'berth'));
  for (const p of input.kubeconfigPaths) if (p !== null) out.push(p);
  out.push(...kubeconfigEntries(input.env.KUBECONFIG));
  const xdg = input.env.XDG_CONFIG_HOME;
  if (xdg !== undefined && isAbsolute(xdg)) out.push(join(xdg, 'berth'));
  if (input.configFile !== null) out.push(input.configFile);
  return unique(out);
}

/** Everything a sandbox of this executor hides (before existence checks): homes, system dirs, data dir, extras. */
export function hiddenPaths(opts: { homes: readonly string[]; dataDir: string; extra: readonly string[] }): string[] {
  return unique([...opts.homes, ...SYSTEM_HIDDEN, opts.dataDir, ...opts.extra]).filter((p) => p !== '/' && isAbsolute(p));
}

/**
 * Where an exposed path of the user's home also appears in the private home (`~/.gitconfig` →
 * `<private home>/.gitconfig`, so tools find it through `$HOME`), or null for a path outside the homes.
 */
export function mirrorInPrivateHome(path: string, homes: readonly string[], privateHome: string): string | null {
  for (const home of homes) {
    const rel = relative(home, path);
    if (rel !== '' && !rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel)) return join(privateHome, rel);
  }
  return null;
}

/** The paths `berth doctor` checks inside the sandbox: every credential place under each home, and the known secret paths. */
export function credentialCandidates(opts: { homes: readonly string[]; hidden: readonly string[] }): string[] {
  const out: string[] = [];
  for (const home of opts.homes) for (const rel of CREDENTIAL_PATHS) out.push(join(home, rel));
  out.push(...opts.hidden.filter((p) => !opts.homes.includes(p)));
  return unique(out);
}

function unique(paths: readonly string[]): string[] {
  return [...new Set(paths)];
}
