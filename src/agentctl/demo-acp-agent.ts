/**
 * Berth's scripted demo agent speaking the Agent Client Protocol (`agentctl demo-acp-agent`), for
 * `npm run demo` and the tests: no model, no API key. On a prompt it streams a message; when the
 * prompt names a file ("write NOTES.md", or any word with an extension) it reports a tool call
 * (kind edit, with the diff), asks permission and, when allowed, writes the file through the
 * client's `fs/write_text_file` (a denial leaves it untouched); then it reports usage and ends the
 * turn (`end_turn`). A prompt containing "slow" streams until cancelled (`session/cancel` ends a
 * turn as `cancelled` at any step). BERTH_DEMO_STEP_MS sets the pause between steps (default
 * 1000 ms; tests use 0). With BERTH_DEMO_ACP_STATE (a directory) it keeps each conversation there
 * and can load it (`session/load` replays it; the next turn mentions the earlier ones).
 * @module
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk';
import { VERSION } from './version.js';

interface DemoSession {
  readonly cwd: string;
  cancelled: boolean;
  calls: number;
  /** The prompts of the turns so far. */
  readonly turns: string[];
}

/** Where the demo agent keeps its conversations (BERTH_DEMO_ACP_STATE), if anywhere. */
class DemoStore {
  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  }

  #file(id: string): string {
    if (!/^demo-[0-9a-f]+$/.test(id)) throw acp.RequestError.sessionNotFound(id);
    return join(this.dir, `${id}.json`);
  }

  save(id: string, s: DemoSession): void {
    writeFileSync(this.#file(id), JSON.stringify({ cwd: s.cwd, turns: s.turns }), { mode: 0o600 });
  }

  load(id: string): { cwd: string; turns: string[] } {
    try {
      return JSON.parse(readFileSync(this.#file(id), 'utf8')) as { cwd: string; turns: string[] };
    } catch {
      throw acp.RequestError.sessionNotFound(id);
    }
  }
}

/** How long a "slow" turn streams before it ends by itself. */
const SLOW_TURN_STEPS = 600;

/** The file a prompt asks to write, if any. */
export function fileToWrite(text: string): string | null {
  const verb = /\b(?:write|create|edit|update)\s+([\w./-]+)/i.exec(text);
  if (verb?.[1] !== undefined && /\w\.\w/.test(verb[1])) return verb[1];
  const named = /(?:^|\s)([\w/-]+\.[A-Za-z0-9]{1,8})\b/.exec(text);
  return named?.[1] ?? null;
}

function textOf(prompt: readonly acp.ContentBlock[]): string {
  return prompt.map((b) => (b.type === 'text' ? b.text : '')).join(' ').trim();
}

export async function runDemoAcpAgent(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const stepMs = Number.parseInt(env.BERTH_DEMO_STEP_MS ?? '1000', 10);
  const pause = (): Promise<void> => new Promise((r) => setTimeout(r, Number.isFinite(stepMs) && stepMs >= 0 ? stepMs : 1000));
  const sessions = new Map<string, DemoSession>();
  const session = (id: string): DemoSession => {
    const s = sessions.get(id);
    if (s === undefined) throw acp.RequestError.sessionNotFound(id);
    return s;
  };
  process.on('SIGTERM', () => process.exit(0));
  const stateDir = env.BERTH_DEMO_ACP_STATE;
  const store = stateDir !== undefined && stateDir !== '' ? new DemoStore(stateDir) : null;

  const app = acp
    .agent({ name: 'berth-demo-acp-agent' })
    .onRequest(acp.methods.agent.initialize, () => ({
      protocolVersion: acp.PROTOCOL_VERSION,
      agentCapabilities: { loadSession: store !== null },
      agentInfo: { name: 'berth-demo-acp-agent', version: VERSION },
      authMethods: [],
    }))
    .onRequest(acp.methods.agent.session.new, ({ params }) => {
      const sessionId = `demo-${randomBytes(6).toString('hex')}`;
      const created: DemoSession = { cwd: params.cwd, cancelled: false, calls: 0, turns: [] };
      sessions.set(sessionId, created);
      store?.save(sessionId, created);
      return { sessionId };
    })
    .onRequest(acp.methods.agent.session.load, async ({ params, client }) => {
      if (store === null) throw acp.RequestError.methodNotFound(acp.methods.agent.session.load);
      const saved = store.load(params.sessionId);
      const say = (update: acp.SessionUpdate): Promise<void> => client.notify(acp.methods.client.session.update, { sessionId: params.sessionId, update });
      for (const turn of saved.turns) {
        await say({ sessionUpdate: 'user_message_chunk', content: { type: 'text', text: turn } });
        await say({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: `Looked at: ${turn}\n` } });
      }
      sessions.set(params.sessionId, { cwd: params.cwd, cancelled: false, calls: 0, turns: [...saved.turns] });
      return {};
    })
    .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
      const s = sessions.get(params.sessionId);
      if (s !== undefined) s.cancelled = true;
    })
    .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
      const s = session(params.sessionId);
      s.cancelled = false;
      const text = textOf(params.prompt);
      const earlier = s.turns.length;
      s.turns.push(text);
      store?.save(params.sessionId, s);
      return runTurn(client, params.sessionId, s, text, earlier, pause);
    });
  const stream = acp.ndJsonStream(Writable.toWeb(process.stdout) as WritableStream<Uint8Array>, Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>);
  const conn = app.connect(stream);
  // stdout is the protocol: diagnostics go to stderr (recorded as the process's output)
  process.stderr.write(`demo ACP agent ${VERSION} ready (pid ${process.pid})\n`);
  await conn.closed;
  process.exit(0);
}

type Pause = () => Promise<void>;

async function runTurn(client: acp.AgentContext, sessionId: string, s: DemoSession, text: string, earlier: number, pause: Pause): Promise<acp.PromptResponse> {
  const say = (update: acp.SessionUpdate): Promise<void> => client.notify(acp.methods.client.session.update, { sessionId, update });
  const message = (t: string): Promise<void> => say({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: t } });
  const cancelled = { stopReason: 'cancelled' } as const;

  await message(`Looking at: ${text}\n`);
  if (earlier > 0) await message(`This conversation had ${earlier} earlier turn(s); the first was: ${s.turns[0] ?? ''}\n`);
  await pause();
  if (/\bslow\b/i.test(text)) {
    for (let i = 0; i < SLOW_TURN_STEPS && !s.cancelled; i++) {
      await message('.');
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  if (s.cancelled) return cancelled;

  const file = fileToWrite(text);
  if (file !== null) {
    const path = isAbsolute(file) ? file : join(s.cwd, file);
    const oldText = await client.request(acp.methods.client.fs.readTextFile, { sessionId, path }).then(
      (r) => r.content,
      () => null,
    );
    const newText = `${oldText ?? `# ${file}\n`}\nWritten by Berth's demo ACP agent for: ${text}\n`;
    const toolCallId = `call-${++s.calls}`;
    const content: acp.ToolCallContent[] = [{ type: 'diff', path, oldText, newText }];
    const title = `Write ${file}`;
    await say({ sessionUpdate: 'tool_call', toolCallId, title, kind: 'edit', status: 'pending', content, locations: [{ path }] });
    const options: acp.PermissionOption[] = [
      { optionId: 'allow', name: 'Allow', kind: 'allow_once' },
      { optionId: 'allow-always', name: 'Allow all edits', kind: 'allow_always' },
      { optionId: 'reject', name: 'Deny', kind: 'reject_once' },
    ];
    const toolCall: acp.ToolCallUpdate = { toolCallId, title, kind: 'edit', status: 'pending', content, locations: [{ path }] };
    const answer: acp.RequestPermissionResponse = await client.request(acp.methods.client.session.requestPermission, { sessionId, toolCall, options });
    if (answer.outcome.outcome === 'cancelled' || s.cancelled) {
      await say({ sessionUpdate: 'tool_call_update', toolCallId, status: 'failed' });
      return cancelled;
    }
    if (answer.outcome.optionId.startsWith('allow')) {
      const written = await client.request(acp.methods.client.fs.writeTextFile, { sessionId, path, content: newText }).then(
        () => null,
        (err: unknown) => (err instanceof Error ? err.message : String(err)),
      );
      await say({ sessionUpdate: 'tool_call_update', toolCallId, status: written === null ? 'completed' : 'failed' });
      await message(written === null ? `Wrote ${file}.\n` : `Could not write ${file}: ${written}\n`);
    } else {
      await say({ sessionUpdate: 'tool_call_update', toolCallId, status: 'failed' });
      await message(`Permission denied: left ${file} untouched.\n`);
    }
    await pause();
  }
  if (s.cancelled) return cancelled;
  const inputTokens = text.length;
  const outputTokens = 42;
  await say({ sessionUpdate: 'usage_update', used: inputTokens + outputTokens, size: 200_000 });
  await message('Done.\n');
  // `usage` is in ACP's unstable schema only; the client reads it when present
  return { stopReason: 'end_turn', usage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens } } as acp.PromptResponse;
}
