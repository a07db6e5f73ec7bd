// Minimal Anthropic Messages API (streaming SSE) scripted server: 1st request -> tool_use Write, later -> text.
import http from 'node:http';
import fs from 'node:fs';
const log = (...a) => fs.appendFileSync(process.env.LOG ?? '/tmp/acp-test/anthropic.log', a.join(' ') + '\n');
let n = 0;
http.createServer((req, res) => {
  let body = '';
  req.on('data', (d) => (body += d)).on('end', () => setTimeout(() => {
    log('REQ', req.method, req.url, 'auth=' + (req.headers['x-api-key'] ?? req.headers['authorization'] ?? ''), body.length);
    if (!req.url.startsWith('/v1/messages') || req.url.includes('count_tokens')) {
      res.writeHead(req.url.includes('count_tokens') ? 200 : 404, { 'content-type': 'application/json' });
      return res.end(req.url.includes('count_tokens') ? '{"input_tokens":10}' : '{}');
    }
    const j = JSON.parse(body || '{}');
    const msgs = j.messages ?? [];
    log('  model', j.model, 'stream', j.stream, 'nmsgs', msgs.length, 'tools', (j.tools ?? []).map((t) => t.name).join(','));
    const lastUser = msgs[msgs.length - 1];
    const txt = (m) => typeof m?.content === 'string' ? m.content : (m?.content ?? []).map((c) => c.text ?? c.type).join(' ');
    log('  system:', JSON.stringify(j.system ?? '').slice(0, 120));
    msgs.forEach((m, i) => log('  msg', i, m.role, txt(m).replace(/\s+/g, ' ').slice(-160)));
    const hasToolResult = JSON.stringify(lastUser ?? {}).includes('tool_result');
    const isMain = (j.tools ?? []).some((t) => t.name === 'Write');
    const ev = (name, data) => res.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
    if (!j.stream) { res.writeHead(200, { 'content-type': 'application/json' }); return res.end(JSON.stringify({ id: 'msg_x', type: 'message', role: 'assistant', model: j.model, content: [{ type: 'text', text: 'Title' }], stop_reason: 'end_turn', usage: { input_tokens: 5, output_tokens: 1 } })); }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const id = 'msg_' + ++n;
    ev('message_start', { type: 'message_start', message: { id, type: 'message', role: 'assistant', model: j.model, content: [], stop_reason: null, usage: { input_tokens: 20, output_tokens: 1 } } });
    if (isMain && !hasToolResult && process.env.TOOL !== '0') {
      const input = { file_path: process.env.TARGET ?? '/tmp/acp-test/ws/hello.txt', content: 'hello from fake model\n' };
      ev('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_' + n, name: 'Write', input: {} } });
      ev('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(input) } });
      ev('content_block_stop', { type: 'content_block_stop', index: 0 });
      ev('message_delta', { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 15 } });
    } else {
      ev('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
      ev('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Done. (' + msgs.length + ' msgs seen)' } });
      ev('content_block_stop', { type: 'content_block_stop', index: 0 });
      ev('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 5 } });
    }
    ev('message_stop', { type: 'message_stop' });
    res.end();
  }, Number(process.env.SLOW ?? 0)));
}).listen(Number(process.env.PORT ?? 18080), '127.0.0.1', () => log('listening'));
