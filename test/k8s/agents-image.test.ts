// The agents image (test/cluster/images/agents.sh) on the real test cluster: a Pod from it, under
// Pod Security "restricted" as uid 1000, has the real ACP adapters on PATH, and each one answers an
// ACP `initialize` over stdin without any API key; the native binaries they spawn run in the image.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoreV1Api } from '@kubernetes/client-node';
import type { KubeConfig } from '@kubernetes/client-node';
import { createTestNamespace, execInPod, loadKubeConfig, restrictedPod, waitForPodRunning } from './support/index.js';
import type { TestNamespace } from './support/index.js';
import { AGENTS_IMAGE_BUILD_TIMEOUT_MS, agentsImage } from './support/agents-image.js';

const POD = 'agents';
const INITIALIZE = `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 1, clientCapabilities: {} } })}\n`;

// Runs in the Pod (node -e): spawns the command named in argv by its name (so from PATH), writes
// its own stdin to the agent and keeps the agent's stdin open until the agent's first stdout line,
// then closes it (the adapters exit on EOF) and prints {line, code, signal} as one JSON line.
const DRIVER = `
const { spawn } = require('child_process');
const agent = spawn(process.argv[1], [], { stdio: ['pipe', 'pipe', 'inherit'] });
let input = '', output = '', line;
const kill = setTimeout(() => agent.kill('SIGKILL'), 60000);
process.stdin.on('data', (c) => (input += c)).on('end', () => agent.stdin.write(input));
agent.stdout.setEncoding('utf8').on('data', (c) => {
  output += c;
  const nl = output.indexOf('\\n');
  if (line === undefined && nl >= 0) { line = output.slice(0, nl); agent.stdin.end(); }
});
agent.on('error', (err) => { console.log(JSON.stringify({ error: String(err) })); process.exit(1); });
agent.on('close', (code, signal) => { clearTimeout(kill); console.log(JSON.stringify({ line, code, signal })); });
`;

interface DriverResult {
  line?: string;
  code: number | null;
  signal: string | null;
}

describe('the agents image', () => {
  let kc: KubeConfig;
  let ns: TestNamespace;
  let image: string;

  beforeAll(async () => {
    image = await agentsImage(); // builds and imports it the first time (about a minute)
    kc = loadKubeConfig();
    ns = await createTestNamespace(kc, 'agents-image');
    await kc.makeApiClient(CoreV1Api).createNamespacedPod({
      namespace: ns.name,
      body: restrictedPod({ name: POD, image, imagePullPolicy: 'Never', command: ['sleep', 'infinity'] }),
    });
    await waitForPodRunning(kc, ns.name, POD);
  }, AGENTS_IMAGE_BUILD_TIMEOUT_MS);

  afterAll(async () => {
    await ns?.cleanup();
  });

  const exec = (command: string[], stdin?: string): ReturnType<typeof execInPod> =>
    execInPod(kc, { namespace: ns.name, pod: POD, command, stdin, timeoutMs: 90_000 });

  it('has claude-agent-acp and codex-acp on PATH, run by user agent (uid 1000) with Node 20', async () => {
    const result = await exec(['sh', '-c', 'command -v claude-agent-acp; command -v codex-acp; id -u; echo "$HOME"; node --version']);
    expect(result.stderr).toBe('');
    expect(result.stdout.split('\n')).toEqual(['/usr/local/bin/claude-agent-acp', '/usr/local/bin/codex-acp', '1000', '/home/agent', 'v20.20.2', '']);
  });

  it.each([
    { bin: 'claude-agent-acp', name: '@agentclientprotocol/claude-agent-acp', version: '0.101.0' },
    { bin: 'codex-acp', name: '@agentclientprotocol/codex-acp', version: '2.6.0' },
  ])('$bin answers ACP initialize over stdin with its name and version, without an API key', async ({ bin, name, version }) => {
    const result = await exec(['node', '-e', DRIVER, bin], INITIALIZE);
    expect(result.exitCode, result.stderr).toBe(0);
    const driver = JSON.parse(result.stdout) as DriverResult;
    expect(driver.line, result.stderr).toBeDefined();
    const response = JSON.parse(driver.line ?? '') as { id: number; result: { protocolVersion: number; agentInfo: unknown } };
    expect(response).toMatchObject({ id: 1, result: { protocolVersion: 1, agentInfo: { name, version } } });
    // stdin closed after the answer: the adapter shuts down cleanly.
    expect(driver).toMatchObject({ code: 0, signal: null });
  });

  it('runs the native binaries the adapters spawn: Claude Code 2.1.318 and codex 0.166.0', async () => {
    const claude = await exec(['claude-agent-acp', '--cli', '--version']);
    expect(claude).toMatchObject({ exitCode: 0, stdout: '2.1.318 (Claude Code)\n' });
    const codex = await exec(['/opt/berth-agents/node_modules/.bin/codex', '--version']);
    expect(codex).toMatchObject({ exitCode: 0, stdout: 'codex-cli 0.166.0\n' });
  });
});
