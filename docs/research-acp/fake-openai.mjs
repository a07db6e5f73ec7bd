// Minimal OpenAI Responses API (streaming SSE) scripted server.
import http from 'node:http';
import fs from 'node:fs';
const LOG = process.env.LOG ?? '/tmp/acp-test/openai.log';
const log = (...a) => fs.appendFileSync(LOG, a.join(' ') + '\n');
let n = 0;
http.createServer((req, res) => {
  let body = '';
  req.on('data', (d) => (body += d)).on('end', () => setTimeout(() => {
    log('REQ', req.method, req.url, 'auth=' + (req.headers['authorization'] ?? ''), body.length);
    if (req.method !== 'POST' || !req.url.endsWith('/responses')) {
      if (req.url.includes('/models')) { res.writeHead(200, { 'content-type': 'application/json' }); return res.end(JSON.stringify({ object: 'list', data: [] })); }
      res.writeHead(404); return res.end('{}');
    }
    const j = JSON.parse(body || '{}');
    const input = j.input ?? [];
    const tools = (j.tools ?? []).map((t) => t.name ?? t.type);
    log('  model', j.model, 'stream', j.stream, 'ninput', input.length, 'tools', tools.join(','));
    fs.writeFileSync('/tmp/acp-test/last-openai-req.json', JSON.stringify(j, null, 1));
    input.forEach((it, i) => log('  in', i, it.type, it.role ?? '', JSON.stringify(it.content ?? it.output ?? it.arguments ?? it.input ?? '').replace(/\s+/g, ' ').slice(-150)));
    const last = input[input.length - 1] ?? {};
    const afterTool = /output$/.test(last.type ?? '');
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const id = 'resp_' + ++n;
    const ev = (data) => res.write(`event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`);
    ev({ type: 'response.created', response: { id } });
    let item;
    if (!afterTool && process.env.TOOL !== '0') {
      const target = process.env.TARGET ?? 'hello.txt';
      if (tools.includes('apply_patch')) {
        const patch = `*** Begin Patch\n*** Add File: ${target}\n+hello from fake model\n*** End Patch\n`;
        const t = j.tools.find((t) => t.name === 'apply_patch');
        item = t.type === 'custom' ? { type: 'custom_tool_call', id: 'ctc_' + n, call_id: 'call_' + n, name: 'apply_patch', input: patch, status: 'completed' }
          : { type: 'function_call', id: 'fc_' + n, call_id: 'call_' + n, name: 'apply_patch', arguments: JSON.stringify({ input: patch }), status: 'completed' };
      } else {
        const name = tools.includes('exec_command') ? 'exec_command' : 'shell';
        const args = name === 'exec_command' ? { cmd: `printf 'hello from fake model\\n' > ${target}`, ...(process.env.ESCALATE ? { sandbox_permissions: 'require_escalated', justification: 'needs to write outside the sandbox' } : {}) } : { command: ['bash', '-lc', `printf 'hello from fake model\\n' > ${target}`] };
        item = { type: 'function_call', id: 'fc_' + n, call_id: 'call_' + n, name, arguments: JSON.stringify(args), status: 'completed' };
      }
      log('  -> tool', item.type, item.name);
    } else {
      const text = `Done. (${input.length} input items seen)`;
      item = { type: 'message', id: 'msg_' + n, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] };
      ev({ type: 'response.output_item.added', output_index: 0, item: { ...item, content: [] } });
      ev({ type: 'response.output_text.delta', output_index: 0, content_index: 0, item_id: item.id, delta: text });
      log('  -> text');
    }
    ev({ type: 'response.output_item.done', output_index: 0, item });
    ev({ type: 'response.completed', response: { id, usage: { input_tokens: 100, input_tokens_details: { cached_tokens: 0 }, output_tokens: 10, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 110 } } });
    res.end();
  }, Number(process.env.SLOW ?? 0)));
}).listen(Number(process.env.PORT ?? 18090), '127.0.0.1', () => log('listening'));
