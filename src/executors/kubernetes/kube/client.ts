/**
 * Builds the Kubernetes client of one executor connection: the kubeconfig (explicit path, else
 * `$KUBECONFIG`, else `~/.kube/config`; optional context; exec credential plugins and OIDC through
 * client-node) or the in-cluster service account. Ordinary API calls carry the request timeout and
 * Berth's user agent; streams (watch, exec, port-forward) use the same KubeConfig with no timeout.
 * @module
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import {
  AuthorizationV1Api,
  CoreV1Api,
  NetworkingV1Api,
  KubeConfig,
  Observable,
  ServerConfiguration,
  VersionApi,
  createConfiguration,
} from '@kubernetes/client-node';
import type { ConfigurationOptions, ObservableMiddleware, RequestContext, ResponseContext } from '@kubernetes/client-node';
import { USER_AGENT } from '../constants.js';
import type { KubernetesConnection } from '../types.js';
import { KubeConfigError, toKubeApiError } from './errors.js';

/** Per-call options of client-node's object-style APIs (observable middleware). */
export type CallOptions = ConfigurationOptions<ObservableMiddleware>;

/** A connected-but-lazy client: nothing is sent until the first call. */
export interface KubeClient {
  /** For streams (Watch, Exec, PortForward): no request timeout applies to them. */
  readonly kubeConfig: KubeConfig;
  readonly contextName: string;
  /** The API server URL of the current context (for messages; it carries no credentials). */
  readonly server: string;
  readonly requestTimeoutMs: number;
  readonly core: CoreV1Api;
  readonly networking: NetworkingV1Api;
  readonly authorization: AuthorizationV1Api;
  readonly version: VersionApi;
  /**
   * Runs one ordinary API call bounded by the request timeout and `signal`; anything it throws
   * becomes a KubeApiError whose message starts with `action` (e.g. `get pod ns/name`).
   */
  request<T>(action: string, signal: AbortSignal | undefined, call: (options: CallOptions) => Promise<T>): Promise<T>;
}

interface CreateKubeClientOptions {
  /** Where `$KUBECONFIG` and `$HOME` are read from. @default process.env */
  env?: NodeJS.ProcessEnv;
}

const LOAD_FAILED = 'kubernetes: load client configuration failed';

/**
 * Loads the client configuration of `connection` and builds the API clients.
 * @throws KubeConfigError naming the file or context, with a hint; the loader's error is the cause.
 */
export function createKubeClient(connection: KubernetesConnection, opts: CreateKubeClientOptions = {}): KubeClient {
  const kc = loadKubeConfig(connection, opts.env ?? process.env);
  const cluster = kc.getCurrentCluster();
  const contextName = kc.getCurrentContext();
  if (!cluster) {
    throw new KubeConfigError(`${LOAD_FAILED}: context "${contextName}" names no cluster (check the contexts and clusters of the kubeconfig)`);
  }
  const requestTimeoutMs = connection.requestTimeoutSeconds * 1000;
  const build = <T>(api: new (config: ReturnType<typeof createConfiguration>) => T): T =>
    new api(
      createConfiguration({
        baseServer: new ServerConfiguration(cluster.server, {}),
        authMethods: { default: kc },
        // Static middleware: calls made without `request()` still get the timeout and user agent.
        middleware: [callMiddleware(AbortSignal.timeout.bind(AbortSignal, requestTimeoutMs), false)],
      }),
    );
  const core = build(CoreV1Api);
  const networking = build(NetworkingV1Api);
  const authorization = build(AuthorizationV1Api);
  const version = build(VersionApi);

  return {
    kubeConfig: kc,
    contextName,
    server: cluster.server,
    requestTimeoutMs,
    core,
    networking,
    authorization,
    version,
    async request<T>(action: string, signal: AbortSignal | undefined, call: (options: CallOptions) => Promise<T>): Promise<T> {
      const timeoutSignal = AbortSignal.timeout(requestTimeoutMs);
      const combined = signal ? AbortSignal.any([signal, timeoutSignal]) : timeoutSignal;
      const options: CallOptions = { middleware: [callMiddleware(() => combined, true)], middlewareMergeStrategy: 'append' };
      try {
        return await call(options);
      } catch (err) {
        throw toKubeApiError(err, action, { timeoutSignal });
      }
    },
  };
}

/** Sets the user agent and the abort signal (replacing an earlier one only when `override`). */
function callMiddleware(signal: () => AbortSignal, override: boolean): ObservableMiddleware {
  return {
    pre(context: RequestContext): Observable<RequestContext> {
      context.setHeaderParam('User-Agent', USER_AGENT);
      if (override || context.getSignal() === undefined) context.setSignal(signal());
      return new Observable(Promise.resolve(context));
    },
    post(response: ResponseContext): Observable<ResponseContext> {
      return new Observable(Promise.resolve(response));
    },
  };
}

function loadKubeConfig(connection: KubernetesConnection, env: NodeJS.ProcessEnv): KubeConfig {
  const kc = new KubeConfig();
  if (connection.authMode === 'in_cluster') {
    const tokenFile = '/var/run/secrets/kubernetes.io/serviceaccount/token';
    if (!env.KUBERNETES_SERVICE_HOST || !env.KUBERNETES_SERVICE_PORT || !existsSync(tokenFile)) {
      throw new KubeConfigError(
        `${LOAD_FAILED}: in_cluster auth needs KUBERNETES_SERVICE_HOST/PORT and ${tokenFile}; ` +
          'is berth serve running in a Pod with a service account token? (else use auth_mode: kubeconfig)',
      );
    }
    try {
      // client-node reads the token through a file auth provider, so rotated tokens are picked up.
      kc.loadFromCluster();
    } catch (err) {
      throw new KubeConfigError(`${LOAD_FAILED}: in-cluster service account: ${messageOf(err)}`, { cause: err });
    }
    return kc;
  }

  const files = kubeconfigFiles(connection.kubeconfigPath, env);
  for (const [index, file] of files.entries()) {
    if (!existsSync(file)) {
      throw new KubeConfigError(`${LOAD_FAILED}: kubeconfig ${file} does not exist (${sourceHint(connection, env)})`);
    }
    try {
      if (index === 0) {
        kc.loadFromFile(file);
      } else {
        // Later $KUBECONFIG files add clusters/users/contexts; the first file's current-context wins.
        const more = new KubeConfig();
        more.loadFromFile(file);
        kc.mergeConfig(more, true);
      }
    } catch (err) {
      throw new KubeConfigError(`${LOAD_FAILED}: kubeconfig ${file}: ${messageOf(err)}`, { cause: err });
    }
  }
  const where = files.join(delimiter);
  if (connection.kubeContext !== null) {
    if (!kc.getContextObject(connection.kubeContext)) {
      const known = kc.getContexts().map((c) => c.name);
      throw new KubeConfigError(
        `${LOAD_FAILED}: kubeconfig ${where} has no context "${connection.kubeContext}" ` +
          `(contexts: ${known.length > 0 ? known.join(', ') : 'none'}; fix kube_context)`,
      );
    }
    kc.setCurrentContext(connection.kubeContext);
  } else if (!kc.getCurrentContext() || !kc.getContextObject(kc.getCurrentContext())) {
    throw new KubeConfigError(`${LOAD_FAILED}: kubeconfig ${where} has no current-context (set kube_context or current-context)`);
  }
  if (!kc.getCurrentUser()) {
    throw new KubeConfigError(`${LOAD_FAILED}: context "${kc.getCurrentContext()}" of ${where} names no user`);
  }
  return kc;
}

function kubeconfigFiles(explicit: string | null, env: NodeJS.ProcessEnv): string[] {
  if (explicit !== null) return [explicit];
  const fromEnv = (env.KUBECONFIG ?? '').split(delimiter).filter((f) => f.trim() !== '');
  if (fromEnv.length > 0) return fromEnv;
  const home = env.HOME && env.HOME !== '' ? env.HOME : homedir();
  return [join(home, '.kube', 'config')];
}

function sourceHint(connection: KubernetesConnection, env: NodeJS.ProcessEnv): string {
  if (connection.kubeconfigPath !== null) return 'fix kubeconfig_path of the executor';
  if ((env.KUBECONFIG ?? '') !== '') return 'from $KUBECONFIG; or set kubeconfig_path of the executor';
  return 'the default; set kubeconfig_path of the executor or $KUBECONFIG';
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
