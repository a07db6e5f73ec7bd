/**
 * Client → server frames on `…/processes/{id}/stream` (StreamClientMessage) against the built
 * agentctl: stdin, eof and signals over the output socket, and how malformed frames are answered.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InstanceClient } from '../../../src/agentctl-client/index.js';
import type { StreamMessage } from '../../../src/protocol/index.js';
import { AgentctlProcess, cleanup, collectStream, createInstance, tempDir, type InstanceApi } from '../support/agentctl.js';

const workspace = tempDir();
let api: InstanceApi;

beforeAll(async () => {
  const agentctl = await AgentctlProcess.start();
  api = await createInstance(agentctl, await agentctl.handshake(), 'stdin', workspace);
});
afterAll(() => cleanup(workspace));

const start = async (command: string[]): Promise<string> => (await api.request<{ id: string }>('POST', '/api/v1/processes', { body: { command } })).body.id;
const streamUrl = (id: string): string => `ws://127.0.0.1:${api.port}/api/v1/processes/${id}/stream?from=0`;
const headers = (): Record<string, string> => ({ authorization: `Bearer ${api.token}`, 'x-instance-id': api.id });
const stdin = (text: string): string => JSON.stringify({ type: 'stdin', data: Buffer.from(text).toString('base64') });
const outputText = (messages: unknown[]): string =>
  (messages as StreamMessage[]).map((m) => (m.type === 'output' ? Buffer.from(m.chunk.data, 'base64').toString() : '')).join('');

describe('agentctl stream socket input', () => {
  it('writes stdin frames to the process in order and closes its stdin on eof', async () => {
    const id = await start(['cat']);
    const result = await collectStream(streamUrl(id), headers(), (ws) => {
      for (const part of ['al', 'pha\n', 'beta\n']) ws.send(stdin(part));
      ws.send(JSON.stringify({ type: 'eof' }));
    });
    expect(outputText(result.messages)).toBe('alpha\nbeta\n');
    expect(result.messages.at(-1)).toMatchObject({ type: 'exit', exit_code: 0, signal: null });
    expect(result.closeCode).toBe(1000);
  });

  it('answers malformed frames with a bad_request error and keeps the socket usable', async () => {
    const id = await start(['cat']);
    const result = await collectStream(streamUrl(id), headers(), (ws) => {
      ws.send('not json');
      ws.send(JSON.stringify({ type: 'resize', rows: 1 }));
      ws.send(JSON.stringify({ type: 'stdin', data: '***' }));
      ws.send(JSON.stringify({ type: 'stdin', data: 'aGk=', extra: 1 }));
      ws.send(Buffer.from(stdin('binary')), { binary: true });
      ws.send(stdin('still here\n'));
      ws.send(JSON.stringify({ type: 'eof' }));
    });
    const errors = result.messages.filter((m) => (m as StreamMessage).type === 'error');
    expect(errors).toHaveLength(5);
    for (const e of errors) expect(e).toMatchObject({ type: 'error', code: 'bad_request' });
    expect(JSON.stringify(errors), 'an error never echoes the frame (it may hold typed secrets)').not.toContain('aGk=');
    expect(outputText(result.messages)).toBe('still here\n');
    expect(result.messages.at(-1)).toMatchObject({ type: 'exit', exit_code: 0 });
  });

  it('answers stdin after eof with a conflict error, and delivers signals to the process group', async () => {
    const id = await start(['sh', '-c', 'cat; echo "stdin closed"; sleep 30']);
    const result = await collectStream(streamUrl(id), headers(), (ws) => {
      ws.send(stdin('x\n'));
      ws.send(JSON.stringify({ type: 'eof' }));
      ws.send(stdin('too late\n'));
      ws.on('message', (raw: Buffer) => {
        if (outputText([JSON.parse(raw.toString())]).includes('stdin closed')) ws.send(JSON.stringify({ type: 'signal', signal: 'SIGTERM' }));
      });
    });
    expect(result.messages).toContainEqual(expect.objectContaining({ type: 'error', code: 'conflict' }));
    expect(outputText(result.messages)).toBe('x\nstdin closed\n');
    expect(result.messages.at(-1)).toMatchObject({ type: 'exit', exit_code: null, signal: 'SIGTERM' });
  });

  it('closes the socket (1009) on a frame over the size cap, leaving the process running', async () => {
    const id = await start(['cat']);
    const result = await collectStream(streamUrl(id), headers(), (ws) => ws.send(stdin('x'.repeat(100 * 1024))));
    expect(result.closeCode).toBe(1009);
    expect((await api.request<{ status: string }>('GET', `/api/v1/processes/${id}`)).body.status).toBe('running');
    await api.request('POST', `/api/v1/processes/${id}/signal`, { body: { signal: 'SIGKILL' } });
  });

  it('refuses the upgrade without the token, as for output-only streams', async () => {
    const id = await start(['cat']);
    const result = await collectStream(streamUrl(id), { 'x-instance-id': api.id });
    expect(result.rejectedStatus).toBe(401);
    await api.request('POST', `/api/v1/processes/${id}/signal`, { body: { signal: 'SIGKILL' } });
  });

  it('is driven by InstanceClient.attach: input written before the dial opens arrives, output follows', async () => {
    const id = await start(['sh', '-c', 'read a; echo "got $a"; read b; echo "then $b"']);
    const client = new InstanceClient({ baseUrl: api.url, token: api.token, instanceId: api.id });
    const attachment = client.attach(id);
    attachment.write('one\n');
    let text = '';
    let exit: StreamMessage | undefined;
    for await (const m of attachment) {
      if (m.type === 'output') {
        text += Buffer.from(m.chunk.data, 'base64').toString();
        if (text === 'got one\n') attachment.write('two\n');
      } else if (m.type === 'exit') exit = m;
    }
    expect(text).toBe('got one\nthen two\n');
    expect(exit).toMatchObject({ exit_code: 0 });
  });
});
