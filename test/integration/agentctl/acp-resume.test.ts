/**
 * agentctl continuing an ACP conversation in a new process (`resume_from`: session/load when the
 * agent can, a new session and why otherwise), the agent's per-session state directory
 * (`agent_state`, `{{agent_state}}`, `agent_files`) and the session mode (`mode`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AcpEventSchema} from '../../../src/protocol/index.js';
import { EventPageSchema } from '../../../src/protocol/index.js';
import { AgentctlProcess, BUNDLE, cleanup, createInstance, tempDir, until, type InstanceApi } from '../support/agentctl.js';

type AcpEvent = ReturnType<typeof AcpEventSchema.parse>;
interface Info {
  id: string;
  status: string;
  acp?: { state: string };
}

const workspace = tempDir();
let agentctl: AgentctlProcess;
let api: InstanceApi;

beforeAll(async () => {
  agentctl = await AgentctlProcess.start({ env: { AGENTCTL_STOP_GRACE_MS: '300' } });
  api = await createInstance(agentctl, await agentctl.handshake(), 'acp-resume', workspace);
});
afterAll(async () => {
  await cleanup(workspace);
});

const DEMO = [process.execPath, BUNDLE, 'demo-acp-agent'];
/** The demo agent keeping its conversations in its state directory (as the built-in demo-acp agent does). */
const startDemo = (id: string, body: Record<string, unknown> = {}) =>
  api.request<Info & { message?: string }>('POST', '/api/v1/processes', {
    body: { id, command: DEMO, kind: 'agent', protocol: 'acp', approve: 'auto-all', agent_state: 'demo-acp', env: { BERTH_DEMO_STEP_MS: '0', BERTH_DEMO_ACP_STATE: '{{agent_state}}' }, ...body },
  });
async function events(id: string): Promise<AcpEvent[]> {
  const res = await api.request('GET', `/api/v1/processes/${id}/events?from=0`);
  return EventPageSchema.parse(res.body).events.map((e) => e.event);
}
const text = (evs: AcpEvent[], replay: boolean): string =>
  evs
    .filter((e): e is Extract<AcpEvent, { type: 'update' }> => e.type === 'update' && (e.replay === true) === replay)
    .map((e) => {
      const c = e.update['content'] as { text?: string } | undefined;
      return typeof c?.text === 'string' ? c.text : '';
    })
    .join('');
async function stopProcess(id: string): Promise<void> {
  await api.request('POST', `/api/v1/processes/${id}/signal`, { body: { signal: 'SIGTERM' } });
  await until(async () => (await api.request<Info>('GET', `/api/v1/processes/${id}`)).body.status === 'exited');
}
const turnEnds = async (id: string, n: number) => until(async () => (await events(id)).filter((e) => e.type === 'turn_end').length >= n);

describe('agentctl ACP resume', () => {
  it('loads the earlier conversation in a new process: history replayed, no second first turn, the next turn continues it', async () => {
    expect((await startDemo('r1', { prompt: 'write first.md please' })).status).toBe(201);
    await turnEnds('r1', 1);
    const first = (await events('r1')).find((e) => e.type === 'session');
    await stopProcess('r1');

    expect((await startDemo('r2', { prompt: 'write first.md please', resume_from: 'r1' })).status).toBe(201);
    await until(async () => (await events('r2')).some((e) => e.type === 'session'));
    const evs = await events('r2');
    const session = evs.find((e) => e.type === 'session');
    expect(session).toMatchObject({ type: 'session', session_id: first?.type === 'session' ? first.session_id : 'missing', resume: { from: 'r1', loaded: true, reason: null } });
    // the history came back marked as replay, before the session event; the launch prompt was not sent again
    expect(text(evs, true)).toContain('write first.md please');
    expect(evs.findIndex((e) => e.type === 'update' && e.replay === true)).toBeLessThan(evs.findIndex((e) => e.type === 'session'));
    expect(evs.some((e) => e.type === 'prompt')).toBe(false);

    const turn = await api.request<{ turn: number }>('POST', '/api/v1/processes/r2/prompt', { body: { text: 'and now?' } });
    expect(turn.status).toBe(202);
    await turnEnds('r2', 1);
    expect(text(await events('r2'), false)).toContain('This conversation had 1 earlier turn(s); the first was: write first.md please');
    await stopProcess('r2');
  });

  it('opens a new session and says why when the agent cannot load, and sends the prompt when the earlier run never had a turn', async () => {
    // without a state directory the demo agent offers no loadSession
    const plain = { agent_state: undefined, env: { BERTH_DEMO_STEP_MS: '0' } };
    expect((await startDemo('n1', { ...plain, prompt: 'hello' })).status).toBe(201);
    await turnEnds('n1', 1);
    await stopProcess('n1');
    expect((await startDemo('n2', { ...plain, prompt: 'hello', resume_from: 'n1' })).status).toBe(201);
    await until(async () => (await events('n2')).some((e) => e.type === 'session'));
    expect((await events('n2')).find((e) => e.type === 'session')).toMatchObject({ resume: { from: 'n1', loaded: false, reason: expect.stringContaining('cannot load sessions') } });
    expect((await events('n2')).some((e) => e.type === 'prompt')).toBe(false);
    await stopProcess('n2');

    // an earlier run stopped before its first turn: the new one sends the launch prompt
    expect((await startDemo('m1')).status).toBe(201);
    await until(async () => (await events('m1')).some((e) => e.type === 'session'));
    await stopProcess('m1');
    expect((await startDemo('m2', { prompt: 'write second.md', resume_from: 'm1' })).status).toBe(201);
    await turnEnds('m2', 1);
    const m2 = await events('m2');
    expect(m2.find((e) => e.type === 'session')).toMatchObject({ resume: { from: 'm1', loaded: true } });
    expect(m2.find((e) => e.type === 'prompt')).toMatchObject({ text: 'write second.md' });
    await stopProcess('m2');
  });

  it('refuses a resume_from that is unknown, raw, still running, or on a raw process', async () => {
    expect((await startDemo('x1', { resume_from: 'nope' })).status).toBe(400);
    expect((await startDemo('x2', { resume_from: 'r1', protocol: 'raw', approve: undefined })).status).toBe(400);
    expect((await startDemo('live')).status).toBe(201);
    const running = await startDemo('x3', { resume_from: 'live' });
    expect(running.status).toBe(409);
    expect(JSON.stringify(running.body)).toContain('still running');
    await stopProcess('live');
  });

  it('gives the agent its state directory: placeholders expanded, files seeded once (0600) and never overwritten', async () => {
    const script = 'cat "$STATE/login.json"; stat -c %a "$STATE" "$STATE/login.json"; printf changed > "$STATE/login.json"';
    const run = async (id: string, data: string) => {
      const res = await api.request<Info>('POST', '/api/v1/processes', {
        body: { id, command: ['sh', '-c', script], env: { STATE: '{{agent_state}}' }, agent_state: 'probe', agent_files: [{ path: 'login.json', data_base64: Buffer.from(data).toString('base64') }] },
      });
      expect(res.status).toBe(201);
      await until(async () => (await api.request<Info>('GET', `/api/v1/processes/${id}`)).body.status === 'exited');
      const out = await api.request<{ chunks: { data: string }[] }>('GET', `/api/v1/processes/${id}/output?from=0`);
      return out.body.chunks.map((c) => Buffer.from(c.data, 'base64').toString()).join('');
    };
    expect(await run('s1', '{"token":"first"}')).toBe('{"token":"first"}700\n600\n');
    // the agent's own copy (it may have refreshed a login) wins over the original
    expect(await run('s2', '{"token":"second"}')).toBe('changed700\n600\n');
    const bad = await api.request('POST', '/api/v1/processes', { body: { command: ['true'], agent_state: 'probe', agent_files: [{ path: '../escape', data_base64: '' }] } });
    expect(bad.status).toBe(400);
    const noState = await api.request('POST', '/api/v1/processes', { body: { command: ['true'], agent_files: [{ path: 'x', data_base64: '' }] } });
    expect(noState.status).toBe(400);
  });

  it('fails the ACP session when the mode cannot be set (no turn runs without the asking mode)', async () => {
    expect((await startDemo('md', { prompt: 'write never.md', mode: 'default' })).status).toBe(201);
    await until(async () => (await events('md')).some((e) => e.type === 'error'));
    const error = (await events('md')).find((e) => e.type === 'error');
    expect(error).toMatchObject({ message: expect.stringContaining("cannot set the session mode 'default'") });
    expect((await events('md')).some((e) => e.type === 'prompt')).toBe(false);
    await stopProcess('md');
  });
});
