/**
 * What the bootstrap delivers into a Pod besides scripts: the agentctl build for the image (the
 * single-file bundle where the image has Node >= 18, else the SEA binary with the C libraries it
 * links against, so it runs even in an image without glibc) and the launcher that runs it. Read
 * from disk once per file version and kept in memory.
 *
 * Where the image's Node is the very version the build's V8 code cache was made with (and the
 * image's CPU is this machine's), the bundle goes with its start-up loader and that cache, as on
 * the local executor: agentctl then skips compiling its 1.1 MB bundle at every start. Any other
 * Node gets the plain bundle (V8 would reject the cache). The loader checks the cache's header
 * (the bundle's SHA-256 and the Node version) and falls back to compiling when it does not match.
 * @module
 */
import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { codeCachePath, LOADER_FILE } from '../../agentctl/code-cache.js';
import type { PrestartPlan } from './compose/index.js';
import type { AgentctlFlavor } from './metadata.js';
import { PATH } from './constants.js';

export interface AgentctlArtifactPaths {
  /** `dist/agentctl.cjs`. */
  bundle: string;
  /** `dist/agentctl-sea` (`npm run build:sea`). */
  sea: string;
}

interface DeliveredFile {
  /** Absolute path in the Pod. */
  path: string;
  mode: number;
  data: Buffer;
}

export interface AgentctlDelivery {
  flavor: AgentctlFlavor;
  /** Files written before the main one (the launcher; for the SEA the libraries). */
  files: DeliveredFile[];
  /** The agentctl build itself. */
  tail: DeliveredFile;
  /** argv that runs agentctl in the Pod (`{{agentctl}}` of an agent command). */
  command: string[];
  /** Bytes of all files (before the upload's compression). */
  bytes: number;
  /** The bundle starts from the build's V8 code cache (loader and cache delivered with it). */
  codeCache: boolean;
}

/** Where agentctl lives in the Pod per flavor. */
export const POD_AGENTCTL = {
  launcher: `${PATH.runtimeDir}/bin/agentctl`,
  /** The Node pre-start's plan, beside the launcher (compose/paths.ts `agentctlPrestart`). */
  prestart: `${PATH.runtimeDir}/bin/agentctl.json`,
  bundle: `${PATH.runtimeDir}/agentctl.cjs`,
  loader: `${PATH.runtimeDir}/${LOADER_FILE}`,
  codeCache: codeCachePath(`${PATH.runtimeDir}/agentctl.cjs`),
  sea: `${PATH.runtimeDir}/agentctl-sea`,
  libDir: `${PATH.runtimeDir}/lib`,
} as const;

/** Thrown when the build for a flavor or platform is not available on this controller. */
class ArtifactMissingError extends Error {
  override readonly name = 'ArtifactMissingError';
}

interface Loaded {
  /** The main file's mtime, and the code cache's (or -1) for a bundle. */
  version: string;
  delivery: AgentctlDelivery;
}

/** What the image's probe found that decides between the plain bundle and the one with its code cache. */
interface ImageRuntime {
  /** `v20.20.2`, or null. */
  nodeVersion: string | null;
  /** `uname -m` in the container, or null. */
  arch: string | null;
}

/** Loads (once per file version) and describes the agentctl delivery for a flavor and platform. */
export class AgentctlArtifacts {
  readonly #paths: AgentctlArtifactPaths;
  readonly #cache = new Map<string, Loaded>();

  constructor(paths: AgentctlArtifactPaths) {
    this.#paths = paths;
  }

  /**
   * Which agentctl build this is (size and mtime of the bundle and the SEA binary): a warm pool
   * replaces members made with another (an upgraded controller never hands out an old agentctl).
   */
  build(): string {
    const of = (file: string): string => {
      try {
        const st = statSync(file);
        return `${st.size}@${st.mtimeMs}`;
      } catch {
        return '-';
      }
    };
    return `${of(this.#paths.bundle)}/${of(this.#paths.sea)}`;
  }

  delivery(flavor: AgentctlFlavor, platform: string, runtime: ImageRuntime = { nodeVersion: null, arch: null }): AgentctlDelivery {
    const file = flavor === 'bundle' ? this.#paths.bundle : this.#paths.sea;
    if (!existsSync(file)) {
      throw new ArtifactMissingError(
        flavor === 'bundle'
          ? `agentctl bundle ${file} is missing (run npm run build)`
          : `the image has no Node >= 18, so agentctl's SEA binary is needed, but ${file} is missing (run npm run build:sea, or use an image with Node >= 18)`,
      );
    }
    if (flavor === 'sea' && platform !== hostPlatform()) {
      throw new ArtifactMissingError(`the image has no Node >= 18 and agentctl's SEA binary is built for ${hostPlatform()}, not ${platform} (use an image with Node >= 18)`);
    }
    const withCache = flavor === 'bundle' && this.#codeCacheFits(file, runtime);
    const key = `${flavor}${withCache ? '+cache' : ''}`;
    const version = `${statSync(file).mtimeMs}/${withCache ? statSync(codeCachePath(file)).mtimeMs : -1}`;
    const cached = this.#cache.get(key);
    if (cached && cached.version === version) return cached.delivery;
    const delivery = flavor === 'sea' ? seaDelivery(file) : withCache ? cachedBundleDelivery(file) : bundleDelivery(file);
    this.#cache.set(key, { version, delivery });
    return delivery;
  }

  /** The build's loader and code cache are beside the bundle, and the cache was made by the image's Node on its CPU. */
  #codeCacheFits(bundle: string, runtime: ImageRuntime): boolean {
    if (runtime.nodeVersion === null || runtime.arch !== hostArch()) return false;
    if (!existsSync(join(dirname(bundle), LOADER_FILE))) return false;
    return codeCacheNodeVersion(codeCachePath(bundle)) === runtime.nodeVersion;
  }
}

/** `uname -m` of this machine's CPU, as the probe reports it in a container. */
function hostArch(): string {
  return process.arch === 'x64' ? 'x86_64' : process.arch === 'arm64' ? 'aarch64' : process.arch;
}

/** The Node version named in a code cache's header line (`berth-v8cache 1 <sha256> <version>`), or null. */
export function codeCacheNodeVersion(path: string): string | null {
  // only the header line: this runs at every launch, the cache is ~0.5 MB
  const buf = Buffer.alloc(200);
  let head: string;
  try {
    const fd = openSync(path, 'r');
    try {
      head = buf.subarray(0, readSync(fd, buf, 0, buf.length, 0)).toString('latin1');
    } finally {
      closeSync(fd);
    }
  } catch {
    return null;
  }
  const m = /^berth-v8cache 1 [0-9a-f]{64} (v\d+\.\d+\.\d+)\n/.exec(head);
  return m?.[1] ?? null;
}

function hostPlatform(): string {
  return `linux/${process.arch === 'x64' ? 'amd64' : process.arch}`;
}

function launcher(body: string): DeliveredFile {
  return { path: POD_AGENTCTL.launcher, mode: 0o755, data: Buffer.from(`#!/bin/sh\n${body}\n`) };
}

/** The plan of the Node pre-start (compose/prestart.ts): what the launcher runs, to run in the pre-started Node. */
function prestartPlan(plan: PrestartPlan): DeliveredFile {
  return { path: POD_AGENTCTL.prestart, mode: 0o644, data: Buffer.from(JSON.stringify(plan)) };
}

function bundleDelivery(file: string): AgentctlDelivery {
  const tail = { path: POD_AGENTCTL.bundle, mode: 0o644, data: readFileSync(file) };
  const files = [prestartPlan({ main: POD_AGENTCTL.bundle, args: [] }), launcher(`exec node ${POD_AGENTCTL.bundle} "$@"`)];
  return { flavor: 'bundle', files, tail, command: [POD_AGENTCTL.launcher], bytes: files.reduce((n, f) => n + f.data.length, tail.data.length), codeCache: false };
}

/** The bundle run by its loader from the build's code cache (see the module comment). */
function cachedBundleDelivery(file: string): AgentctlDelivery {
  const tail = { path: POD_AGENTCTL.bundle, mode: 0o644, data: readFileSync(file) };
  const files: DeliveredFile[] = [
    { path: POD_AGENTCTL.loader, mode: 0o644, data: readFileSync(join(dirname(file), LOADER_FILE)) },
    { path: POD_AGENTCTL.codeCache, mode: 0o644, data: readFileSync(codeCachePath(file)) },
    prestartPlan({ main: POD_AGENTCTL.loader, args: [POD_AGENTCTL.bundle] }),
    launcher(`exec node ${POD_AGENTCTL.loader} ${POD_AGENTCTL.bundle} "$@"`),
  ];
  return { flavor: 'bundle', files, tail, command: [POD_AGENTCTL.launcher], bytes: files.reduce((n, f) => n + f.data.length, tail.data.length), codeCache: true };
}

/**
 * The SEA binary runs through the dynamic loader it was linked with, from libraries shipped next to
 * it: images without glibc (busybox, distroless/static) and images with an older one both work.
 */
function seaDelivery(file: string): AgentctlDelivery {
  const libs = linkedLibraries(file);
  const loader = libs.find((l) => /^ld-linux/.test(basename(l)));
  if (loader === undefined) throw new ArtifactMissingError(`cannot find the dynamic loader of ${file} (ldd did not name one)`);
  const files: DeliveredFile[] = libs.map((l) => ({ path: `${POD_AGENTCTL.libDir}/${basename(l)}`, mode: 0o755, data: readFileSync(l) }));
  const loaderInPod = `${POD_AGENTCTL.libDir}/${basename(loader)}`;
  files.push(launcher(`exec ${loaderInPod} --library-path ${POD_AGENTCTL.libDir} ${POD_AGENTCTL.sea} "$@"`));
  const tail = { path: POD_AGENTCTL.sea, mode: 0o755, data: readFileSync(file) };
  return { flavor: 'sea', files, tail, command: [POD_AGENTCTL.launcher], bytes: files.reduce((n, f) => n + f.data.length, tail.data.length), codeCache: false };
}

/** The shared libraries (and the loader) `file` links against, as resolved on this machine. */
function linkedLibraries(file: string): string[] {
  let out: string;
  try {
    out = execFileSync('ldd', [file], { encoding: 'utf8', timeout: 10_000 });
  } catch (err) {
    throw new ArtifactMissingError(`cannot list the libraries of ${file} with ldd: ${(err as Error).message}`);
  }
  const libs = new Set<string>();
  for (const line of out.split('\n')) {
    const m = /=>\s+(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s+\(/.exec(line);
    if (m?.[1] !== undefined) libs.add(m[1]);
  }
  return [...libs].filter((l) => existsSync(l) && dirname(l) !== '');
}

/** The default artifact paths of an install (`<installRoot>/dist`). */
export function defaultArtifactPaths(installRoot: string): AgentctlArtifactPaths {
  return { bundle: join(installRoot, 'dist', 'agentctl.cjs'), sea: join(installRoot, 'dist', 'agentctl-sea') };
}
