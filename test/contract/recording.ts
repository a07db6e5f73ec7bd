/**
 * What the executor contract records while it drives an executor: every stage event and every
 * checkpoint in one timeline (each checkpoint with a snapshot of what existed for the session at
 * that moment), how often the provisional row was released, and small helpers that run a process
 * through an instance client and read its output.
 * @module
 */
import type { InstanceClient } from '../../src/agentctl-client/instance.js';
import type { CreateInstanceRequest, RefreshRequest, RuntimeCheckpoint, StageEvent } from '../../src/executors/executor.js';

/** One thing an instance holds outside the test process (a directory, a process, a Pod, a PVC). */
export interface HeldResource {
  /** Human-readable, e.g. `pod/berth-abc`, `agentctl pid 4242`. */
  what: string;
  /** The value under which the runtime metadata must record it (a UID, a pid, a path). */
  recordedAs: string;
}

export interface RecordedCheckpoint extends RuntimeCheckpoint {
  /** What existed for the session when the executor asked for this checkpoint. */
  held: HeldResource[];
}

export type TimelineEntry = { kind: 'stage'; event: StageEvent } | { kind: 'checkpoint'; checkpoint: RecordedCheckpoint };

export class LaunchRecorder {
  readonly timeline: TimelineEntry[] = [];
  released = 0;

  constructor(private readonly snapshot: () => Promise<HeldResource[]>) {}

  get stages(): StageEvent[] {
    return this.timeline.flatMap((e) => (e.kind === 'stage' ? [e.event] : []));
  }

  get checkpoints(): RecordedCheckpoint[] {
    return this.timeline.flatMap((e) => (e.kind === 'checkpoint' ? [e.checkpoint] : []));
  }

  /** The callbacks of a create request, recording into this recorder. */
  callbacks(): Pick<CreateInstanceRequest, 'onStage' | 'checkpointRuntimeInventory' | 'releaseRuntimeInventory'> {
    return {
      onStage: (event) => {
        this.timeline.push({ kind: 'stage', event });
      },
      checkpointRuntimeInventory: async (cp) => {
        const held = await this.snapshot();
        this.timeline.push({ kind: 'checkpoint', checkpoint: { ...cp, held } });
      },
      releaseRuntimeInventory: async () => {
        this.released++;
      },
    };
  }

  /** The callbacks of a refresh request (no release: a refresh never owns a provisional row). */
  refreshCallbacks(): Pick<RefreshRequest, 'onStage' | 'checkpointRuntimeInventory'> {
    const { onStage, checkpointRuntimeInventory } = this.callbacks();
    return { onStage, checkpointRuntimeInventory };
  }
}

/**
 * Stage names in the order they ran, checking that each stage's events form one run — `running`
 * first, only `waiting` in between, one `succeeded` or `failed` last — and that a stage starts only
 * after the one before it ended. Returns the problems found (empty: well-formed).
 */
export function stageProblems(events: readonly StageEvent[]): string[] {
  const problems: string[] = [];
  const ended = new Map<string, StageEvent['status']>();
  let open: string | null = null;
  for (const e of events) {
    const terminal = e.status === 'succeeded' || e.status === 'failed';
    if (ended.has(e.stage)) {
      problems.push(`${e.stage}: event '${e.status}' after the stage ended ${ended.get(e.stage)}`);
    } else if (open === null) {
      if (e.status !== 'running') problems.push(`${e.stage}: first event is '${e.status}', not 'running'`);
      if (terminal) ended.set(e.stage, e.status);
      else open = e.stage;
    } else if (e.stage !== open) {
      problems.push(`${e.stage}: '${e.status}' while stage ${open} is still open`);
    } else if (e.status === 'running') {
      problems.push(`${e.stage}: 'running' twice`);
    } else if (terminal) {
      ended.set(e.stage, e.status);
      open = null;
    }
  }
  if (open !== null) problems.push(`${open}: never ended`);
  return problems;
}

/** The stages that ran, each once, in order. */
export function stageNames(events: readonly StageEvent[]): string[] {
  return [...new Set(events.map((e) => e.stage))];
}

export interface ProcessResult {
  id: string;
  exitCode: number | null;
  stdout: string;
  stderr: string;
}

/** Starts `command` in the instance and follows its output until it exits. */
export async function runProcess(client: InstanceClient, command: string[]): Promise<ProcessResult> {
  const info = await client.startProcess({ command });
  let stdout = '';
  let stderr = '';
  let exitCode: number | null = null;
  for await (const msg of client.streamOutput(info.id, { signal: AbortSignal.timeout(60_000) })) {
    if (msg.type === 'output') {
      const text = Buffer.from(msg.chunk.data, 'base64').toString('utf8');
      if (msg.chunk.stream === 'stdout') stdout += text;
      else stderr += text;
    } else if (msg.type === 'exit') {
      exitCode = msg.exit_code;
    }
  }
  return { id: info.id, exitCode, stdout, stderr };
}

/** Everything process `id` has printed (stdout and stderr), read through `client`. */
export async function outputOf(client: InstanceClient, id: string): Promise<string> {
  const all = await client.readAllOutput(id);
  return all.chunks.map((c) => Buffer.from(c.data, 'base64').toString('utf8')).join('');
}

/** For each checkpoint of the timeline, the stage that was open when it was written (null: none). */
export function checkpointStages(timeline: readonly TimelineEntry[]): { state: string; stage: string | null }[] {
  const out: { state: string; stage: string | null }[] = [];
  let open: string | null = null;
  for (const e of timeline) {
    if (e.kind === 'checkpoint') out.push({ state: e.checkpoint.state, stage: open });
    else if (e.event.status === 'running') open = e.event.stage;
    else if (e.event.status === 'succeeded' || e.event.status === 'failed') open = null;
  }
  return out;
}
