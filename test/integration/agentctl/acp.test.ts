import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventPageSchema, PermissionListSchema, PromptAcceptedSchema } from '../../../src/protocol/index.js';
import { AgentctlProcess, BUNDLE, cleanup, createInstance, tempDir, until, type InstanceApi } from '../support/agentctl.js';

interface Info {
  id: string;
  status: string;
  protocol?: string;
  acp?: { session_id: string | null; state: string; turns: number; pending_permissions: number; next_event_seq: number };
}
interface Event {
  type: string;
  turn?: number | null;
  update?: { sessionUpdate: string; kind?: string; status?: string; content?: unknown[] };
  request?: { id: string; tool_call: { kind?: string; content?: unknown[] }; options: { option_id: string; kind: string }[] };
  stop_reason?: string;
  usage?: Record<string, unknown> | null;
  by?: string;
  outcome?: string;
  option_id?: string | null;
  session_id?: string;
}
interface EventPage {
  events: { seq: number; at: string; event: Event }[];
  next: number;
  first_available: number;
  complete: boolean;
}
interface Permission {
  id: string;
  tool_call: { kind?: string };
  options: { option_id: string; kind: string }[];
}

const workspace = tempDir();
let agentctl: AgentctlProcess;
let api: InstanceApi;

beforeAll(async () => {
  agentctl = await AgentctlProcess.start({ env: { AGENTCTL_STOP_GRACE_MS: '300' } });
  api = await createInstance(agentctl, await agentctl.handshake(), 'acp', workspace);
});
afterAll(async () => {
  await cleanup(workspace);
});

const DEMO = [process.execPath, BUNDLE, 'demo-acp-agent'];
const startAcp = (id: string, body: Record<string, unknown> = {}) =>
  api.request<Info>('POST', '/api/v1/processes', { body: { id, command: DEMO, kind: 'agent', protocol: 'acp', env: { BERTH_DEMO_STEP_MS: '0' }, ...body } });
/** The events page, checked against the wire schema. */
async function events(id: string, from = 0): Promise<EventPage> {
  const res = await api.request<EventPage>('GET', `/api/v1/processes/${id}/events?from=${from}`);
  EventPageSchema.parse(res.body);
  return res.body;
}
const types = (page: EventPage) => page.events.map((e) => (e.event.type === 'update' ? `update:${e.event.update?.sessionUpdate}` : e.event.type));
const turnEnds = async (id: string, n: number) => until(async () => (await events(id)).events.filter((e) => e.event.type === 'turn_end').length >= n);
async function permissions(id: string): Promise<Permission[]> {
  const res = await api.request<{ permissions: Permission[] }>('GET', `/api/v1/processes/${id}/permissions`);
  PermissionListSchema.parse(res.body);
  return res.body.permissions;
}
async function waitPermission(id: string): Promise<Permission> {
  await until(async () => (await permissions(id)).length > 0);
  return (await permissions(id))[0] as Permission;
}

describe('agentctl ACP processes', () => {
  it('runs a first turn with ordered events, holds the permission until answered, and allow writes the file', async () => {
    const started = await startAcp('a1', { prompt: 'please write allowed.md' });
    expect(started.status).toBe(201);
    expect(started.body.protocol).toBe('acp');
    const permission = await waitPermission('a1');
    expect(permission.tool_call.kind).toBe('edit');
    // it waits: nothing written, the turn has not ended
    await new Promise((r) => setTimeout(r, 300));
    expect(existsSync(join(workspace, 'allowed.md'))).toBe(false);
    expect((await api.request<Info>('GET', '/api/v1/processes/a1')).body.acp).toMatchObject({ state: 'prompting', turns: 1, pending_permissions: 1 });
    expect(types(await events('a1'))).not.toContain('turn_end');

    const answered = await api.request('POST', `/api/v1/processes/a1/permissions/${permission.id}`, { body: { decision: 'allow' } });
    expect(answered.status).toBe(204);
    await turnEnds('a1', 1);
    expect(readFileSync(join(workspace, 'allowed.md'), 'utf8')).toContain('please write allowed.md');
    const page = await events('a1');
    expect(types(page)).toEqual([
      'session',
      'prompt',
      'update:agent_message_chunk',
      'update:tool_call',
      'permission',
      'permission_answer',
      'update:tool_call_update',
      'update:agent_message_chunk',
      'update:usage_update',
      'update:agent_message_chunk',
      'turn_end',
    ]);
    expect(page.events.map((e) => e.seq)).toEqual(page.events.map((_, i) => i));
    const toolCall = page.events.find((e) => e.event.update?.sessionUpdate === 'tool_call')?.event.update;
    expect(toolCall).toMatchObject({ kind: 'edit', content: [{ type: 'diff' }] });
    expect(page.events.find((e) => e.event.type === 'permission_answer')?.event).toMatchObject({ outcome: 'selected', option_id: 'allow', by: 'person' });
    expect(page.events.at(-1)?.event).toMatchObject({ type: 'turn_end', turn: 1, stop_reason: 'end_turn', usage: { outputTokens: 42 } });
    expect(page.complete).toBe(false);
  });

  it('resumes events from a sequence number', async () => {
    const all = await events('a1');
    const from = await events('a1', 4);
    expect(from.events.map((e) => e.seq)).toEqual(all.events.slice(4).map((e) => e.seq));
    expect(from.next).toBe(all.next);
    expect((await events('a1', all.next)).events).toEqual([]);
  });

  it('runs a second turn in the same ACP session; a deny leaves the file untouched', async () => {
    writeFileSync(join(workspace, 'denied.md'), 'original\n');
    const sessionBefore = (await api.request<Info>('GET', '/api/v1/processes/a1')).body.acp?.session_id;
    const res = await api.request<{ turn: number }>('POST', '/api/v1/processes/a1/prompt', { body: { text: 'now edit denied.md' } });
    expect(res.status).toBe(202);
    expect(PromptAcceptedSchema.parse(res.body)).toEqual({ turn: 2 });
    // one turn at a time
    expect((await api.request('POST', '/api/v1/processes/a1/prompt', { body: { text: 'again' } })).status).toBe(409);
    const permission = await waitPermission('a1');
    expect((await api.request('POST', `/api/v1/processes/a1/permissions/${permission.id}`, { body: { decision: 'deny' } })).status).toBe(204);
    await turnEnds('a1', 2);
    expect(readFileSync(join(workspace, 'denied.md'), 'utf8')).toBe('original\n');
    const info = (await api.request<Info>('GET', '/api/v1/processes/a1')).body;
    expect(info.acp).toMatchObject({ session_id: sessionBefore, state: 'idle', turns: 2, pending_permissions: 0 });
    const last = (await events('a1')).events.filter((e) => e.event.turn === 2 || e.event.type === 'permission_answer');
    expect(last.find((e) => e.event.type === 'permission_answer' && e.event.option_id === 'reject')).toBeDefined();
    expect(last.at(-1)?.event).toMatchObject({ type: 'turn_end', stop_reason: 'end_turn' });
  });

  it('refuses answers to unknown requests and stdin writes', async () => {
    expect((await api.request('POST', '/api/v1/processes/a1/permissions/perm-99', { body: { decision: 'allow' } })).status).toBe(404);
    expect((await api.request('POST', '/api/v1/processes/a1/permissions/perm-1', { body: {} })).status).toBe(400);
    expect((await api.request('POST', '/api/v1/processes/a1/stdin', { body: { data: 'x' } })).status).toBe(409);
    expect((await api.request('POST', '/api/v1/processes/a1/cancel')).status).toBe(409);
  });

  it('cancel ends a turn as cancelled', async () => {
    const res = await api.request<{ turn: number }>('POST', '/api/v1/processes/a1/prompt', { body: { text: 'a slow one' } });
    expect(res.status).toBe(202);
    await until(async () => (await events('a1')).events.some((e) => e.event.turn === res.body.turn && e.event.type === 'update'));
    expect((await api.request('POST', '/api/v1/processes/a1/cancel')).status).toBe(204);
    await turnEnds('a1', 3);
    expect((await events('a1')).events.at(-1)?.event).toMatchObject({ type: 'turn_end', turn: 3, stop_reason: 'cancelled' });
  });

  it('cancel answers a pending permission request as cancelled', async () => {
    await api.request('POST', '/api/v1/processes/a1/prompt', { body: { text: 'write cancelled.md' } });
    await waitPermission('a1');
    expect((await api.request('POST', '/api/v1/processes/a1/cancel')).status).toBe(204);
    await turnEnds('a1', 4);
    const page = await events('a1');
    expect(page.events.filter((e) => e.event.type === 'permission_answer').at(-1)?.event).toMatchObject({ outcome: 'cancelled', by: 'cancel' });
    expect(page.events.at(-1)?.event).toMatchObject({ type: 'turn_end', stop_reason: 'cancelled' });
    expect(existsSync(join(workspace, 'cancelled.md'))).toBe(false);
  });

  it('auto-edits writes without asking', async () => {
    await startAcp('a2', { approve: 'auto-edits', prompt: 'write auto.md' });
    await turnEnds('a2', 1);
    expect(readFileSync(join(workspace, 'auto.md'), 'utf8')).toContain('write auto.md');
    const answer = (await events('a2')).events.find((e) => e.event.type === 'permission_answer');
    expect(answer?.event).toMatchObject({ outcome: 'selected', option_id: 'allow', by: 'policy' });
  });

  it('serves fs/* inside the workspace only', async () => {
    const outside = `escape-${process.pid}-${Date.now()}.md`;
    await startAcp('a3', { approve: 'auto-all', prompt: `write ../${outside}` });
    await turnEnds('a3', 1);
    expect(existsSync(join(workspace, '..', outside))).toBe(false);
    const updates = (await events('a3')).events.map((e) => e.event.update).filter((u) => u?.sessionUpdate === 'tool_call_update');
    expect(updates).toEqual([expect.objectContaining({ status: 'failed' })]);
  });

  it('cancels a pending permission request when the agent exits', async () => {
    await startAcp('a4', { prompt: 'write never.md' });
    const permission = await waitPermission('a4');
    await api.request('POST', '/api/v1/processes/a4/signal', { body: { signal: 'SIGKILL' } });
    await until(async () => (await api.request<Info>('GET', '/api/v1/processes/a4')).body.status === 'exited');
    const page = await events('a4');
    expect(page.events.find((e) => e.event.type === 'permission_answer')?.event).toMatchObject({ id: permission.id, outcome: 'cancelled', by: 'exit' });
    expect(page.events.at(-1)?.event).toMatchObject({ type: 'error', turn: 1 });
    expect(page.complete).toBe(true);
    expect(existsSync(join(workspace, 'never.md'))).toBe(false);
    expect((await api.request('GET', '/api/v1/processes/a4/permissions')).status).toBe(409);
  });

  it('records the end of the process: events complete, ACP routes refused, the agent stderr kept as output', async () => {
    await api.request('POST', '/api/v1/processes/a2/signal', { body: { signal: 'SIGTERM' } });
    await until(async () => (await api.request<Info>('GET', '/api/v1/processes/a2')).body.status === 'exited');
    const info = (await api.request<Info>('GET', '/api/v1/processes/a2')).body;
    expect(info.protocol).toBe('acp');
    expect(info.acp).toBeUndefined();
    const page = await events('a2');
    expect(page.complete).toBe(true);
    expect(types(page)).toContain('turn_end');
    expect((await api.request('POST', '/api/v1/processes/a2/prompt', { body: { text: 'x' } })).status).toBe(409);
    const output = (await api.request<{ chunks: { stream: string; data: string }[] }>('GET', '/api/v1/processes/a2/output')).body;
    expect(output.chunks.map((c) => c.stream)).toEqual(['stderr']);
    expect(Buffer.from(output.chunks[0]?.data ?? '', 'base64').toString()).toMatch(/^demo ACP agent .* ready/);
  });

  it('leaves raw processes as they were', async () => {
    const res = await api.request<Info>('POST', '/api/v1/processes', { body: { command: ['sh', '-c', 'echo raw'], kind: 'agent' } });
    expect(res.status).toBe(201);
    expect(res.body.protocol).toBeUndefined();
    await until(async () => (await api.request<Info>('GET', `/api/v1/processes/${res.body.id}`)).body.status === 'exited');
    const page = (await api.request<{ chunks: { data: string }[] }>('GET', `/api/v1/processes/${res.body.id}/output`)).body;
    expect(Buffer.from(page.chunks[0]?.data ?? '', 'base64').toString()).toBe('raw\n');
    expect((await api.request('POST', `/api/v1/processes/${res.body.id}/prompt`, { body: { text: 'x' } })).status).toBe(409);
    expect((await api.request('GET', `/api/v1/processes/${res.body.id}/events`)).status).toBe(409);
    expect((await api.request('POST', '/api/v1/processes', { body: { command: ['true'], prompt: 'x' } })).status).toBe(400);
  });
});

describe('agentctl ACP processes after an agentctl restart', () => {
  it('keeps the recorded events readable and resumable', async () => {
    const before = await events('a1');
    await agentctl.restart('SIGKILL');
    api = await createInstance(agentctl, await agentctl.handshake(), 'acp', workspace);
    const info = (await api.request<Info>('GET', '/api/v1/processes/a1')).body;
    expect(info).toMatchObject({ status: 'exited', protocol: 'acp' });
    const after = await events('a1');
    expect(after.events).toEqual(before.events);
    expect(after.complete).toBe(true);
    expect((await events('a1', 5)).events.map((e) => e.seq)).toEqual(before.events.slice(5).map((e) => e.seq));
    expect((await api.request('POST', '/api/v1/processes/a1/prompt', { body: { text: 'x' } })).status).toBe(409);
  });
});
