import * as acp from '@agentclientprotocol/sdk';
import * as fs from 'node:fs';
import { spawn } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
const t0 = Date.now();
const T = () => String(Date.now() - t0).padStart(6);
const [cmd, ...args] = process.argv.slice(2);
const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'], cwd: process.env.WS, env: process.env });
child.stderr!.on('data', (d) => fs.appendFileSync(process.env.ERRLOG ?? '/tmp/acp-test/agent-stderr.log', d));
child.on('exit', (c, s) => console.log(T(), 'agent exit', c, s));
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin!) as any, Readable.toWeb(child.stdout!) as any);
let first = 0;
const conn = acp.client({ name: 'berth' })
  .onNotification(acp.methods.client.session.update, async ({ params }) => { if (!first) first = Date.now() - t0; console.log(T(), 'update', JSON.stringify(params.update).slice(0, Number(process.env.W ?? 300))); })
  .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
    console.log(T(), 'PERMISSION', JSON.stringify(params).slice(0, 600));
    const want = process.env.PERM === 'deny' ? 'reject_once' : 'allow_once';
    const opt = params.options.find((o) => o.kind === want) ?? params.options[0];
    return { outcome: { outcome: 'selected', optionId: opt.optionId } };
  })
  .onRequest(acp.methods.client.fs.readTextFile, async ({ params }) => { console.log(T(), 'fs/read', params.path); return { content: fs.readFileSync(params.path, 'utf8') }; })
  .onRequest(acp.methods.client.fs.writeTextFile, async ({ params }) => { console.log(T(), 'fs/write', params.path); fs.writeFileSync(params.path, params.content); return {}; })
  .onRequest('*', async ({ method, params }) => { console.log(T(), 'OTHER REQUEST', method, JSON.stringify(params).slice(0, 300)); throw acp.RequestError.methodNotFound(method); })
  .onNotification('*', async ({ method, params }) => { console.log(T(), 'OTHER NOTIF', method, JSON.stringify(params).slice(0, 300)); })
  .connect(stream);
(async () => {
  const init = await conn.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: { fs: { readTextFile: process.env.FS !== '0', writeTextFile: process.env.FS !== '0' }, terminal: false }, clientInfo: { name: 'berth', version: '0' } });
  console.log(T(), 'init', JSON.stringify(init).slice(0, Number(process.env.IW ?? 2000)));
  const cwd = process.env.WS ?? process.cwd();
  let sessionId: string;
  if (process.env.LOAD) {
    const r = await conn.agent.request(acp.methods.agent.session.load, { sessionId: process.env.LOAD, cwd, mcpServers: [] });
    console.log(T(), 'load', JSON.stringify(r).slice(0, 500));
    sessionId = process.env.LOAD;
  } else {
    const s = await conn.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
    console.log(T(), 'new', JSON.stringify(s).slice(0, Number(process.env.NW ?? 800)));
    sessionId = s.sessionId;
  }
  for (const text of (process.env.PROMPTS ?? 'write the file').split('|')) {
    if (process.env.CANCEL_AFTER) setTimeout(() => { console.log(T(), 'sending cancel'); void conn.agent.notify(acp.methods.agent.session.cancel, { sessionId }); }, Number(process.env.CANCEL_AFTER));
    const r = await conn.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text }] });
    console.log(T(), 'stop', JSON.stringify(r), 'firstUpdateAt', first);
  }
  console.log('SESSION', sessionId);
  conn.close(); child.stdin!.end(); setTimeout(() => { child.kill(); process.exit(0); }, 1500);
})().catch((e) => { console.error(T(), 'ERR', e); child.kill(); process.exit(1); });
