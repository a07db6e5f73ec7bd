// Shared helpers for tests that run against the real test cluster (test/cluster).
export { clusterEnv, requireEnv } from './env.js';
export type { ClusterEnv } from './env.js';
export { apiFailure, assertClusterReachable, describeError, expectApiFailure, isNotFound, loadKubeConfig } from './kube.js';
export type { ApiFailure } from './kube.js';
export { createTestNamespace, TEST_NAMESPACE_LABEL, uniqueName } from './namespace.js';
export type { PodSecurityLevel, TestNamespace, TestNamespaceOptions } from './namespace.js';
export { restrictedContainerSecurityContext, restrictedPod, restrictedPodSecurityContext } from './pods.js';
export type { TestPodSpec } from './pods.js';
export { allContainersRunning, podCondition, podSummary, sleep, waitFor, waitForPod, waitForPodGone, waitForPodRunning } from './wait.js';
export type { WaitOptions } from './wait.js';
export { execInPod, exitCodeOf } from './exec.js';
export type { ExecOptions, ExecResult } from './exec.js';
export { forwardPort } from './portforward.js';
export type { ForwardedPort } from './portforward.js';
export { createTestRepo } from './git.js';
export type { TestRepo } from './git.js';
