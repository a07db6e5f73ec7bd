/**
 * Long-polled ACP events (`…/events?wait=`): a request waiting at the end of the log answers with
 * the next event as soon as it is recorded, or when the agent exits; a bad `wait` is refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventPageSchema } from '../../../src/protocol/index.js';
import { AgentctlProcess, BUNDLE, cleanup, createInstance, tempDir, until, type InstanceApi } from '../support/agentctl.js';

const workspace = tempDir();
let agentctl: AgentctlProcess;
let api: InstanceApi;

beforeAll(async () => {
  agentctl = await AgentctlProcess.start({ env: { AGENTCTL_STOP_GRACE_MS: '300' } });
  api = await createInstance(agentctl, await agentctl.handshake(), 'acp-wait', workspace);
});
afterAll(async () => {
  await cleanup(workspace);
});

const start = (id: string) =>
  api.request('POST', '/api/v1/processes', { body: { id, command: [process.execPath, BUNDLE, 'demo-acp-agent'], kind: 'agent', protocol: 'acp', env: { BERTH_DEMO_STEP_MS: '0' } } });
const page = async (id: string, query: string) => EventPageSchema.parse((await api.request('GET', `/api/v1/processes/${id}/events?${query}`)).body);
const statusOf = async (id: string, query: string) => (await api.request('GET', `/api/v1/processes/${id}/events?${query}`)).status;
const opened = async (id: string) => (await page(id, 'from=0')).events.some((e) => e.event.type === 'session');

describe('agentctl ACP events long-poll', () => {
  // the waits below are the longest allowed: a request that answers before a test's timeout answered because of the event
  it('answers a waiting request with the next event as soon as it is recorded', { timeout: 15_000 }, async () => {
    expect((await start('w1')).status).toBe(201);
    await until(() => opened('w1'));
    const end = (await page('w1', 'from=0')).next;
    const waiting = page('w1', `from=${end}&wait=20000`);
    const turn = await api.request('POST', '/api/v1/processes/w1/prompt', { body: { text: 'hello' } });
    expect(turn.status).toBe(202);
    const answered = await waiting;
    expect(answered.events[0]).toMatchObject({ seq: end, event: { type: 'prompt', text: 'hello' } });
  });

  it('answers a waiting request when the agent exits', { timeout: 15_000 }, async () => {
    expect((await start('w2')).status).toBe(201);
    await until(() => opened('w2'));
    const end = (await page('w2', 'from=0')).next;
    const waiting = page('w2', `from=${end}&wait=20000`);
    await api.request('POST', '/api/v1/processes/w2/signal', { body: { signal: 'SIGTERM' } });
    await waiting;
    await until(async () => (await page('w2', `from=${end}`)).complete);
  });

  it('refuses a wait beyond the limit', async () => {
    expect(await statusOf('w1', 'from=0&wait=20001')).toBe(400);
  });
});
