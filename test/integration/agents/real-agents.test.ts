/**
 * Real, unmodified agents in a local Berth session: Claude Code (through claude-agent-acp 0.101.0)
 * and Codex (through codex-acp 2.6.0, codex 0.166.0), each an ACP agent of berth.yaml, pointed at
 * the scripted model server (test/support/model-server) through the built-in `claude` and `codex`
 * presets (only the command and the model endpoint overridden in berth.yaml). The fake API key is
 * approved in `secret_env` and set for `berth serve`: the preset passes it without `--secret-env`.
 * The adapters are installed (pinned) in a cache outside the repository and exposed read-only to
 * the sandbox (`sandbox_expose`). Each agent:
 *  a. a turn runs a tool that edits README.md: the transcript shows the tool call, git diff the edit;
 *  b. a permission request waits for `berth approve`; `--deny` leaves the file untouched;
 *  c. `berth send` is a second turn of the same conversation (the model sees the first turn);
 *  d. the fake key reaches the model server and never status, logs, berth.db, serve's or agentctl's logs,
 *     nor the agent's own state;
 *  e. stop → resume continues the conversation (session/load): the model sees the first turn.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentDir, claudeAgentAcpBin, CLAUDE_AGENT_ACP, CODEX_ACP, codexAcpBin } from '../../support/agents/install.js';
import { claudeWorkingDirectory, messagesToolResult, responsesToolResult, startModelServer, type ModelServer, type Turn } from '../../support/model-server/index.js';
import {
  dataDirFilesHolding,
  events,
  FAKE_KEY,
  launch,
  msToFirstUpdate,
  privateHomeFilesHolding,
  startBerth,
  until,
  view,
  waitApprovals,
  waitTurnEnd,
  type Berth,
} from './helpers.js';

interface AgentCase {
  /** The agent's name in berth.yaml. */
  name: string;
  /** The env var holding the key (approved in secret_env, passed with --secret-env). */
  keyVar: string;
  api: 'anthropic' | 'openai';
  /** berth.yaml for this agent with the model server at `model`. */
  config(model: ModelServer): Promise<string>;
  /** The script of test a: a tool call that edits README.md, then text. */
  editTurn: Turn;
  /** The script of test b: a tool call that needs permission and would create DENIED.md, then text. */
  askTurn: Turn;
  /** What the edit leaves in `git diff`. */
  editedLine: string;
  /** The transcript lines of the edit's tool call. */
  toolLines: RegExp[];
}

const EDITED = 'edited by the scripted model';

/** `path` inside the working directory Claude Code names in its system prompt. */
const inClaudeCwd = (name: string) => (cwd: string | null): string => `${cwd ?? '/working-directory-not-found-in-system-prompt'}/${name}`;

const CLAUDE: AgentCase = {
  name: 'claude',
  keyVar: 'ANTHROPIC_API_KEY',
  api: 'anthropic',
  async config(model) {
    const bin = await claudeAgentAcpBin();
    return [
      'executors:',
      '  local:',
      '    type: local',
      '    sandbox: bubblewrap',
      `    sandbox_expose: ["${agentDir(CLAUDE_AGENT_ACP)}"]`,
      '    secret_env: [ANTHROPIC_API_KEY]',
      // the built-in claude preset, run from the cache and pointed at the model server: its state
      // directory, its asking mode (session/set_mode "default") and its credential variables are the preset's
      'agents:',
      '  claude:',
      `    command: [node, "${bin}"]`,
      '    env:',
      `      ANTHROPIC_BASE_URL: "${model.url}"`,
      '      ANTHROPIC_MODEL: claude-berth-test',
      '',
    ].join('\n');
  },
  editTurn: [
    { tool: 'Read', input: (r) => ({ file_path: inClaudeCwd('README.md')(claudeWorkingDirectory(r)) }) },
    { tool: 'Edit', input: (r) => ({ file_path: inClaudeCwd('README.md')(claudeWorkingDirectory(r)), old_string: '# demo', new_string: `# demo ${EDITED}` }) },
    { text: 'DONE editing' },
  ],
  askTurn: [{ tool: 'Write', input: (r) => ({ file_path: inClaudeCwd('DENIED.md')(claudeWorkingDirectory(r)), content: 'must not exist\n' }) }, { text: 'understood, not written' }],
  editedLine: `+# demo ${EDITED}`,
  // Claude Code titles the tool call "Edit" or, when the input has streamed by then, "Edit README.md"
  toolLines: [/^tool: Edit( README\.md)? \[edit\] \(pending\)$/m, /^\?\? permission requested \(perm-1\): Edit README\.md /m, /^tool: Edit( README\.md)?: completed$/m],
};

const codexConfig = (model: ModelServer): Record<string, unknown> => ({
  model: 'berth-test-model',
  model_provider: 'berth-fake',
  model_providers: { 'berth-fake': { name: 'Berth fake', base_url: model.v1, env_key: 'OPENAI_API_KEY', wire_api: 'responses' } },
  approval_policy: 'on-request',
  sandbox_mode: 'workspace-write',
});

const CODEX: AgentCase = {
  name: 'codex',
  keyVar: 'OPENAI_API_KEY',
  api: 'openai',
  async config(model) {
    const bin = await codexAcpBin();
    return [
      'executors:',
      '  local:',
      '    type: local',
      '    sandbox: bubblewrap',
      `    sandbox_expose: ["${agentDir(CODEX_ACP)}"]`,
      '    secret_env: [OPENAI_API_KEY]',
      // the built-in codex preset (CODEX_HOME in its state directory, mode workspace-write) with the server as model provider
      'agents:',
      '  codex:',
      `    command: [node, "${bin}"]`,
      '    env:',
      '      NO_BROWSER: "1"',
      `      CODEX_CONFIG: '${JSON.stringify(codexConfig(model))}'`,
      '',
    ].join('\n');
  },
  editTurn: [{ tool: 'exec_command', input: { cmd: `printf '${EDITED}\\n' >> README.md` } }, { text: 'DONE editing' }],
  askTurn: [
    {
      tool: 'exec_command',
      input: { cmd: "printf 'must not exist\\n' > DENIED.md", sandbox_permissions: 'require_escalated', justification: 'needs to write DENIED.md' },
    },
    { text: 'understood, not written' },
  ],
  editedLine: `+${EDITED}`,
  toolLines: [/^tool: printf .* >> README\.md \[execute\]/m],
};

const firstUpdateMs: Record<string, number[]> = {};

describe.each([CLAUDE, CODEX])('$name: a real agent in a local Berth session', (agent) => {
  let model: ModelServer;
  let berth: Berth;

  beforeAll(async () => {
    model = await startModelServer({ api: agent.api, turns: [] });
    berth = await startBerth(await agent.config(model), { [agent.keyVar]: FAKE_KEY });
  }, 20 * 60_000);

  afterAll(async () => {
    await berth?.close();
    await model?.close();
    process.stderr.write(`[real agents] ${agent.name}: ms from berth launch to the first update event: ${(firstUpdateMs[agent.name] ?? []).join(', ')}\n`);
  });

  /** Launches the agent with `prompt` and records the time to its first update. */
  const start = async (prompt: string): Promise<string> => {
    const { id, startedAt } = await launch(berth, agent.name, prompt);
    (firstUpdateMs[agent.name] ??= []).push(await msToFirstUpdate(berth, id, startedAt));
    return id;
  };
  const rm = async (id: string): Promise<void> => {
    const r = await berth.cli('rm', '--force', id);
    expect(r.code, `berth rm --force ${id}: ${r.stdout}${r.stderr}`).toBe(0);
  };
  const exec = async (id: string, ...argv: string[]): Promise<string> => (await berth.cli('exec', id, '--', ...argv)).stdout;

  it('a. a turn runs a tool that edits README.md: the transcript shows the tool call, git diff the edit', async () => {
    model.reset([agent.editTurn]);
    const id = await start('please edit README.md');
    if (agent.api === 'anthropic') {
      // Claude Code asks before an edit: the preset sets its session mode to 'default'
      await waitApprovals(berth, id, 1);
      expect((await berth.cli('approve', id)).code).toBe(0);
    }
    const text = await waitTurnEnd(berth, id, 1);
    // what the edit's tool printed, as the model got it: a failure here says why the edit did not happen
    const results = model.log.main().map((r) => (agent.api === 'anthropic' ? messagesToolResult(r) : responsesToolResult(r)));
    expect(results.filter((r) => r !== null).join('\n'), 'the tool results').not.toMatch(/bwrap:|panicked|Process exited with code [1-9]/);
    expect(text).toContain('>> turn 1: please edit README.md');
    for (const line of agent.toolLines) expect(text).toMatch(line);
    expect(text).toMatch(/== turn 1 ended: end_turn/);
    expect(await exec(id, 'git', 'diff')).toContain(agent.editedLine);
    expect((await events(berth, id)).some((e) => e.event.type === 'update' && e.event.update?.sessionUpdate === 'tool_call')).toBe(true);
    await rm(id);
  });

  it('b. a permission request waits for berth approve; --deny leaves the file untouched', async () => {
    model.reset([agent.askTurn]);
    const id = await start('please write DENIED.md');
    const waiting = await waitApprovals(berth, id, 1);
    expect(waiting.agentProcess).toMatchObject({ turns: 1, turnRunning: true, pendingApprovals: 1 });
    expect(await exec(id, 'ls', '-a')).not.toContain('DENIED.md');
    const deny = await berth.cli('approve', '--deny', id);
    expect(deny.code, deny.stderr).toBe(0);
    expect(deny.stdout).toMatch(/^Denied: /);
    const text = await waitTurnEnd(berth, id, 1);
    expect(text).toMatch(/-- permission \S+ .*: .*by a person/);
    expect((await berth.cli('exec', id, '--', 'test', '-e', 'DENIED.md')).code).not.toBe(0);
    expect(await exec(id, 'git', 'status', '--porcelain')).toBe('');
    await rm(id);
  });

  it('c. berth send starts a second turn in the same conversation: the model sees the first turn', async () => {
    model.reset([[{ text: 'FIRST ANSWER 7d2e' }], [{ text: 'SECOND ANSWER 9c41' }]]);
    const id = await start('first prompt 3a8f');
    await waitTurnEnd(berth, id, 1);
    const send = await berth.cli('send', id, 'second prompt 5b6c');
    expect(send.code, send.stderr).toBe(0);
    const text = await waitTurnEnd(berth, id, 2);
    expect(text).toContain('SECOND ANSWER 9c41');
    expect(text.match(/== ACP session /g), 'one ACP session for both turns').toHaveLength(1);
    const second = model.log.main().find((r) => r.step?.turn === 2);
    const body = JSON.stringify(second?.body ?? null);
    expect(body).toContain('first prompt 3a8f');
    expect(body).toContain('FIRST ANSWER 7d2e');
    expect(body).toContain('second prompt 5b6c');
    expect((await view(berth, id)).agentProcess).toMatchObject({ turns: 2, turnRunning: false });
    await rm(id);
  });

  it('d. the fake key reaches the model server, never status, logs, berth.db or the logs of serve and agentctl', async () => {
    model.reset([agent.editTurn, [{ text: 'SECOND' }]]);
    const id = await start('please edit README.md');
    if (agent.api === 'anthropic') {
      await waitApprovals(berth, id, 1);
      await berth.cli('approve', id);
    }
    await waitTurnEnd(berth, id, 1);
    expect((await berth.cli('send', id, 'and now?')).code).toBe(0);
    await waitTurnEnd(berth, id, 2);
    expect(model.log.credentialsAll(FAKE_KEY), 'every model request carried the fake key').toBe(true);
    const outputs = [
      (await berth.cli('status', id, '-o', 'json')).stdout,
      (await berth.cli('status', id)).stdout,
      (await berth.cli('logs', id)).stdout,
      (await berth.cli('logs', '-o', 'json', id)).stdout,
      (await berth.cli('ls', '-o', 'json')).stdout,
      berth.serveOutput(),
    ];
    expect(outputs.map((o) => o.includes(FAKE_KEY))).toEqual(outputs.map(() => false));
    expect(dataDirFilesHolding(berth.dataDir, FAKE_KEY), 'files of the data dir holding the key').toEqual([]);
    // nor the agent's own state (the codex preset turns off Codex's shell snapshots, which record the environment)
    expect(privateHomeFilesHolding(berth.dataDir, FAKE_KEY), "files of the agent's own state holding the key").toEqual([]);
    await rm(id);
  });

  it('e. stop and resume continue the same conversation: the model sees the first turn after the resume', async () => {
    model.reset([[{ text: 'FIRST ANSWER 1a2b' }], [{ text: 'AFTER RESUME 3c4d' }]]);
    const id = await start('remember the word kumquat');
    await waitTurnEnd(berth, id, 1);
    expect((await berth.cli('stop', id)).code).toBe(0);
    const resumed = await berth.cli('resume', id);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain('conversation continued (session/load');
    expect((await berth.cli('send', id, 'which word?')).code).toBe(0);
    const text = await until('the answer after the resume', async () => {
      const t = (await berth.cli('logs', id)).stdout;
      return t.includes('AFTER RESUME 3c4d') ? t : undefined;
    });
    expect(text).toContain('== earlier conversation (replayed by the agent):');
    expect(text).toContain('(conversation of agent-1 continued)');
    const after = model.log.main().find((r) => r.step?.turn === 2);
    const body = JSON.stringify(after?.body ?? null);
    expect(body).toContain('remember the word kumquat');
    expect(body).toContain('FIRST ANSWER 1a2b');
    expect(body).toContain('which word?');
    await rm(id);
  });
});
