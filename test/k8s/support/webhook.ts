/**
 * A real mutating admission webhook for the Kubernetes tests: an HTTPS server (node:https) on the
 * test cluster's bridge address, where the API server reaches it, with a certificate signed by a CA
 * made for this run (openssl), serving `/mutate` AdmissionReview v1 responses whose JSONPatch a
 * test chooses per object (keyed by a label, so concurrent cases do not interfere), and its
 * registration: a MutatingWebhookConfiguration by URL, created as the admin and scoped to one
 * namespace and to Berth-labelled Pods and PVCs on CREATE, deleted by `close()`.
 * @module
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdmissionregistrationV1Api, CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { clusterEnv } from './env.js';
import { uniqueName } from './namespace.js';

/** One RFC 6902 operation. */
export interface PatchOp {
  op: 'add' | 'replace' | 'remove' | 'test';
  path: string;
  value?: unknown;
}

/** What the webhook saw: the object under admission (a Pod or a PVC, as JSON). */
export interface AdmissionObject {
  kind: string;
  metadata?: { name?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: Record<string, unknown>;
}

/** Chooses the patch for one admitted object; an empty list admits it unchanged. */
export type Mutator = (obj: AdmissionObject) => PatchOp[];

export interface MutatingWebhook {
  /** The label whose value picks the mutator (e.g. `berth.dev/profile`). */
  readonly keyLabel: string;
  /** Registers the mutator for objects whose key label has `value`. */
  on(value: string, mutate: Mutator): void;
  /** How many objects of each kind the webhook patched for `value`. */
  patched(value: string): { Pod: number; PersistentVolumeClaim: number };
  /** Deletes the MutatingWebhookConfiguration, stops the server and removes the PKI. */
  close(): Promise<void>;
}

export interface MutatingWebhookOptions {
  admin: KubeConfig;
  /** The only namespace the registration matches. */
  namespace: string;
  keyLabel: string;
}

/** Escapes one JSON Pointer segment (RFC 6901). */
export function pointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** A CA and a server certificate for `ip`, made with openssl in a fresh directory. */
function makePki(ip: string): { dir: string; ca: string; cert: string; key: string } {
  const dir = mkdtempSync(join(tmpdir(), 'berth-webhook-pki-'));
  const run = (...args: string[]): void => void execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  run('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '1', '-subj', '/CN=berth-test-webhook-ca');
  run('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', `/CN=${ip}`);
  writeFileSync(join(dir, 'ext.cnf'), `subjectAltName=IP:${ip}\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n`);
  run('x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.crt', '-days', '1', '-extfile', 'ext.cnf');
  const read = (f: string): string => readFileSync(join(dir, f), 'utf8');
  return { dir, ca: read('ca.crt'), cert: read('server.crt'), key: read('server.key') };
}

interface AdmissionReview {
  request?: { uid?: string; object?: AdmissionObject };
}

function listen(server: Server, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve((server.address() as AddressInfo).port));
  });
}

/** The label every probe object carries, and the value the webhook answers with. */
const PROBE_KEY = 'berth-test-webhook-probe';

/**
 * Starts the server and registers it; resolves once the API server really calls it (a webhook
 * configuration takes effect asynchronously: a dry-run PVC create is retried until it comes back
 * patched).
 */
export async function startMutatingWebhook(opts: MutatingWebhookOptions): Promise<MutatingWebhook> {
  const host = new URL(clusterEnv().gitBase).hostname;
  const pki = makePki(host);
  const mutators = new Map<string, Mutator>();
  const counts = new Map<string, { Pod: number; PersistentVolumeClaim: number }>();
  mutators.set(PROBE_KEY, () => [{ op: 'add', path: `/metadata/labels/${pointer('berth-test/probed')}`, value: 'yes' }]);

  const server = createServer({ cert: pki.cert, key: pki.key }, (req, res) => {
    // No connection reuse: Node closes an idle keep-alive connection after 5 s, and the API server
    // (Go, which ignores the Keep-Alive hint) can send its next review on that socket as it closes
    // ("read: connection reset by peer", which failed a launch in CI). Each call gets its own.
    res.setHeader('connection', 'close');
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let review: AdmissionReview;
      try {
        review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as AdmissionReview;
      } catch {
        res.writeHead(400).end('not JSON');
        return;
      }
      const obj = review.request?.object;
      const key = obj?.metadata?.labels?.[opts.keyLabel];
      const mutate = key === undefined ? undefined : mutators.get(key);
      let patch: PatchOp[] = [];
      let failure: string | undefined;
      try {
        patch = mutate && obj ? mutate(obj) : [];
      } catch (err) {
        failure = `test webhook mutator for ${key ?? '?'} failed: ${String(err)}`;
      }
      if (key !== undefined && patch.length > 0 && (obj?.kind === 'Pod' || obj?.kind === 'PersistentVolumeClaim')) {
        const c = counts.get(key) ?? { Pod: 0, PersistentVolumeClaim: 0 };
        c[obj.kind]++;
        counts.set(key, c);
      }
      const response: Record<string, unknown> = { uid: review.request?.uid ?? '', allowed: failure === undefined };
      if (failure !== undefined) response.status = { code: 500, message: failure };
      else if (patch.length > 0) {
        response.patchType = 'JSONPatch';
        response.patch = Buffer.from(JSON.stringify(patch)).toString('base64');
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response }));
    });
  });
  const port = await listen(server, host);
  const api = opts.admin.makeApiClient(AdmissionregistrationV1Api);
  const name = uniqueName('berth-test-webhook');
  const stopServer = (): Promise<void> => new Promise((resolve) => server.close(() => resolve()));
  try {
    await api.createMutatingWebhookConfiguration({
      body: {
        metadata: { name },
        webhooks: [
          {
            name: 'mutate.berth-test.dev',
            clientConfig: { url: `https://${host}:${port}/mutate`, caBundle: Buffer.from(pki.ca).toString('base64') },
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': opts.namespace } },
            objectSelector: { matchExpressions: [{ key: opts.keyLabel, operator: 'Exists' }] },
            rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods', 'persistentvolumeclaims'], scope: 'Namespaced' }],
            failurePolicy: 'Fail',
            sideEffects: 'None',
            admissionReviewVersions: ['v1'],
            timeoutSeconds: 10,
          },
        ],
      },
    });
  } catch (err) {
    await stopServer();
    rmSync(pki.dir, { recursive: true, force: true });
    throw err;
  }
  const close = async (): Promise<void> => {
    try {
      await api.deleteMutatingWebhookConfiguration({ name });
    } finally {
      server.closeAllConnections();
      await stopServer();
      rmSync(pki.dir, { recursive: true, force: true });
    }
  };
  try {
    await waitUntilCalled(opts.admin, opts.namespace, opts.keyLabel);
  } catch (err) {
    await close().catch(() => undefined);
    throw err;
  }
  return {
    keyLabel: opts.keyLabel,
    on: (value, mutate) => void mutators.set(value, mutate),
    patched: (value) => ({ ...(counts.get(value) ?? { Pod: 0, PersistentVolumeClaim: 0 }) }),
    close,
  };
}

/** Dry-run PVC creates until the webhook's probe label comes back (at most ~30 s). */
async function waitUntilCalled(admin: KubeConfig, namespace: string, keyLabel: string): Promise<void> {
  const core = admin.makeApiClient(CoreV1Api);
  let last = 'not called yet';
  for (let i = 0; i < 120; i++) {
    try {
      const pvc = await core.createNamespacedPersistentVolumeClaim({
        namespace,
        dryRun: 'All',
        body: {
          metadata: { name: 'webhook-probe', labels: { [keyLabel]: PROBE_KEY } },
          spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Mi' } } },
        },
      });
      if (pvc.metadata?.labels?.['berth-test/probed'] === 'yes') return;
    } catch (err) {
      last = String(err);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`the API server never called the test webhook (last: ${last})`);
}
