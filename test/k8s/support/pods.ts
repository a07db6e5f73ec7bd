import type { V1Container, V1Pod, V1PodSecurityContext, V1SecurityContext, V1Volume, V1VolumeMount } from '@kubernetes/client-node';

/** Pod-level security settings that satisfy Pod Security "restricted". */
export function restrictedPodSecurityContext(uid = 1000): V1PodSecurityContext {
  return {
    runAsNonRoot: true,
    runAsUser: uid,
    runAsGroup: uid,
    fsGroup: uid,
    seccompProfile: { type: 'RuntimeDefault' },
  };
}

/** Container-level security settings that satisfy Pod Security "restricted". */
export function restrictedContainerSecurityContext(): V1SecurityContext {
  return {
    allowPrivilegeEscalation: false,
    capabilities: { drop: ['ALL'] },
    runAsNonRoot: true,
  };
}

export interface TestPodSpec {
  name: string;
  image: string;
  command: string[];
  containerName?: string;
  labels?: Record<string, string>;
  env?: Record<string, string>;
  volumes?: V1Volume[];
  volumeMounts?: V1VolumeMount[];
  ports?: number[];
  restartPolicy?: 'Always' | 'OnFailure' | 'Never';
  nodeSelector?: Record<string, string>;
  workingDir?: string;
  /** Defaults to IfNotPresent: images are imported into the node, never pulled. */
  imagePullPolicy?: 'Always' | 'IfNotPresent' | 'Never';
  /** Kept short so namespace cleanup is quick. Default 1 s. */
  terminationGracePeriodSeconds?: number;
}

/** A single-container pod that passes Pod Security "restricted". */
export function restrictedPod(spec: TestPodSpec): V1Pod {
  const container: V1Container = {
    name: spec.containerName ?? 'main',
    image: spec.image,
    imagePullPolicy: spec.imagePullPolicy ?? 'IfNotPresent',
    command: spec.command,
    securityContext: restrictedContainerSecurityContext(),
    env: Object.entries(spec.env ?? {}).map(([name, value]) => ({ name, value })),
    volumeMounts: spec.volumeMounts,
    ports: spec.ports?.map((containerPort) => ({ containerPort, protocol: 'TCP' })),
    workingDir: spec.workingDir,
  };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: spec.name, labels: { app: spec.name, ...spec.labels } },
    spec: {
      restartPolicy: spec.restartPolicy ?? 'Always',
      terminationGracePeriodSeconds: spec.terminationGracePeriodSeconds ?? 1,
      securityContext: restrictedPodSecurityContext(),
      containers: [container],
      volumes: spec.volumes,
      nodeSelector: spec.nodeSelector,
    },
  };
}
