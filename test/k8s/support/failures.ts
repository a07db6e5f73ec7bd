/**
 * Helpers of the Kubernetes executor's failure tests: launching a session that must fail (and
 * settle), recording the live session events a user would see under `berth launch`, and the
 * Pods/PVCs one session left behind (by its session label, so cases can share a namespace and run
 * concurrently).
 * @module
 */
import type { Controller } from '../../../src/controller/index.js';
import type { SessionEvent, SessionView, StageRecord } from '../../../src/controller/service.js';
import type { BerthOnCluster } from './berth.js';

type LaunchRequest = Parameters<Controller['launch']>[0];

/** Every stage event of every session since `record` was called, with waiters. */
export interface EventRecorder {
  /** Stage records of one session, in order. */
  stages(sessionId: string): StageRecord[];
  /** Resolves with the first stage record of `sessionId` matching `pred` (already seen or to come). */
  waitForStage(sessionId: string, pred: (s: StageRecord) => boolean, timeoutMs?: number): Promise<StageRecord>;
  stop(): void;
}

export function recordEvents(c: Controller): EventRecorder {
  const seen: { sessionId: string; stage: StageRecord }[] = [];
  const waiters = new Set<(e: { sessionId: string; stage: StageRecord }) => void>();
  const unsubscribe = c.subscribe((e: SessionEvent) => {
    if (e.type !== 'stage') return;
    const entry = { sessionId: e.sessionId, stage: e.stage };
    seen.push(entry);
    for (const w of [...waiters]) w(entry);
  });
  return {
    stages: (id) => seen.filter((e) => e.sessionId === id).map((e) => e.stage),
    waitForStage(id, pred, timeoutMs = 60_000) {
      const found = seen.find((e) => e.sessionId === id && pred(e.stage));
      if (found) return Promise.resolve(found.stage);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no stage event of ${id} matched within ${timeoutMs} ms; seen: ${JSON.stringify(seen.filter((e) => e.sessionId === id).map((e) => e.stage))}`));
        }, timeoutMs);
        const check = (e: { sessionId: string; stage: StageRecord }): void => {
          if (e.sessionId !== id || !pred(e.stage)) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(e.stage);
        };
        waiters.add(check);
      });
    },
    stop: unsubscribe,
  };
}

/** Launches and waits until settled; throws unless the session ended `failed`. */
export async function launchFailing(c: Controller, req: LaunchRequest): Promise<SessionView> {
  const s = await c.launch(req);
  const v = await c.waitUntilSettled(s.id);
  if (v.state !== 'failed') throw new Error(`session ${s.id} is ${v.state}, expected failed; stages: ${JSON.stringify(v.stages)}`);
  return v;
}

/** The stage record named `name` of a settled session. */
export function stageOf(v: SessionView, name: string): StageRecord {
  const s = v.stages.find((x) => x.name === name);
  if (!s) throw new Error(`session ${v.id} has no stage ${name}: ${JSON.stringify(v.stages)}`);
  return s;
}

/** The Pods and PVCs carrying this session's label. */
export async function sessionLeftovers(h: BerthOnCluster, sessionId: string): Promise<string[]> {
  const labelSelector = `berth.dev/session-id=${sessionId}`;
  const pods = await h.core.listNamespacedPod({ namespace: h.ns.name, labelSelector });
  const pvcs = await h.core.listNamespacedPersistentVolumeClaim({ namespace: h.ns.name, labelSelector });
  return [...pods.items.map((p) => `pod/${p.metadata?.name ?? ''}`), ...pvcs.items.map((p) => `pvc/${p.metadata?.name ?? ''}`)];
}

/**
 * Resolves when `sessionId` reports the diagnostic `reason` (subscribe before the action that
 * causes it); rejects after `timeoutMs` naming `what` and every diagnostic seen meanwhile.
 */
export function waitForDiagnostic(c: Controller, sessionId: string, reason: string, what: string, timeoutMs = 120_000): Promise<void> {
  const seen: string[] = [];
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`no ${reason} within ${timeoutMs / 1000} s ${what}; diagnostics so far: ${seen.join(', ') || '(none)'}`));
    }, timeoutMs);
    const off = c.subscribe(
      (e) => {
        if (e.type !== 'diagnostic') return;
        seen.push(e.reason);
        if (e.reason !== reason) return;
        clearTimeout(timer);
        off();
        resolve();
      },
      { sessionId },
    );
  });
}
