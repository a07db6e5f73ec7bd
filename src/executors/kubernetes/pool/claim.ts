/**
 * A launch served from the warm pool. The member is taken in the store first (atomically: two
 * launches never get the same one), then checked, relabelled to the session and recorded as its
 * own (take.ts); meanwhile the member's nonce is traded for a token over the forward. The session's
 * identity then arrives: the instance created with the session's env and approved secrets, while
 * the repository (a clone, or a local path's bundle) is
 * prepared in the Pod by an exec of its own. A member that fails before the session's first
 * checkpoint is deleted and the next one tried; one that fails after it is deleted as the
 * session's; either way the launch goes on cold, saying why (`pool`.`miss`).
 * @module
 */
import { errorMessage } from '../../../shared/errors.js';
import type { ExecutorInstance } from '../../executor.js';
import { LaunchError } from '../../launch-kit/index.js';
import { POD_AGENTCTL } from '../artifacts.js';
import { deleteEach } from '../cleanup.js';
import { claimPreparePlans, bootstrapUpload, prepareScript, refreshScript, shQuote } from '../compose/index.js';
import { CHECKPOINT, META, PATH, STAGE } from '../constants.js';
import { localRepositoryBundle, POD_LIMIT_GRACE_SECONDS, repositorySource, runBootstrap } from '../launch/bootstrap.js';
import { connectFresh, earlyControl, type Connected, type EarlyControl } from '../launch/connect.js';
import type { KubeLaunchState } from '../launch/context.js';
import { buildInstance, instanceEnv } from '../launch/instance.js';
import { memberHash, type PoolContext } from './context.js';
import { MEMBER_NONCE, memberTargets, retireMember, rowTargets } from './retire.js';
import { takeMember, type Member } from './take.js';

/** The stage of a warm launch that takes and hands over the member. */
const POOL_CLAIM_STAGE = 'pool_claim';
/** How long a claimed member's agentctl may take to answer (it answered when the member was made). */
const CLAIM_CONNECT_TIMEOUT_MS = 10_000;
/** Members tried per launch before it goes cold. */
const MAX_TRIES = 3;

/** The diagnostics a launch of a pooled profile reports: which way it went, and why when cold. */
const POOL_DIAGNOSTIC = { warm: 'WarmLaunch', cold: 'ColdLaunch' } as const;
/**
 * The instant stage that records it on the session (`berth status`, the dashboard): `pool`, reason
 * `Warm` or `Cold`, the message saying why.
 */
const POOL_STAGE = 'pool';

/**
 * Says which way a launch of a pooled profile went, and why: the `pool` stage (kept with the
 * session's stages: `Warm` / `Cold` and `why`) and a diagnostic `<kind> launch: <why>` (printed by
 * `berth launch`, counted in the metrics). Never throws.
 */
export function reportPoolOutcome(l: KubeLaunchState, kind: 'warm' | 'cold', why: string): void {
  l.report({ stage: POOL_STAGE, status: 'running' });
  l.report({ stage: POOL_STAGE, status: 'succeeded', reason: kind === 'warm' ? 'Warm' : 'Cold', message: why });
  try {
    l.req.onDiagnostic?.(POOL_DIAGNOSTIC[kind], `${kind} launch: ${why}`);
  } catch {
    // see CreateInstanceRequest.onDiagnostic
  }
}

/** A launch the pool could not serve: why, for the user (the launch then goes cold). */
interface PoolMiss {
  miss: string;
}

/** The connected instance of a claimed member, or why the launch must go cold. */
export async function claimLaunch(p: PoolContext, l: KubeLaunchState): Promise<ExecutorInstance | PoolMiss> {
  let why = 'the pool has no ready member';
  for (let i = 0; i < MAX_TRIES; i++) {
    const row = await p.store.claimPoolMember({ executor: p.env.executorName, profile: p.profileName, profileHash: memberHash(p, l.meta.profileHash), sessionId: l.identity.sessionId });
    if (row === null) return { miss: i === 0 ? await emptyReason(p, l) : why };
    const nonceRef = row.secretRefs[MEMBER_NONCE];
    const nonce = nonceRef === undefined ? Promise.reject(new Error('its row records no nonce')) : p.store.revealSecret(nonceRef);
    nonce.catch(() => undefined); // awaited by takeMember; a rejection here is its error
    // While the member is checked and relabelled, the forward to its agentctl comes up and the
    // member's nonce is traded for a token that only this launch knows; nothing of the session
    // reaches the member before the claim is recorded (the instance is created after it).
    const early = earlyControl(connectTarget(l, row.metadata[META.podName] ?? ''), nonce);
    let member: Member;
    try {
      member = await l.stage(POOL_CLAIM_STAGE, () => takeMember(p, l, row.id, row.metadata, nonce));
    } catch (err) {
      void early.then((e) => e?.forward.close());
      why = `pool member ${row.id} failed its check (${errorMessage(err)})`;
      p.env.log.warn({ member: row.id, session: l.identity.sessionId, err: errorMessage(err) }, 'pool member not handed out');
      await retireMember(p, row.id, rowTargets(row.metadata));
      continue;
    }
    const served = await serve(p, l, member, await early);
    if (!('miss' in served)) return served;
    why = served.miss;
  }
  return { miss: why };
}

/** Why no member was ready: none made yet, or none of this profile version. */
async function emptyReason(p: PoolContext, l: KubeLaunchState): Promise<string> {
  const rows = await p.store.listPoolMembers({ executor: p.env.executorName, profile: p.profileName });
  if (rows.some((r) => r.state === 'ready' && r.profileHash !== memberHash(p, l.meta.profileHash))) return 'the pool holds members of an earlier version of the profile (or of Berth) only: they are being replaced';
  if (rows.some((r) => r.state === 'creating')) return 'the pool is empty (members are being made)';
  return 'the pool is empty';
}

/**
 * The session's identity into a member it owns now: the handshake and instance, and the repository
 * meanwhile. A failure deletes the member's objects (the session's own by now) and the launch goes
 * cold; should that delete fail, the launch fails instead (its rollback deletes them by UID).
 */
async function serve(p: PoolContext, l: KubeLaunchState, m: Member, early: EarlyControl | null): Promise<ExecutorInstance | PoolMiss> {
  let connected: Connected | null = null;
  try {
    const connecting = l.stage(STAGE.agentctlConnect, async () => {
      connected = await connectFresh(connectTarget(l, m.podName), m.nonce, { timeoutMs: CLAIM_CONNECT_TIMEOUT_MS, early });
      l.meta = { ...l.meta, remotePort: connected.instancePort };
      await l.checkpoint(CHECKPOINT.agentctlConnected);
      return connected;
    });
    const preparing = prepareRepository(p, l, m.podName);
    const [c] = await Promise.all([connecting, preparing]);
    return buildInstance(l, c, { authToken: c.token, bootstrapNonce: m.nonce }, true, [POD_AGENTCTL.launcher]);
  } catch (err) {
    await Promise.allSettled((connected as Connected | null)?.forwards.map((f) => f.close()) ?? []);
    if (err instanceof LaunchError && err.reason === 'PrepareFailed') throw err; // the repository's fault: cold would fail the same way
    const errors = await deleteEach(l.kube.objects, memberTargets(l.meta), AbortSignal.timeout(90_000));
    if (errors.length > 0) throw err;
    l.createdPod = null;
    l.createdPvc = null;
    return { miss: `the claimed member ${m.id} did not answer (${errorMessage(err)})` };
  }
}

function connectTarget(l: KubeLaunchState, pod: string): Parameters<typeof connectFresh>[0] {
  return {
    forward: l.kube.forward,
    fetch: l.env.fetch,
    namespace: l.namespace,
    pod,
    instanceId: l.identity.instanceId,
    instanceEnv: instanceEnv(l.req),
    labels: { session_id: l.identity.sessionId, executor: l.identity.executor, profile: l.identity.profile },
    ...(l.signal ? { signal: l.signal } : {}),
  };
}

/** Stage `bootstrap` of a warm launch: the clone (or bundle, or a repository pool's fetch) and the setup script, when there is either. */
async function prepareRepository(p: PoolContext, l: KubeLaunchState, pod: string): Promise<void> {
  const { req } = l;
  if (req.repository.url === undefined && req.repository.path === undefined && l.profile.setupScript === '') return;
  await l.stage(STAGE.bootstrap, async () => {
    const script = await claimScript(p, l);
    const plans = claimPreparePlans({
      prepareScript: script.text,
      ...(req.repositoryCredentials ? { repositoryCredentials: req.repositoryCredentials } : {}),
      ...(script.bundle ? { repoBundle: script.bundle } : {}),
    });
    // the in-Pod limits of a cold launch's prepare.sh, as one deadline for the whole exec
    const budget = AbortSignal.timeout((l.profile.budgets.cloneSeconds + l.profile.budgets.setupScriptSeconds + POD_LIMIT_GRACE_SECONDS) * 1000);
    await runBootstrap(
      l,
      pod,
      plans.map((plan) => {
        const cmd = bootstrapUpload(plan);
        return { command: ['sh', '-c', cmd.script], stdin: cmd.stdin, signal: budget };
      }),
    );
  });
}

/** The claim's prepare script: a repository pool's fetch, a clone (or bundle), or the setup script alone. */
async function claimScript(p: PoolContext, l: KubeLaunchState): Promise<{ text: string; bundle?: Buffer }> {
  const { req } = l;
  const setupScript = l.profile.setupScript;
  if (p.repository !== null) {
    return { text: refreshScript({ branch: req.repository.branch ?? null, credentialsUrl: req.repositoryCredentials && req.repository.url ? req.repository.url : null, setupScript }) };
  }
  const source = repositorySource(req.repository, true, req.repositoryCredentials !== undefined);
  // no repository: the member's workspace was initialised when it was made; only the setup script is left
  if (source.kind === 'none') return { text: ['set -eu', `cd ${shQuote(PATH.workspace)}`, `sh -e -c ${shQuote(setupScript)}`, ''].join('\n') };
  const bundle = source.kind === 'bundle' && req.repository.path !== undefined ? await localRepositoryBundle(req.repository.path, l.signal) : undefined;
  const limits = { cloneSeconds: l.profile.budgets.cloneSeconds + POD_LIMIT_GRACE_SECONDS, setupScriptSeconds: l.profile.budgets.setupScriptSeconds + POD_LIMIT_GRACE_SECONDS };
  return { text: prepareScript({ source, setupScript, limits }), ...(bundle ? { bundle } : {}) };
}
