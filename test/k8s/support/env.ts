/**
 * The environment the Kubernetes tests run in, as exported by
 * `bash test/cluster/cluster.sh env` (or by whoever points the tests at a cluster).
 * Missing variables are an error, never a reason to skip: a Kubernetes test that
 * cannot reach its cluster must fail loudly.
 */

export interface ClusterEnv {
  /** Admin kubeconfig of the test cluster. */
  kubeconfig: string;
  /** Agent image: Debian bookworm + Node 20 + git + tar, default user uid 1000. */
  agentImage: string;
  /** Small image without Node (busybox). */
  busyboxImage: string;
  /** git:// base URL reachable from pods, e.g. `git://10.213.0.1:9418`; repos are `${gitBase}/${name}.git`. */
  gitBase: string;
  /** Host directory served under gitBase; tests create bare repositories here. */
  gitRoot: string;
}

const HINT =
  'Start the test cluster and export its environment (`npm run cluster:up && eval "$(bash test/cluster/cluster.sh env)"`), ' +
  'or let test/cluster/with-cluster.sh do both: `bash test/cluster/with-cluster.sh npx vitest run --project k8s`.';

export function requireEnv(name: string): string {
  const value = process.env[name];
  if (value === undefined || value.trim() === '') {
    throw new Error(`${name} is not set: the Kubernetes tests need a running test cluster. ${HINT}`);
  }
  return value;
}

let cached: ClusterEnv | undefined;

export function clusterEnv(): ClusterEnv {
  cached ??= {
    kubeconfig: requireEnv('BERTH_TEST_KUBECONFIG'),
    agentImage: requireEnv('BERTH_TEST_AGENT_IMAGE'),
    busyboxImage: requireEnv('BERTH_TEST_BUSYBOX_IMAGE'),
    gitBase: requireEnv('BERTH_TEST_GIT_BASE').replace(/\/+$/, ''),
    gitRoot: requireEnv('BERTH_TEST_GIT_ROOT'),
  };
  return cached;
}
