import { afterAll, describe, expect, it } from 'vitest';
import { AgentctlProcess, cleanup } from '../support/agentctl.js';
import { AGENTCTL_FEATURES } from '../../../src/protocol/index.js';

afterAll(() => cleanup());

describe('agentctl control - health and nonce handshake', () => {
  it('serves /health without a token', async () => {
    const agentctl = await AgentctlProcess.start();
    const res = await agentctl.request('GET', '/health');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok', version: expect.any(String), features: [AGENTCTL_FEATURES.instanceApiOnControl] });
  });

  it('rejects a wrong or missing nonce and accepts the right one exactly once', async () => {
    const agentctl = await AgentctlProcess.start();
    const wrong = await agentctl.request('POST', '/auth/handshake', { body: { nonce: 'not-the-nonce' } });
    expect(wrong.status).toBe(403);
    expect(wrong.body).toMatchObject({ error: { code: 'forbidden' } });

    const missing = await agentctl.request('POST', '/auth/handshake', { body: {} });
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ error: { code: 'bad_request', message: expect.stringContaining('nonce') } });

    const ok = await agentctl.request<{ token: string }>('POST', '/auth/handshake', { body: { nonce: agentctl.nonce } });
    expect(ok.status).toBe(200);
    expect(ok.body.token).toMatch(/^[0-9a-f]{64}$/);

    const replay = await agentctl.request('POST', '/auth/handshake', { body: { nonce: agentctl.nonce } });
    expect(replay.status, 'the nonce is one-shot per process').toBe(403);
    expect(JSON.stringify(replay.body)).not.toContain(agentctl.nonce);

    const list = await agentctl.request('GET', '/api/v1/instances', { token: ok.body.token });
    expect(list.status).toBe(200);
  });

  it('accepts the same nonce once after a restart, with a new token; the old token stops working', async () => {
    const agentctl = await AgentctlProcess.start();
    const first = await agentctl.handshake();
    await agentctl.restart('SIGTERM');
    const second = await agentctl.handshake();
    expect(second).not.toBe(first);
    expect((await agentctl.request('GET', '/api/v1/instances', { token: first })).status).toBe(401);
    expect((await agentctl.request('GET', '/api/v1/instances', { token: second })).status).toBe(200);
    expect((await agentctl.request('POST', '/auth/handshake', { body: { nonce: agentctl.nonce } })).status).toBe(403);
  });

  it('refuses every handshake with a clear message when no nonce is configured', async () => {
    const agentctl = await AgentctlProcess.start({ nonce: null });
    const res = await agentctl.request('POST', '/auth/handshake', { body: { nonce: 'anything' } });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ error: { code: 'forbidden', message: expect.stringContaining('AGENTCTL_BOOTSTRAP_NONCE') } });
    expect((await agentctl.request('GET', '/api/v1/instances')).status).toBe(401);
  });

  it('never writes the nonce or the token to its logs', async () => {
    const agentctl = await AgentctlProcess.start();
    const token = await agentctl.handshake();
    await agentctl.request('GET', '/api/v1/instances', { token });
    await agentctl.request('GET', '/api/v1/instances', { token: 'wrong-token' });
    await agentctl.stop('SIGTERM');
    expect(agentctl.stderr).toContain('handshake accepted');
    expect(agentctl.stderr).not.toContain(agentctl.nonce as string);
    expect(agentctl.stderr).not.toContain(token);
  });
});
