// The controller image (test/cluster/images/controller.sh) on the real test cluster: a Pod that uses
// the image's own command (berth serve) and user, in a namespace enforcing Pod Security
// "restricted", with a read-only root filesystem and only the data dir as a volume, runs as uid 1000,
// becomes Ready through /readyz and answers /healthz through a port-forward. The image holds the
// built product the Kubernetes executor delivers into Pods (agentctl bundle, loader, code cache, SEA)
// and production node_modules only, with better-sqlite3's native module loadable.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoreV1Api } from '@kubernetes/client-node';
import type { KubeConfig, V1Pod } from '@kubernetes/client-node';
import { createTestNamespace, execInPod, forwardPort, loadKubeConfig, podCondition, restrictedContainerSecurityContext, waitForPod } from './support/index.js';
import type { TestNamespace } from './support/index.js';
import { CONTROLLER_IMAGE_BUILD_TIMEOUT_MS, controllerImage } from './support/controller-image.js';

const POD = 'controller';
const PORT = 7420;
const DATA_DIR = '/var/lib/berth';
const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** No command, args or runAsUser: the image's entrypoint, command and numeric USER decide. */
function controllerPod(image: string): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: POD, labels: { app: POD } },
    spec: {
      terminationGracePeriodSeconds: 5,
      automountServiceAccountToken: false,
      securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [
        {
          name: 'berth',
          image,
          imagePullPolicy: 'Never',
          securityContext: { ...restrictedContainerSecurityContext(), readOnlyRootFilesystem: true },
          ports: [{ containerPort: PORT, protocol: 'TCP' }],
          readinessProbe: { httpGet: { path: '/readyz', port: PORT }, periodSeconds: 1 },
          volumeMounts: [{ name: 'data', mountPath: DATA_DIR }],
        },
      ],
      volumes: [{ name: 'data', emptyDir: {} }],
    },
  };
}

describe('the controller image', () => {
  let kc: KubeConfig;
  let ns: TestNamespace;

  beforeAll(async () => {
    const image = await controllerImage(); // builds and imports it the first time
    kc = loadKubeConfig();
    ns = await createTestNamespace(kc, 'controller-image', { podSecurity: 'restricted' });
    await kc.makeApiClient(CoreV1Api).createNamespacedPod({ namespace: ns.name, body: controllerPod(image) });
    await waitForPod(kc, ns.name, POD, (pod) => podCondition(pod, 'Ready')?.status === 'True', { description: 'Ready (/readyz answers 200)' });
  }, CONTROLLER_IMAGE_BUILD_TIMEOUT_MS);

  afterAll(async () => {
    await ns?.cleanup();
  });

  const exec = (command: string[]): ReturnType<typeof execInPod> => execInPod(kc, { namespace: ns.name, pod: POD, command, timeoutMs: 60_000 });

  it('runs berth serve as uid/gid 1000 from the image, admitted under Pod Security "restricted"', async () => {
    const result = await exec(['sh', '-c', 'id -u; id -g; tr "\\0" " " </proc/1/cmdline; echo']);
    expect(result.stderr).toBe('');
    expect(result.stdout.split('\n')).toEqual(['1000', '1000', `node /opt/berth/bin/berth.js serve --host 0.0.0.0 --data-dir ${DATA_DIR} `, '']);
  });

  it('answers /healthz through a port-forward and keeps its state in the data dir volume', async () => {
    const forward = await forwardPort(kc, ns.name, POD, PORT);
    try {
      const res = await fetch(`http://127.0.0.1:${forward.port}/healthz`);
      expect(res.status).toBe(200);
      await res.body?.cancel();
    } finally {
      await forward.close();
    }
    const state = await exec(['sh', '-c', `stat -c '%u %a' ${DATA_DIR}/state/api-token; touch /opt/berth/x 2>/dev/null || echo read-only`]);
    expect(state.stdout).toBe('1000 600\nread-only\n');
  });

  it('has berth on PATH, the agentctl builds the executor delivers and production node_modules only', async () => {
    const version = await exec(['berth', '--version']);
    expect(version.stdout.trim()).toBe(`berth ${VERSION}`);
    const files = ['agentctl.cjs', 'agentctl-loader.cjs', 'agentctl.cjs.v8cache', 'agentctl-sea', 'web/index.html', 'berth.js'];
    const listing = await exec(['sh', '-c', `cd /opt/berth/dist && ls -d ${files.join(' ')} && ./agentctl-sea --version >/dev/null && echo sea-ok`]);
    expect(listing.stdout.split('\n')).toEqual([...files.sort(), 'sea-ok', '']);
    const modules = await exec(['node', '-e', "require('/opt/berth/node_modules/better-sqlite3')(':memory:').close(); console.log(require('fs').existsSync('/opt/berth/node_modules/vitest'))"]);
    expect(modules.stdout, modules.stderr).toBe('false\n');
  });
});
