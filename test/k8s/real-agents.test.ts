/**
 * Real, unmodified agents in Kubernetes sessions: Claude Code (claude-agent-acp 0.101.0) and Codex
 * (codex-acp 2.6.0) from the agents image, each through its built-in preset (`claude`, `codex`:
 * the command, state directory on the managed PVC, asking mode and credential variables are the
 * preset's; berth.yaml overrides only the env that points the agent at the scripted model server,
 * which listens on the host's bridge address BERTH_TEST_HOST_IP). The fake API key is approved in
 * the executor's `secret_env` and set in the controller's environment: the preset passes it. Each agent:
 *  1. a turn edits README.md (Claude Code asks first: approved): the events show the tool call,
 *     `git diff` in the Pod the edit;
 *  2. a denied permission request (`berth approve --deny`) leaves the file it would write absent;
 *  3. after the Pod is replaced (evicted), the new agent run loads the conversation (session/load)
 *     and the next turn's model request carries the first turn's messages;
 *  4. the fake key reaches the model server and never the Pod object, the namespace's Secrets and
 *     ConfigMaps, the inventory's bytes, the controller's log lines nor the session's status view.
 * Launch → first `update` event is measured per session and printed to stderr.
 *
 * A known limitation, which is why Codex's edit here is an escalated command the person approves:
 * the codex preset's mode `workspace-write` runs commands in Codex's own Linux sandbox, bubblewrap,
 * which needs a user namespace; the Pod's RuntimeDefault seccomp profile (the only one Pod Security
 * "restricted" and "baseline" allow besides a node-installed Localhost profile) refuses
 * unshare(CLONE_NEWUSER), so a command Codex sandboxes exits 1 ("bwrap: No permissions to create a
 * new namespace"). Codex's `use_legacy_landlock` does not help (it panics: "filesystem-restricted
 * execution requires bubblewrap"). A command Codex runs outside its sandbox, after asking (as a
 * model does when its sandbox refuses), works: the Pod is the sandbox then.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/api/index.js';
import type { Controller } from '../../src/controller/index.js';
import { claudeWorkingDirectory, messagesToolResult, responsesToolResult, startModelServer, type ModelServer, type Turn } from '../support/model-server/index.js';
import { AGENTS_IMAGE_BUILD_TIMEOUT_MS, agentsImage } from './support/agents-image.js';
import { berthOnCluster, execText, imageTemplate, labelledLeftovers, type BerthOnCluster } from './support/berth.js';
import { requireEnv } from './support/env.js';
import { waitForDiagnostic } from './support/failures.js';
import { createTestRepo, type TestRepo } from './support/git.js';

const FAKE_KEY = `sk-berth-fake-k8s-${process.pid}-8e2d4c6a0f1b`;
const EDITED = 'edited by the scripted model';

type Ev = AgentEvent['event'];

interface AgentCase {
  /** The preset's name (and the agent's in berth.yaml). */
  name: 'claude' | 'codex';
  keyVar: string;
  api: 'anthropic' | 'openai';
  /** berth.yaml `agents.<name>` with the model server at `model`: env only, the command stays the preset's. */
  agent(model: ModelServer): Record<string, unknown>;
  editTurn: Turn;
  /** A tool call that needs permission and would create DENIED.md, then text. */
  askTurn: Turn;
  editedLine: string;
  /** The ACP `kind` of the edit's tool call. */
  editKind: string;
  /** Whether the edit asks first (Claude Code in the preset's "default" mode). */
  editAsks: boolean;
}

/** `name` inside the working directory Claude Code names in its system prompt. */
const inClaudeCwd = (name: string) => (cwd: string | null): string => `${cwd ?? '/working-directory-not-found-in-system-prompt'}/${name}`;

const CLAUDE: AgentCase = {
  name: 'claude',
  keyVar: 'ANTHROPIC_API_KEY',
  api: 'anthropic',
  agent: (model) => ({ env: { ANTHROPIC_BASE_URL: model.url, ANTHROPIC_MODEL: 'claude-berth-test' } }),
  editTurn: [
    { tool: 'Read', input: (r) => ({ file_path: inClaudeCwd('README.md')(claudeWorkingDirectory(r)) }) },
    { tool: 'Edit', input: (r) => ({ file_path: inClaudeCwd('README.md')(claudeWorkingDirectory(r)), old_string: '# demo', new_string: `# demo ${EDITED}` }) },
    { text: 'DONE editing' },
  ],
  askTurn: [{ tool: 'Write', input: (r) => ({ file_path: inClaudeCwd('DENIED.md')(claudeWorkingDirectory(r)), content: 'must not exist\n' }) }, { text: 'understood, not written' }],
  editedLine: `+# demo ${EDITED}`,
  editKind: 'edit',
  editAsks: true,
};

const CODEX: AgentCase = {
  name: 'codex',
  keyVar: 'OPENAI_API_KEY',
  api: 'openai',
  agent: (model) => ({
    env: {
      NO_BROWSER: '1',
      CODEX_CONFIG: JSON.stringify({
        model: 'berth-test-model',
        model_provider: 'berth-fake',
        model_providers: { 'berth-fake': { name: 'Berth fake', base_url: model.v1, env_key: 'OPENAI_API_KEY', wire_api: 'responses' } },
        approval_policy: 'on-request',
        sandbox_mode: 'workspace-write',
      }),
    },
  }),
  // outside Codex's own sandbox, which cannot run in a restricted Pod (see the module comment): it asks first
  editTurn: [
    { tool: 'exec_command', input: { cmd: `printf '${EDITED}\\n' >> README.md`, sandbox_permissions: 'require_escalated', justification: 'needs to edit README.md' } },
    { text: 'DONE editing' },
  ],
  askTurn: [
    { tool: 'exec_command', input: { cmd: "printf 'must not exist\\n' > DENIED.md", sandbox_permissions: 'require_escalated', justification: 'needs to write DENIED.md' } },
    { text: 'understood, not written' },
  ],
  editedLine: `+${EDITED}`,
  editKind: 'execute',
  editAsks: true,
};

async function until<T>(what: string, check: () => Promise<T | undefined>, ms = 120_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

/** The current agent run's events (every page). */
async function events(c: Controller, id: string): Promise<AgentEvent[]> {
  const out: AgentEvent[] = [];
  let from = 0;
  for (;;) {
    const page = await c.agentEvents(id, { from });
    out.push(...page.events);
    if (page.events.length === 0 || page.next <= from) return out;
    from = page.next;
  }
}

const turnEnded = (evs: AgentEvent[], n: number): boolean => evs.some((e) => e.event.type === 'turn_end' && e.event.turn === n);

/** Waits for the end of turn `n` of the current run; a failure names the events seen. */
async function waitTurnEnd(c: Controller, id: string, n: number): Promise<Ev[]> {
  let last: AgentEvent[] = [];
  try {
    return await until(`turn ${n} of ${id} to end`, async () => {
      last = await events(c, id);
      return turnEnded(last, n) ? last.map((e) => e.event) : undefined;
    });
  } catch (err) {
    throw new Error(`${String(err)}; events: ${JSON.stringify(last.map((e) => e.event)).slice(-3000)}`);
  }
}

const waitApprovals = (c: Controller, id: string, n: number): Promise<true> =>
  until(`${n} pending approval(s) in ${id}`, async () => ((await c.get(id)).agentProcess?.pendingApprovals === n ? true : undefined));

/** The files under `dir` whose bytes hold `secret` (names only). */
function filesHolding(dir: string, secret: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const st = statSync(path, { throwIfNoEntry: false });
    if (st?.isDirectory()) out.push(...filesHolding(path, secret));
    else if (st?.isFile() && readFileSync(path).includes(secret)) out.push(path);
  }
  return out;
}

/** Per agent: ms from launch to the first update event, and to the session's `ready`. */
const firstUpdateMs: Record<string, string[]> = {};

describe.each([CLAUDE, CODEX])('$name: a real agent in a Kubernetes session', (agent) => {
  let model: ModelServer;
  let h: BerthOnCluster;
  let repo: TestRepo;
  const logLines: string[] = [];

  beforeAll(async () => {
    const image = await agentsImage(); // built and imported on first use
    model = await startModelServer({ api: agent.api, turns: [], host: requireEnv('BERTH_TEST_HOST_IP') });
    repo = await createTestRepo(`real-${agent.name}`, { 'README.md': '# demo\n' });
    h = await berthOnCluster({
      prefix: `real-${agent.name}`,
      profiles: { k8s: { pod_template: imageTemplate(image), workspace: { mode: 'managed_pvc', size: '1Gi' } } },
      agents: { [agent.name]: agent.agent(model) },
      executor: { secret_env: [agent.keyVar] },
      controllerEnv: { [agent.keyVar]: FAKE_KEY },
      onLog: (line) => logLines.push(line),
    });
  }, AGENTS_IMAGE_BUILD_TIMEOUT_MS);

  afterAll(async () => {
    await h?.close();
    await repo?.remove();
    await model?.close();
    process.stderr.write(`[real agents on k8s] ${agent.name}: ms from launch to the first update event: ${(firstUpdateMs[agent.name] ?? []).join(', ')}\n`);
  });

  /** Launches the agent with `prompt` until ready and records the time to its first update event. */
  const start = async (prompt: string): Promise<string> => {
    const startedAt = Date.now();
    const s = await h.controller.launch({ repository: { url: repo.url }, executor: 'k8s', agent: agent.name, prompt });
    const v = await h.controller.waitUntilSettled(s.id);
    if (v.state !== 'ready') throw new Error(`session ${s.id} is ${v.state}: ${v.error?.message ?? '(no error)'}; stages: ${JSON.stringify(v.stages)}`);
    const readyAt = Date.now();
    const first = await until('a first update event', async () => (await events(h.controller, s.id)).find((e) => e.event.type === 'update'));
    (firstUpdateMs[agent.name] ??= []).push(`${Date.parse(first.at) - startedAt} (ready after ${readyAt - startedAt})`);
    return s.id;
  };
  const exec = async (id: string, ...argv: string[]): Promise<string> => (await execText(h.controller, id, argv)).stdout;
  const remove = async (id: string): Promise<void> => {
    await h.controller.remove(id);
    expect(await labelledLeftovers(h.core, h.ns.name, `berth.dev/session-id=${id}`)).toEqual([]);
  };
  /** What the tools printed, as the model got them: a failing edit says why in them. */
  const toolResults = (): string =>
    model.log
      .main()
      .map((r) => (agent.api === 'anthropic' ? messagesToolResult(r) : responsesToolResult(r)))
      .filter((r) => r !== null)
      .join('\n');

  it('1. a turn edits README.md: the events show the tool call, git diff in the Pod the edit', async () => {
    const c = h.controller;
    model.reset([agent.editTurn]);
    const id = await start('please edit README.md');
    if (agent.editAsks) {
      await waitApprovals(c, id, 1);
      expect(await c.approve(id, {})).toMatchObject({ decision: 'allow', pending: 0 });
    }
    const evs = await waitTurnEnd(c, id, 1);
    expect(toolResults(), 'the tool results').not.toMatch(/bwrap:|panicked|Process exited with code [1-9]/);
    expect(evs.find((e) => e.type === 'turn_end')).toMatchObject({ turn: 1, stop_reason: 'end_turn' });
    const updates = evs.flatMap((e) => (e.type === 'update' ? [e.update] : []));
    const calls = updates.filter((u) => u['sessionUpdate'] === 'tool_call' && u['kind'] === agent.editKind);
    expect(calls.length, `tool_call updates of kind ${agent.editKind}: ${JSON.stringify(updates.filter((u) => u['sessionUpdate'] === 'tool_call'))}`).toBeGreaterThan(0);
    const ids = new Set(calls.map((u) => u['toolCallId']));
    const completed = updates.filter((u) => u['sessionUpdate'] === 'tool_call_update' && ids.has(u['toolCallId']) && u['status'] === 'completed');
    expect(completed.length, 'a tool call completed').toBeGreaterThan(0);
    expect(await exec(id, 'git', 'diff')).toContain(agent.editedLine);
    await remove(id);
  });

  it('2. a denied permission request leaves the file untouched', async () => {
    const c = h.controller;
    model.reset([agent.askTurn]);
    const id = await start('please write DENIED.md');
    await waitApprovals(c, id, 1);
    expect((await c.get(id)).agentProcess).toMatchObject({ turns: 1, turnRunning: true, pendingApprovals: 1 });
    expect((await execText(c, id, ['test', '-e', 'DENIED.md'])).exitCode, 'nothing written before the answer').not.toBe(0);
    expect(await c.approve(id, { deny: true })).toMatchObject({ decision: 'deny', pending: 0 });
    const evs = await waitTurnEnd(c, id, 1);
    expect(evs.find((e) => e.type === 'permission_answer')).toMatchObject({ type: 'permission_answer' });
    expect((await execText(c, id, ['test', '-e', 'DENIED.md'])).exitCode, 'DENIED.md not written').not.toBe(0);
    expect(await exec(id, 'git', 'status', '--porcelain')).toBe('');
    await remove(id);
  });

  it('3. after a Pod replacement the new run loads the conversation: the next turn carries the first', async () => {
    const c = h.controller;
    model.reset([[{ text: 'FIRST ANSWER 1a2b' }], [{ text: 'AFTER REPLACEMENT 3c4d' }]]);
    const id = await start('remember the word kumquat');
    await waitTurnEnd(c, id, 1);
    const first = (await events(c, id)).find((e) => e.event.type === 'session')?.event;

    // the kubelet's record of an eviction: the Pod is replaced, the agent started again in the new one
    const [before] = (await h.core.listNamespacedPod({ namespace: h.ns.name, labelSelector: `berth.dev/session-id=${id}` })).items;
    const restarted = waitForDiagnostic(c, id, 'AgentRestarted', 'after the eviction', 180_000);
    await h.core.patchNamespacedPodStatus(
      { namespace: h.ns.name, name: before!.metadata!.name!, body: { status: { phase: 'Failed', reason: 'Evicted', message: 'The node was low on resource: memory.' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await restarted;
    expect((await c.get(id)).agentProcess).toMatchObject({ id: 'agent-2', status: 'running' });
    const after = await until('the new run to open its session', async () => (await events(c, id)).find((e) => e.event.type === 'session')?.event);
    expect(after, JSON.stringify(after)).toMatchObject({ resume: { from: 'agent-1', loaded: true, reason: null } });
    expect(after).toMatchObject({ session_id: first?.type === 'session' ? first.session_id : 'no first session' });
    expect((await events(c, id)).some((e) => e.event.type === 'prompt'), 'the launch prompt is not run again').toBe(false);

    await c.sendInput(id, 'which word?\n');
    const evs = await until('the turn after the replacement to end', async () => {
      const all = (await events(c, id)).map((e) => e.event);
      return all.some((e) => e.type === 'turn_end') ? all : undefined;
    });
    expect(JSON.stringify(evs)).toContain('AFTER REPLACEMENT 3c4d');
    const next = model.log.main().find((r) => r.step?.turn === 2);
    const body = JSON.stringify(next?.body ?? null);
    expect(body).toContain('remember the word kumquat');
    expect(body).toContain('FIRST ANSWER 1a2b');
    expect(body).toContain('which word?');
    await remove(id);
  });

  it('4. the key reaches the model server, never the Pod, Secrets, ConfigMaps, inventory, controller logs or status', async () => {
    const c = h.controller;
    model.reset([agent.editTurn, [{ text: 'SECOND' }]]);
    const id = await start('please edit README.md');
    if (agent.editAsks) {
      await waitApprovals(c, id, 1);
      await c.approve(id, {});
    }
    await waitTurnEnd(c, id, 1);
    await c.sendInput(id, 'and now?\n');
    await waitTurnEnd(c, id, 2);
    expect(model.log.credentialsAll(FAKE_KEY), 'every model request carried the fake key').toBe(true);

    const ns = h.ns.name;
    const pods = (await h.core.listNamespacedPod({ namespace: ns, labelSelector: `berth.dev/session-id=${id}` })).items;
    expect(pods.length).toBe(1);
    const secrets = (await h.core.listNamespacedSecret({ namespace: ns })).items.map((s) => JSON.stringify({ ...s, data: Object.fromEntries(Object.entries(s.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')])) }));
    const configMaps = (await h.core.listNamespacedConfigMap({ namespace: ns })).items.map((m) => JSON.stringify(m));
    const places: Record<string, string> = {
      'the Pod object (spec: env, args; annotations)': JSON.stringify(pods),
      "the namespace's Secrets (decoded)": secrets.join('\n'),
      "the namespace's ConfigMaps": configMaps.join('\n'),
      'the status view': JSON.stringify(await c.get(id)),
      'the session list': JSON.stringify(await c.list()),
      'the agent events': JSON.stringify(await events(c, id)),
      'the controller log lines': logLines.join('\n'),
    };
    expect(Object.entries(places).filter(([, text]) => text.includes(FAKE_KEY)).map(([where]) => where)).toEqual([]);
    expect(logLines.length, 'the controller logged (debug included)').toBeGreaterThan(0);
    expect(filesHolding(h.dataDir, FAKE_KEY), 'files of the data dir (berth.db, its WAL) holding the key').toEqual([]);
    await remove(id);
  });
});
